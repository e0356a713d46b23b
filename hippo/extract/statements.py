"""Statements: which units of a conversation's prose are durable, and what type each is.

The default extractor's unit of learning is the statement, whatever its wording: what the
person says about the project (purpose, stack, constraints, conventions, preferences, plans),
what the agent explains (what it found and why, what it changed and why, how something works,
a command and what it is for, what remains). Kept out: narration of intent ("Let me ...",
"Now I'll ..."), status chatter ("All green", "tests pass"), questions, pleasantries,
conditionals, change-log lines that only list an edit (git holds those), and anything too
short to read alone.

Selection is a score over features of structure, never of a project's vocabulary: who said
it (the person; the agent at the end of its turn; the agent in the middle of a turn, between
tool calls, where most prose is narration), its form (declarative, imperative, fragment),
whether it names something (code, an identifier, a path, a number, a proper name), whether
it gives a reason, whether the person's next words accept it, and where it stands (a list
item, under a heading). Weights and threshold were chosen against what Claude Code's
compaction summaries kept of the conversations they summarise (`bench/selector.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hippo.extract.changelog import CHANGE, edit_only, read_out
from hippo.extract.cues import POLICY
from hippo.extract.units import POINTS_BACK, Unit

THRESHOLD = 0.6
MIN_WORDS = 3
SHORT_WORDS = 5  # a statement this short must name something or carry a cue
_I = re.IGNORECASE

#: Weights of the score (see the module docstring; `bench/selector.py` checks them).
WEIGHTS = {
    "user": 0.45, "final": 0.3, "midturn": 0.2,
    "anchor": 0.25, "named": 0.1, "verb": 0.15, "cue": 0.15, "reason": 0.15,
    "list": 0.1, "accepted": 0.1, "transient": -0.25, "report": -0.3, "fragment": -0.1,
}

_NARRATION = re.compile(
    r"^(?:let me|let's (?:check|see|look|start|run|try|read|verify|first|also|now|do|go|get"
    r"|write|add|fix|update|create|make|implement|apply|mark|close|commit|wait)|now,? (?:let"
    r" me|let's|i'll|i will|i need|i can|i have|we|i'm)|i'll|i will|i'm going to|i am going to"
    r"|i need to|i'm now|(?:i'm|i am) (?:now |still |also |just |first )?[a-z]+ing"
    r"|next,? (?:i|let me)|first,? (?:let me|i'll|i need)|starting (?:with|by)|time to"
    r"|looking at|checking|reading|searching|exploring|investigating"
    r"|(?:ok(?:ay)?|good|great|perfect|alright|right)[,.!—–-]* (?:let me|now|i'll|next))\b", _I)
_NOW_DO = re.compile(r"^(?:(?:now|next|then|also|first|finally|just|continuing with [^,—–]+)"
                     r"[,:—–]?\s+)+(?:i\s+)?(\w+)", _I)
# What makes an instruction standing rather than this session's request.
_STANDING = re.compile(r"\b(?:all|every\w*|always|never|each|any|only|whenever|instead|rather"
                       r"|not|don't|do not|no|avoid|prefer\w*|default|from now on|going forward"
                       r"|throughout|in general)\b", _I)
# Verbs a person asks for this session's work with ("Suggest changes to X", "Reorder the
# lists"), beyond the verbs an instruction starts with (`cues.IMPERATIVE`).
_ASK = """
suggest propose reorder recommend simplify optimize optimise clarify convert replace change
modify adjust translate help find tell figure polish tidy rework redo expand shorten reword
rephrase extend enhance introduce setup integrate debug diagnose reproduce research compare
evaluate assess audit inspect plan draft design prepare organize organise restructure reduce
increase"""
_ASK_VERBS = frozenset(_ASK.split())
# Where the work is, said before the request: "In X, reorder the lists".
_WHERE_FIRST = re.compile(r"^(?:in|for|on|inside|within)\s+[^,]{1,60}?\s*,\s*", _I)
_ASK_LEAD = re.compile(r"^(?:further|now|kindly|again|first)\s+", _I)
# A place or a thing and no statement: "In CONVENTIONS.md", "For the api".
_PLACE_ONLY = re.compile(r"^(?:in|for|on|inside|within|about|regarding|re)\b", _I)
_OWN_INTENT = re.compile(r"^(?:i'll|i will|let me|i'm going to|i have (?:the|all|full|read|now)"
                         r"|i've (?:reviewed|read|checked|looked|seen|gone))\b"
                         r"|^(?:the|my|our) (?:approach|plan|changes?|idea|next step) (?:will|would)\b",
                         _I)
# A line of code that opens a block; code written as prose: brackets, semicolons and
# arrows outside code spans.
_OPENS = re.compile(r"[{(\[]\s*$")
_CODE_CHARS = re.compile(r"[{}]|;(?!\s)|=>|\)\s*:")
# Intent anywhere in the agent's sentence ("Since X, I'll test that ..."), or the edit it is
# about to make, in the passive ("The `// TODO` comment will be removed").
_INTENT = re.compile(r"\b(?:i'll|i will|let me|i'm going to|i need to|let's)\b"
                     r"|,[\"”']?\s*(?:i'm|i am) (?:now |still |also |just |first )?[a-z]+ing\b"
                     r"|^(?:hi!?\s*)?(?:i'm|i am) (?:ready|happy|glad) to help\b|\bwill be (?:added"
                     r"|removed|deleted|updated|changed|moved|renamed|replaced|created|modified"
                     r"|inserted|edited|rewritten|adjusted)\b", _I)
_CHATTER = re.compile(
    r"^(?:good|great|perfect|excellent|nice|done|noted|got it|ready when you are|sure|yes"
    r"|no(?=\s*[,.!:—–-])|ok|okay|thanks|thank you|all green|all done|clean compile|still|almost|expected"
    r"|right|correct|hmm+|oh|wait|understood|agreed|interesting|exactly|indeed|cool"
    r"|and|also|but|so|then|btw|anyway|actually)\b(?:\s*[,.!:—–-]+\s*|\s+(?=\S)|$)", _I)
_STATUS = re.compile(
    r"\b\d+ (?:new )?(?:tests?|doctests?|specs?|failures?|passed|errors?|warnings?)\b"
    r"|\b(?:is|are) (?:clean|green|passing)\.?$|\beverything (?:compiles|passes|works)\b"
    r"|\b(?:tests?|suite|build|credo|lint|compile|compilation|checks?)\s+(?:is |are )?"
    r"(?:pass(?:es|ed|ing)?|green|clean|ok|succeed(?:s|ed)?)\b|\bworking tree clean\b"
    r"|^(?:pushed|committed|merged|compiled|closed|claimed|done)\b"
    r"|^all (?:\d+|the) (?:\w+ ){1,3}(?:are|were) (?:closed|done|complete|completed|finished)\b", _I)
_PASSING = re.compile(r"\ball (?:\w+ ){0,2}(?:passing|pass|green)\b(?!.*\bbut\b)|\b0 failures\b", _I)
# A name and its state, nothing more: "X done and pushed", "All 3 subtasks closed", "Y is
# ready", "Z compiles clean". True for a minute; the tracker and git hold it.
_STATE_ONLY = re.compile(
    r"^(?:\S+\s+){0,4}?(?:(?:is|are|was|were|now|all|also)\s+)*(?:done|pushed|closed|merged"
    r"|ready|clean|complete|completed|finished|green|resolved|committed|compiles(?: clean)?"
    r"|passes|passing)(?:\s*(?:,|and)\s+(?:pushed|closed|committed|merged|done|clean))*[.!]?$", _I)
_SUCCEEDED = re.compile(r"\b(?:completed|finished|succeeded|ran) successfully\b", _I)
STATE_WORDS = 8
# A word that reads as a verb but is the subject of a declarative ("Default port is 1100").
_DECLARES = re.compile(r"^\S+(?: \S+){0,2} (?:is|are|was|were|has|have)\b", _I)
# What the agent tells itself between tool calls: its next step ("Close X, commit, and move
# on", "Need to update Y", "I should do the same for Z") or the state mid-edit ("Now X is
# unused").
_SELF_STEP = re.compile(r"^(?:now|needs? to|(?:i|we) (?:should|need|must|still need))\b", _I)
# A guess while the agent is still looking ("the fixture may not contain X"): the next call
# confirms or refutes it, and what it found is said then.
_HEDGE = re.compile(r"\b(?:may|might|probably|possibly|perhaps|likely|seems? to|appears? to"
                    r"|i (?:think|suspect|guess))\b", _I)
_TRANSIENT = re.compile(
    r"\b(?:(?:does(?:n't| not)|do(?:n't| not)) exist yet|not yet|still (?:compiling|running"
    r"|waiting|building|loading|failing)|for now|at the moment|right now|first[- ]time"
    r"|(?:is|are) (?:now )?(?:running|compiling|done)|stale|almost done|in a moment"
    r"|(?:is|are) now (?:un)?blocked)\b", _I)
# The agent asking the person for something now ("Please add `X` to the chat", "Please
# share the full traceback"): this turn's exchange, not the project's.
_ASKS_PERSON = re.compile(r"^(?:please|could you|can you|would you)\s+(?:\w+\s+)?(?:add|share"
                          r"|provide|paste|send|upload|attach|confirm|tell me|let me know"
                          r"|run\b.*\b(?:and|then)\s+(?:share|paste|send|tell))\b", _I)
# True of this session only, in any unit: "the tools available in this session", "not
# exposed in this conversation" (a cue, "we decided in this session to ...", still counts).
_THIS_SESSION = re.compile(r"\bin this (?:session|conversation|chat|thread)\b", _I)
_REPORT = re.compile(r"^(?:i(?:'ve| have)?|we(?:'ve| have)?)\s+(?:(?:just|also|now|further|already"
                     r"|since)\s+)?"
                     r"(?:added|updated|changed|created|removed|fixed|wrote|written|implemented"
                     r"|made|moved|renamed|replaced|refactored|extracted|ran|run|applied|edited"
                     r"|deleted|installed|committed|pushed|closed|marked)\b", _I)
_CHANGELOG = re.compile(rf"^{CHANGE}\b", _I)
_REASON = re.compile(r"\b(?:because|since|so that|so|which|means|instead of|rather than"
                     r"|caused by|due to|otherwise|in order to|to avoid|to prevent|—|–)\b"
                     r"|\s[—–]\s|:\s", _I)
_QUESTION = re.compile(r"\?\s*$|^(?:what|why|how|which|where|when|who|should we|can we|could"
                       r"|would|do we|did|does|is there|are there|shall)\b[^.]*$"
                       r"|^(?:can|could|would|will) you\b", _I)
_CONDITIONAL = re.compile(r"^(?:if|unless|in case|whether|maybe|perhaps)\b", _I)
_ANCHOR = re.compile(
    r"`[^`]+`|\b\w+[/.]\w+|\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*"
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\d|(?:^|\s)--?[a-z][\w-]+|@[\w/-]+")
_NAMED = re.compile(r"(?<=[\w,;:(] )(?:[A-Z][\w.+#-]*[A-Za-z0-9]|[A-Z]{2,})\b")
_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|doesn't|don't|didn't|isn't|aren't"
    r"|wasn't|can|can't|cannot|must|should|shouldn't|will|won't|would|need|needs|needed"
    r"|uses?|used|using|runs?|returns?|calls?|takes?|makes?|gives?|keeps?|stores?|reads?"
    r"|writes?|means|requires?|supports?|handles?|converts?|groups?|proxies|renders?|lives?"
    r"|goes|go|shows?|sets?|gets?|works?|fails?|failed|breaks?|broke|lands?|owns?|holds?"
    r"|points?|expects?|accepts?|generates?|creates?|produces?|fetches?|loads?|saves?|sends?"
    r"|depends?|allows?|prevents?|avoids?|deduplicates?|reuses?|shares?|happen(?:s|ed)?"
    r"|became|becomes|wants?|prefers?|like|likes|hate|[a-z]{3,}(?:ed|es))\b"
    # any verb after a pronoun subject: "It backs both", "which covers the rest"
    r"|\b(?:it|which|that|who|he|she)\s+(?:(?:also|only|now|just|still|always|never)\s+)?"
    r"[a-z]{2,}[^s\W]s\b"
    # and any word after "we", "they", "you": "We deploy with Docker Compose"
    r"|\b(?:we|they|you)\s+(?:(?:also|only|now|just|still|always|never|usually|mostly"
    r"|currently)\s+)?(?!(?:all|both|guys|two|three|with|for|and|the|from|about|too|here"
    r"|there|that|this|what|which|how|when|where|who|into|over|after|before)\b)[a-z]{3,}\b", _I)
# Work left, however it is said ("still need to", "next session", "not yet done").
_LEFT = r"still (?:need|to)|next (?:session|time|sprint)|not (?:yet )?(?:done|implemented|started)"
_PENDING = re.compile(rf"(?-i:\bTODO\b)|\b(?:pending|to do|remaining|next steps?|left to do"
                      rf"|follow[- ]up|{_LEFT})\b", _I)
# In a statement's own words, "pending" is work left only where it leads or is predicated
# ("Pending: X", "X is still pending"), not as a value ("states: pending, paid, shipped").
_PENDING_SAID = re.compile(rf"(?-i:\bTODO\b)|^\W*(?:pending|remaining|to do|next steps?|left to do"
                           rf"|follow[- ]ups?)\b|\b(?:is|are|still|remains?) (?:pending|to do)\b"
                           rf"|\b(?:{_LEFT})\b", _I)
_CAUSE = re.compile(r"\b(?:bug|error|fail\w*|broke\w*|wrong|issue|problem|crash\w*|cause[sd]?"
                    r"|because|doesn't support|does not support|can't|cannot|missing|trap"
                    r"|instead of)\b", _I)
_CONFIG = re.compile(r"(?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}\b)|(?:^|\s)--[a-z][\w-]+|\bport\b"
                     r"|`[\w.-]+\s*[:=]\s*[^`]+`", _I)
_COMMAND = re.compile(r"\b(?:run|use|call|invoke|execute|start)s?\b[^`]{0,40}`[^`]+ [^`]+`", _I)
# What makes a failure's mention a cause: a causal connective, or a fix.
_CAUSAL = re.compile(r"\b(?:because|since|caused|due to|so that|which means|root cause|the "
                     r"(?:problem|issue|bug|reason)|fix(?:ed|es)?|otherwise|instead of)\b", _I)
_POINTS_BACK = re.compile(POINTS_BACK, _I)
# "This is a TypeScript monorepo …", "It's an analytics dashboard …": a pronoun that
# introduces what the sentence itself says (the project, usually).
_INTRODUCES = re.compile(r"^(?:this|it)(?: is|'s) (?:a|an)\b", _I)
_WORD = re.compile(r"\w+")
_SO = re.compile(r"\bso (?:i|we|you) (?:don't|do not|no longer|won't|never)\b", _I)
# Code spans, paths and parentheticals: what a statement names, not what it says.
_NAMES = re.compile(r"`[^`]*`|\([^()]*\)|\S*[/\\]\S*|\d+")


@dataclass(frozen=True, slots=True)
class Where:
    """Where a unit was said: by whom, and how the turn around it went."""

    role: str  # user | assistant
    midturn: bool = False  # the agent's prose between tool calls of one turn
    accepted: bool = False  # the person's next words accept it ("That fixed it", "Good")


_LEAD_ADVERBS = frozenset({"please", "just", "always", "never", "dont", "do", "not", "also",
                           "only", "still", "then"})


def imperative(text: str, verbs: frozenset[str]) -> bool:
    """An instruction: it starts with a verb ("Use X", "Never commit to main")."""
    return _first_verb(text) in verbs


def _first_verb(text: str) -> str:
    """The word an instruction starts with, after its lead adverbs ("" for none; a name in
    code, "`mount/3` never calls …", is no verb)."""
    words = _WORD.findall(re.sub(r"`[^`]*`", " codespan ", text).lower().replace("'", ""))
    while words and words[0] in _LEAD_ADVERBS:
        words = words[1:]
    return words[0] if words else ""


def strip_chatter(text: str) -> str:
    """The statement after leading acknowledgements ("Yes — use X" -> "use X")."""
    while True:
        m = _CHATTER.match(text)
        if not m or not m.group(0):
            return text
        text = text[m.end():]


def _said_nothing(u: Unit, text: str, words: list[str], cue: bool, anchor: bool) -> bool:
    """Not a statement by its form: an intro line, a bare pronoun subject, too short, a
    question or conditional, code, status chatter, a bare change-log line."""
    return (text.endswith(":")  # an intro to what follows (a list or code)
            or (u.kind == "sentence" and bool(_POINTS_BACK.match(text))  # "That's …"
                and not _INTRODUCES.match(text))
            or len(words) < MIN_WORDS or bool(_QUESTION.search(text))
            or bool(_CONDITIONAL.match(text))
            or (len(words) < SHORT_WORDS and not (cue or anchor))
            or len(_CODE_CHARS.findall(_NAMES.sub(" ", text))) >= 3  # code, not prose
            or bool(_OPENS.search(text))  # a line of code that opens a block
            or (bool(_STATUS.search(text)) and (len(words) < 12 or bool(_PASSING.search(text))))
            or (u.kind != "list" and bool(_CHANGELOG.match(text)) and len(words) < 7)
            or (u.kind == "sentence" and len(words) < SHORT_WORDS and not cue
                and bool(_PLACE_ONLY.match(text)) and not _VERB.search(text))
            or edit_only(text) or read_out(text, u.heading)
            or (len(words) < STATE_WORDS and bool(_STATE_ONLY.search(text)))
            or bool(_SUCCEEDED.search(text))
            # it names things but says nothing of them (a list of paths); a line of code
            # says what it does in its comment's words
            or (u.kind != "code" and len(_WORD.findall(_NAMES.sub(" ", text))) < MIN_WORDS))


def _asks_work(text: str, verbs: frozenset[str]) -> bool:
    """The person asks for work ("Suggest changes to my X", "In X, reorder the lists",
    "Further improve X")."""
    return imperative(_ASK_LEAD.sub("", _WHERE_FIRST.sub("", text)), verbs | _ASK_VERBS)


def _intent(text: str, where: Where, verbs: frozenset[str]) -> bool:
    """Narration of what someone is about to do, not of what is."""
    if _OWN_INTENT.match(text):
        return True
    if where.role != "assistant":
        return False
    if where.midturn and (_SELF_STEP.match(text) or _HEDGE.search(text) or (
            imperative(text, verbs) and not _DECLARES.match(text))):
        return True
    m = _NOW_DO.match(text)
    return bool(_NARRATION.match(text) or (m and m.group(1).lower() in verbs)
                or _INTENT.search(text) or text.startswith("Continuing")
                or _ASKS_PERSON.match(text))


def features(u: Unit, where: Where, verbs: frozenset[str], cue: bool) -> dict[str, bool] | None:
    """The unit's features, or None when it is not a statement at all."""
    if u.kind == "code" and (where.role != "assistant" or where.midturn):
        return None  # the agent's explained line of code is what it tells at a turn's end
    text = strip_chatter(u.text.replace("\u2019", "'")).strip()
    words = _WORD.findall(text)
    anchor = bool(_ANCHOR.search(text))
    # the person's short statement naming a thing ("Payments go through Stripe") is one
    named = where.role == "user" and bool(_NAMED.search(text))
    if (_said_nothing(u, text, words, cue, anchor or named) or _intent(text, where, verbs)
            or (not cue and _THIS_SESSION.search(text))):
        return None
    order = imperative(text, verbs) or (where.role == "user" and _asks_work(text, verbs))
    if (where.role == "user" and order and not cue and not _STANDING.search(text)
            and not _REASON.search(text) and _first_verb(text) not in POLICY):
        # a request of this session ("Create hello.md"), not a standing one ("Store refresh
        # tokens in an httpOnly cookie": a verb of how things are done)
        return None
    # The person's choice without a verb ("Functional components only — no class ones")
    verb = bool(_VERB.search(text)) or order or (where.role == "user" and _chooses(text))
    return {
        "user": where.role == "user",
        "final": where.role == "assistant" and not where.midturn,
        "midturn": where.role == "assistant" and where.midturn,
        "anchor": anchor,
        "named": not anchor and bool(_NAMED.search(text)),
        "verb": verb,
        "cue": cue,
        "reason": bool(_REASON.search(text)),
        "list": u.kind != "sentence",
        "accepted": where.accepted,
        "transient": bool(_TRANSIENT.search(text)) and u.kind == "sentence",
        "report": bool(_REPORT.match(text)) and not _REASON.search(text),
        "fragment": not verb and not cue and u.kind == "sentence",
    }


def score(feats: dict[str, bool]) -> float:
    return round(sum(WEIGHTS[k] for k, on in feats.items() if on), 3)


# A choice, said without a verb: one thing only, or one and not another.
_CHOICE = re.compile(r"\bonly\b|(?:^|[,;:—–-]\s*)(?:no|not)\s+\w|\binstead of\b|\brather than\b",
                     _I)


def _chooses(text: str) -> bool:
    return _CHOICE.search(text) is not None


def typed(u: Unit, where: Where, verbs: frozenset[str]) -> str:
    """A statement's type by its structure (when no cue phrase gave one)."""
    text = strip_chatter(u.text)
    if u.kind == "code":  # a line of code and what it does
        return "config" if _CONFIG.search(text.split(": `", 1)[0]) else "tool"
    if _PENDING.search(u.heading) or _PENDING_SAID.search(text[:40]):
        return "task"
    if u.joined > 1 and _SO.search(text):
        return "insight"  # "X does Y. So I don't need Z": a finding and what follows
    if u.fix or (_CAUSE.search(text) and _CAUSAL.search(text) and where.role == "assistant"):
        return "insight"
    if _COMMAND.search(text):
        return "tool"
    if _CONFIG.search(text):
        return "config"
    if imperative(text, verbs) or (where.role == "user" and not _VERB.search(text)
                                   and _chooses(text)):
        return "preference" if where.role == "user" else "decision"
    return "fact"


def text_of(u: Unit) -> str:
    text = strip_chatter(u.text).strip()
    first = text.split(" ", 1)[0]
    return text[0].upper() + text[1:] if first.isalpha() and first.islower() else text


#: Share of the shorter statement's content words the longer must hold to be its repeat.
REPEAT_CONTAINMENT = 0.75
_STOP_WORDS = """the and for with that this from into are was were has have had not but
its it's their there then than when what which who will would should could can does did
also just only all any each per via use used uses using been being more most some such"""
_STOP = frozenset(_STOP_WORDS.split())
_CONTENT = re.compile(r"[a-z0-9][a-z0-9_.:/-]{2,}")


def content_words(text: str) -> frozenset[str]:
    return frozenset(w.strip(".:/-") for w in _CONTENT.findall(text.lower())) - _STOP


def _named(words: frozenset[str]) -> frozenset[str]:
    """The words that name something exactly (a number, an identifier, a path)."""
    return frozenset(w for w in words if re.search(r"[\d_./:]", w))


def repeats(short: frozenset[str], long: frozenset[str]) -> bool:
    """`short` says again what `long` says: most of its words, and every name it has."""
    if len(short) < 4 or not _named(short) <= long:
        return False
    return len(short & long) >= REPEAT_CONTAINMENT * len(short)
