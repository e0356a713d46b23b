"""The cue table: phrasings that say what kind of statement a sentence is (a decision, a
rule, a preference, a task, a tool or config fact) and how strongly, with who may say each.

A cue no longer decides whether a sentence is kept (`hippo.extract.statements` does, by
structure); it types what is kept and sets its importance, and where it has one its own
statement is stored: a clause cut where the cue starts one ("Fix the import and make sure
to keep the API stable" -> "Make sure to keep the API stable"), or a template ("the config
lives in X" -> "The config is at X."). Questions and conditionals carry no cue.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MIN_WORDS = 3
MAX_CHARS = 400


def fit(text: str) -> str:
    """`text` within `MAX_CHARS`: cut after its last sentence or clause that fits (past the
    middle), else at a word, with " …"."""
    if len(text) <= MAX_CHARS:
        return text
    cut = text[:MAX_CHARS]
    stop = max(cut.rfind(". "), cut.rfind("; "))
    return cut[:stop + 1] if stop > MAX_CHARS // 2 else cut.rsplit(" ", 1)[0] + " …"


_I = re.IGNORECASE

USER = frozenset({"user"})
BOTH = frozenset({"user", "assistant"})

_PATH = (r"(`[^`\n]+`|(?:~|\.{1,2})?[/\\][\w.@~+-]+(?:[/\\][\w.@~+-]+)*"
         r"|[\w.@-]+(?:[/\\][\w.@+-]+)+|\.?[\w-]+\.(?:toml|ya?ml|json5?|jsonc|ini|cfg|conf|env"
         r"|rc|lock|mk|ts|js|mjs|cjs|py))")
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"


@dataclass(frozen=True, slots=True)
class Cue:
    """One family of phrasings: what it signals, how strongly, and who may say it."""

    name: str
    type: str
    importance: float
    roles: frozenset[str]
    pattern: re.Pattern[str]
    template: Callable[[re.Match[str]], str] | None = None  # rewrite instead of the sentence
    tags: tuple[str, ...] = ()
    cut: bool = True  # the cue may start a clause of its own (cut the text before it)
    accept: Callable[[str, re.Match[str]], bool] | None = None  # a further check of the hit


def _config_at(m: re.Match[str]) -> str:
    name, what = m.group("name"), m.group("what").lower()
    return f"The {name + ' ' if name else ''}{what} is at {m.group('path')}."


CUES: tuple[Cue, ...] = (
    # -- rules: standing instructions -------------------------------------------------
    Cue("standing", "rule", 0.9, USER, re.compile(
        r"\b(?:from now on|going forward|as a rule|(?:don't|do not|never),? ever"
        r"|in (?:the )?future,? (?:always|never|please|make sure|don't|do not))\b", _I)),
    # "always"/"never" as an instruction: "Always ...", "we should never ...", or anywhere in
    # an imperative sentence ("For lists, pad the marker so it is always 4 wide"), not in
    # "It is always fun" or "I've never seen that".
    Cue("always", "rule", 0.75, USER, re.compile(r"\b(?:always|never)\b(?!\s+\w+ing\b)", _I),
        accept=lambda s, m: _instruction(s, m)),
    Cue("ensure", "rule", 0.7, USER, re.compile(
        r"(?:(?<!\bto )(?<!\blet's )(?<!\bi'll )(?<!\bwe'll )(?<!\bi will )\bmake sure\b"
        r"|(?<!\bi'll )(?<!\bwe'll )(?<!\bi will )\bbe sure to\b|(?:^|[;:,]\s*|\band\s+)ensure\b"
        r"|\bremember to\b)", _I)),
    Cue("must", "rule", 0.65, USER, re.compile(
        r"\b(?:agents?|code|tests?|commits?|everything|prs?|builds?)\s+(?:must(?: not)?|mustn't"
        r"|should (?:always|never))\b|\b(?:we|you)\s+(?:must(?: not)?|mustn't|should (?:always"
        r"|never))\b(?!\s+(?:be|have|really|feel|love|enjoy|know|miss|think|see|try)\b)", _I)),
    # -- decisions ----------------------------------------------------------------------
    Cue("decided", "decision", 0.8, USER, re.compile(
        r"\b(?:(?:we|i|the team)\s+(?:have\s+|'ve\s+|had\s+|'d\s+)?(?:decided|agreed|settled on"
        r"|chose|opted)|decided to|the decision (?:is|was)|we(?:'re| are) going with"
        r"|(?:let's|we'll|we will|i'll) go with)\b|^decision:", _I)),
    Cue("we-decided", "decision", 0.75, frozenset({"assistant"}), re.compile(
        r"\b(?:we(?:'ve| have)? (?:decided|agreed|settled on)|the decision (?:is|was)"
        r"|we(?:'re| are) going with)\b|^decision:", _I)),
    Cue("switch", "decision", 0.7, USER, re.compile(
        r"\b(?:we|i)\s+(?:have\s+|'ve\s+)?(?:switched|moved|migrated)\s+(?:over\s+)?"
        r"(?:from\s+.+?\s+)?to\b|\bswitch(?:ing)? (?:over )?(?:from .+? )?to\b", _I)),
    Cue("use", "decision", 0.65, USER, re.compile(
        r"\b(?:we(?:'ll| will| should)|let's|let us|we(?:'re| are) going to)\s+(?:use|adopt"
        r"|stick with|keep using|standardi[sz]e on)\b|\buse\b.{1,80}\binstead of\b", _I)),
    Cue("lets-set", "decision", 0.55, USER, re.compile(
        r"\blet's\s+(?:update|change|set|make|rename|bump|pin|default)\b.{1,80}\bto\b", _I)),
    Cue("conclusion", "insight", 0.6, BOTH, re.compile(
        r"\b(?:the )?root cause (?:is|was)\b|\bthe (?:real )?fix (?:is|was) to\b", _I)),
    # What a session found out: "the problem was ...", "turns out ...", "fixed by ...".
    Cue("finding", "insight", 0.6, BOTH, re.compile(
        r"\bthe (?:real |actual |underlying )?(?:problem|issue|cause|culprit|bug|reason|error)"
        r" (?:is|was|here is)\b|\bturns out\b|\b(?:fixed|solved|resolved) (?:it |this )?by\b"
        r"|\b(?:was|is|were|are) caused by\b|\b(?:happens|happened|fails|failed|broke)"
        r" because\b|\b(?:doesn't|does not|isn't|is not|aren't|don't) actually\b", _I),
        accept=lambda s, m: _finding(s)),
    # "The default port is 1100": a default stated with its value.
    Cue("default", "config", 0.5, BOTH, re.compile(
        r"\b(?:the )?default (?:[\w-]+ ){0,3}(?:is|was|are)\s+(?=\S*(?:\d|`))", _I),
        accept=lambda s, m: _finding(s)),
    # -- preferences --------------------------------------------------------------------
    Cue("prefer", "preference", 0.65, USER, re.compile(
        r"\bi(?:'d| would)? (?:really |much |strongly )?(?:prefer|rather)\b|\bmy preference\b"
        r"|^prefer\b|\bi (?:really )?(?:like|love|hate|dislike|don't like|do not like)"
        r"(?! (?:it|this|that|them)\b)\b", _I)),
    Cue("please-use", "preference", 0.6, USER, re.compile(
        r"\bplease (?:always |never |don't |do not )?(?:use|avoid|prefer|stick to|stick with"
        r"|keep using)\b", _I)),
    # -- tasks and todos ----------------------------------------------------------------
    Cue("remind", "todo", 0.75, USER, re.compile(r"\bremind me\b(?! of\b)", _I),
        tags=("reminder",), accept=lambda s, m: _asked(s, m)),
    # "TODO: x" or a sentence starting with TODO, not "build a TODO app".
    Cue("todo", "todo", 0.6, USER, re.compile(r"^TODO\b|\bTODO\s*[:(-]|(?i:\bto-?do:)"),
        cut=False),
    Cue("deadline", "task", 0.75, USER, re.compile(
        rf"\bby (?:(?:next |this )?(?:{_DAY}|week|month)|tomorrow|tonight|eod|eow|end of "
        rf"(?:the )?(?:day|week|month|sprint|quarter)|\d{{4}}-\d{{2}}-\d{{2}}|{_MONTH} \d{{1,2}}"
        rf"(?:st|nd|rd|th)?)\b|\bdeadline\b|\bdue (?:on |by )?(?:{_DAY}|tomorrow|next"
        rf"|\d{{4}}-\d{{2}}-\d{{2}})\b", _I), tags=("deadline",), cut=False),
    Cue("next-step", "task", 0.6, USER, re.compile(
        r"\bnext steps?\b|\b(?:we|i) still (?:need|have) to\b|\bwe(?:'ll)? (?:need|have) to\b"
        r"|\bdon't forget to\b|\b(?:later|afterwards|at some point|eventually),? (?:we|i) "
        r"(?:should|need|have|must|will)\b|\bfollow[- ]up on\b|\bleft to do\b", _I)),
    # -- tool and config facts ----------------------------------------------------------
    Cue("config-at", "config", 0.6, USER, re.compile(
        r"\b(?:the|my|our)\s+(?:(?P<name>[\w.-]+)\s+)?"
        r"(?P<what>config(?:uration)?|settings|env file)(?:\s+files?)?"
        r"\s+(?:is\s+|are\s+|lives?\s+|sits?\s+|is\s+stored\s+)?(?:in|at|under|:)?"
        rf"\s*(?P<path>{_PATH})", _I), template=_config_at, cut=False),
    # "Run bd ready to find available work": how to do something, from the person.
    Cue("run-to", "tool", 0.55, USER, re.compile(
        r"^(?:please\s+)?(?:run|use)\s+[\w./-]+(?:\s+[\w./=-]+){0,4}\s+to\s+(?:see|find|get"
        r"|check|list|show|build|start|stop|update|run|make|create|test|lint|format|deploy)\b",
        _I), cut=False),
    Cue("command", "tool", 0.55, USER, re.compile(
        r"\b(?:run|call|invoke|execute)\s+`[^`\n]{2,}`|\b(?:use|try)\s+`[^`\n]* [^`\n]*`|\b(?:tests?|builds?|lint(?:ing)?"
        r"|deploy(?:ment|s)?|format(?:ting)?|releases?|migrations?|the (?:dev )?server)"
        r"\s+(?:is|are|runs?|with|via|using|:)\s+(?:with\s+|via\s+|using\s+)?`[^`\n]+`", _I)),
    Cue("env-var", "config", 0.55, USER, re.compile(
        r"(?i:\b(?:env(?:ironment)?\s+var(?:iable)?s?|export|set)\b).{0,80}?"
        r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b.{0,80}?"
        r"(?i:\benv(?:ironment)?\s+var(?:iable)?s?\b)"), cut=False),
    Cue("version", "config", 0.55, USER, re.compile(
        r"\b(?:we(?:'re| are) on|requires?|pinned? (?:to|at)|(?:up|down)grade(?:d)? to"
        r"|target(?:s|ing)?)\s+[A-Za-z][\w.+-]*\s+v?\d+(?:\.\d+){0,3}\b", _I), cut=False),
)

_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|well|hmm+|alright|also|and|but|btw|by the way|actually|oh|yeah|yes"
    r"|right|cool|great|thanks|thank you|fine|now|anyway|um+|uh+|hey|hi)\b[\s,.!:;-]*)+", _I)
_NOT_STATEMENT = re.compile(
    r"\b(?:if|whether|unless|in case|should we|do we|did we|can we|could we|would you|not sure"
    r"|wonder|maybe|perhaps)\b", _I)
# A clause of its own starts at the cue: after ';', ':' or 'and/but/then' with at most one
# word (a subject, 'please', 'also') in between.
_CLAUSE = re.compile(r"(?:[;:]|,?\s+(?:and|but|then)\b|,)\s+(?:(?:we|i|you|please|also)\s+)?$",
                     _I)
_LEAD = re.compile(r"^[\s,;:]*(?:(?:and|but|then)\b)?\s*", _I)
EMPHATIC = re.compile(r"!|\b[A-Z]{3,}\b|\b(?:important|critical|really|must)\b")
_WORD = re.compile(r"\w+")
_SUBJECT_BEFORE = re.compile(r"\b(?:we|should|must|please)\s*$", _I)
_ASKING = re.compile(r"\b(?:please|pls|can you|could you|would you)$", _I)
_INTRO = re.compile(r"^(?:(?:for|in|on|when|before|after|with|within|during|once|while)\b"
                    r"[^,]{0,80},\s*)?(?:please\s+)?(?:just\s+)?(?:also\s+)?", _I)
# Verbs an instruction starts with in coding sessions ("Use ...", "Pad ...", "Keep ...").
_VERBS = """
add amend annotate ask assume avoid be build bump bundle cache call capitalize catch check
cite clean close comment commit compile copy cover create declare default define delete
deploy deprecate disable do document dont drop edit emit enable end escape explain export
fetch fix follow force format generate give group handle hardcode ignore import include
indent inline install keep leave lint list lock log make mark merge mention migrate mock
move name open order pad pass patch pin place prefer prefix print push put quote raise read
rebase release remove rename reply reset respond retry return reuse revert review rewrite
rotate run save send set ship show skip sort split squash start stick stop store suffix tag
test throw touch treat trust try type update upgrade use validate verify wait wire wrap
write work implement continue finish tackle look investigate explore refactor improve
analyze analyse examine describe summarize summarise proceed resume go"""
# Verbs that say how things are done ("Hash passwords with bcrypt", "Never swallow errors",
# "Paginate every list endpoint"): an instruction that starts with one is a standing rule.
_POLICY_VERBS = """
use avoid prefer keep store validate log handle name format cache follow treat stick default
throw raise catch respond return wrap pin lock emit escape quote indent capitalize prefix
suffix sort order group mock trust ignore hardcode inline declare document deprecate disable
enable export import retry reuse rotate tag type wait put pad
hash encrypt decrypt sanitize paginate expose swallow mutate nest block share leak limit
throttle batch persist serialize deserialize normalize index inject require enforce restrict
allow deny reject accept seed version namespace scope guard assert monitor notify queue
schedule expire invalidate purge sign authenticate authorize redirect proxy route mount
register configure hide mask redact strip trim truncate parse encode decode compress
isolate centralize colocate memoize debounce pool reach prefetch preload await
annotate pass"""
POLICY = frozenset(_POLICY_VERBS.split())
IMPERATIVE = frozenset(_VERBS.split()) | POLICY


def _first_word(text: str) -> str:
    words = _WORD.findall(_INTRO.sub("", _FILLER.sub("", text)).lower().replace("'", ""))
    return words[0] if words else ""


def _instruction(sentence: str, m: re.Match[str]) -> bool:
    """An `always`/`never` that instructs: "Always <verb>", after "we" or a modal ("should
    never"), or anywhere in an imperative sentence ("Pad it so it is always 4 wide")."""
    before = _FILLER.sub("", sentence[: m.start()]).strip()
    if not before:
        return _first_word(sentence[m.end():]) in IMPERATIVE
    return bool(_SUBJECT_BEFORE.search(before)) or _first_word(sentence) in IMPERATIVE


ANSWER = re.compile(r'^Answer to "[^\n]{8,}": \S[^\n]{2,}$')
_NARRATION = re.compile(r"^(?:let me|let's|now (?:let me|i'll|i will)|i'll|i will|i need to"
                        r"|i'm going to|next,? i)\b", _I)


def _finding(sentence: str) -> bool:
    """A finding stated, not an intention ("Let me check whether the problem is ...")."""
    return not _NARRATION.match(_FILLER.sub("", sentence).strip())


def _asked(sentence: str, m: re.Match[str]) -> bool:
    """"Remind me to ..." as a request, not "these photos remind me of home"."""
    before = _FILLER.sub("", sentence[: m.start()]).strip()
    return not before or bool(_ASKING.search(before))


def _statement(sentence: str, match: re.Match[str], cue: Cue) -> str | None:
    """The text to store for a cue found in `sentence`, or None when it is not a statement."""
    if sentence.rstrip().endswith("?"):
        return None
    before = sentence[: match.start()]
    if _NOT_STATEMENT.search(before[-40:]):
        return None
    if cue.template is not None:
        return cue.template(match)
    text = sentence
    if cue.cut:
        m = _CLAUSE.search(before)
        # Cut only when the clause says something after its cue ("..., we decided to." does
        # not: its content is before the comma).
        if m and m.start() > 0 and len(_WORD.findall(sentence[match.end():])) >= MIN_WORDS:
            text = _LEAD.sub("", sentence[m.start():])
    text = _FILLER.sub("", text).strip().rstrip(":;,")
    if len(_WORD.findall(text)) < MIN_WORDS or len(text) > MAX_CHARS:
        return None
    return text[0].upper() + text[1:] if text[0].islower() else text


def scan(sentence: str, role: str) -> tuple[Cue, str] | None:
    """The strongest cue `role` may carry in `sentence`, with the statement to store."""
    best: tuple[Cue, str] | None = None
    for cue in CUES:
        if role not in cue.roles or (best and cue.importance <= best[0].importance):
            continue
        m = cue.pattern.search(sentence)
        if m is None or (cue.accept is not None and not cue.accept(sentence, m)):
            continue
        text = _statement(sentence, m, cue)
        if text is not None:
            best = (cue, text)
    return best
