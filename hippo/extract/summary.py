"""Statements from a compaction summary: an LLM's distillation of the session, already paid for.

A summary is read as sections of items. Section titles are matched loosely against the
sections Claude Code's compaction prompt asks for (and what other agents' summaries call
them), so a renamed or missing section changes what a bullet becomes, not whether the
summary is read:

| section (loosely)                          | becomes                                     |
|--------------------------------------------|---------------------------------------------|
| errors and fixes, problems solved          | `insight`: the problem and its fix in one   |
| key technical concepts, facts, config      | `fact` (`config` when it names an env var)  |
| files and code sections                    | `fact`: where a thing lives and what it does|
| pending tasks, (optional) next step        | `task`                                      |
| primary request, current work, analysis,   | nothing: the request, status and the        |
| all user messages                          | person's words are read from the turns      |
| anything else                              | `fact`, only items that name something      |

Each item becomes one statement that reads correctly out of context: a sub-item keeps its
parent's subject (`parent: child`), markdown emphasis is dropped, a code block is left out
(a one-line block is kept inline), status chatter (test counts, "claimed", "closed") is
skipped, and nothing is added that the summary does not say.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from hippo.extract.changelog import edit_only, read_out

MAX_CHARS = 320
MIN_WORDS = 4
_I = re.IGNORECASE

# (kind, title pattern); the first that matches wins.
SECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("skip", re.compile(r"\b(?:user messages?|user'?s? (?:messages|feedback)|primary request"
                        r"|intent|current (?:work|state|status)|analysis|context)\b", _I)),
    ("next", re.compile(r"\bnext steps?\b", _I)),
    ("pending", re.compile(r"\b(?:pending|remaining|open|outstanding)\b.*\b(?:tasks?|work|items?"
                           r"|issues?|todos?)\b|\btodos?\b|\bstill to do\b", _I)),
    ("errors", re.compile(r"\b(?:errors?|fix(?:es|ed)?|bugs?|issues?|problems?|troubleshoot"
                          r"\w*|pitfalls?|gotchas?|lessons?)\b", _I)),
    ("files", re.compile(r"\b(?:files?|code (?:sections?|changes?)|changes? made|modules?"
                         r"|where things (?:live|are))\b", _I)),
    ("concepts", re.compile(r"\b(?:concepts?|technolog\w*|frameworks?|facts?|decisions?"
                            r"|architecture|design|config\w*|conventions?|environment)\b", _I)),
)
TYPES = {"errors": "insight", "files": "fact", "concepts": "fact", "other": "fact",
         "pending": "task", "next": "task"}
# Sections whose items stand as they are said: a problem and its fix ("Added X to Y" is the
# fix), a task. Elsewhere a bare change-log line or a region read by its lines is left out.
_OWN_LINES = ("errors", "pending", "next")
IMPORTANCE = {"errors": 0.6, "files": 0.5, "concepts": 0.5, "other": 0.45, "pending": 0.5,
              "next": 0.45}

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,2}[.)])\s+(.*)$")
# "4. Errors and fixes:", "## Pending Tasks", "**Key Technical Concepts**:", "Summary:".
_TITLE = re.compile(
    r"^\s{0,2}(?:#{1,6}\s*(?P<h>[^\n]+?)\s*:?|\*\*(?P<b>[^*\n]{2,80})\*\*:?|(?:\d{1,2}[.)]\s+)?(?:\*\*)?(?P<t>[A-Z][\w ()/&,'-]"
    r"{1,60}?)(?:\*\*)?:(?:\*\*)?)\s*$")
_TAG = re.compile(r"^\s*</?(analysis|summary)>\s*$", _I)
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_WORD = re.compile(r"\w+")
# An item that names something: code, a path, an identifier, an env var, a number.
_ANCHOR = re.compile(r"`[^`]+`|\b\w+[/.]\w+|\b[a-z]+_[a-z_]+\b|\b[A-Z][a-z]+[A-Z]\w*|"
                     r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\d")
_LEADING_CODE = re.compile(r"^`[^`]+`")
_PAREN = re.compile(r"\s*\([^()]*\)")
_VERB = re.compile(r"\b(?:is|are|was|were|must|should|can(?:not|'t)?|does(?:n't| not)|don't"
                   r"|needs?|requires?|required|uses?|used|returns?|runs?|has|have|means"
                   r"|prefers?|avoids?|only|never|always)\b", _I)
_ENV = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}\b")
# Progress reports, not knowledge.
_CHATTER = re.compile(
    r"^(?:claimed|closed|committed|pushed|merged|read|opened|ran|started|finished|completed"
    r"|marked|verified|checked|confirmed|reviewed|all done)\b|\b(?:all )?\d+ (?:new )?(?:tests?"
    r"|doctests?|specs?|failures?|subtasks?|tasks?)\b(?: (?:pass|passed|passing|green|covering))?"
    r"|\b(?:credo|lint|tests?) (?:is |are )?(?:clean|green|passing)\b|\b(?:unchanged|not yet modified|no changes)\b"
    r"|^(?:current (?:full )?content|key (?:code|snippet)|important code|still needs?|currently"
    r"|major changes|successfully)\b", _I)


@dataclass(frozen=True, slots=True)
class Statement:
    """What to remember of one item, and a piece of its raw text to find its chunk by."""

    type: str
    text: str
    importance: float
    probes: tuple[str, ...]  # raw text of its item (and the parent item it names)
    pending: bool = False
    evidence: tuple[int, ...] = ()  # chunk ids, when the statement knows them itself


@dataclass(slots=True)
class Item:
    """One bullet (or paragraph) of a section, with the items indented under it."""

    text: str
    indent: int
    children: list[Item] = field(default_factory=list)
    bullet: bool = True


@dataclass(slots=True)
class Section:
    title: str
    kind: str
    items: list[Item] = field(default_factory=list)


def section_kind(title: str) -> str:
    for kind, pattern in SECTIONS:
        if pattern.search(title):
            return kind
    return "other"


def parse(text: str, *, analysis: bool = True) -> list[Section]:
    """The sections of a text and their item trees. In a summary (`analysis`), everything
    before a `Summary:` line or `<summary>` tag, when there is one, is the compaction's
    analysis and is left out."""
    lines = text.splitlines()
    start = next((i + 1 for i, ln in enumerate(lines)
                  if re.match(r"^\s*(?:<summary>|summary:?)\s*$", ln, _I)), 0) if analysis else 0
    sections = [Section("", "other")]
    stack: list[Item] = []
    fence: str | None = None
    code: list[str] = []
    for raw in lines[start:]:
        m = _FENCE.match(raw)
        if fence is not None:
            if m and m.group(1).startswith(fence):
                fence = None
                if len(code) == 1 and stack:  # a one-line block reads as inline code
                    stack[-1].text += f" `{code[0].strip()}`"
            else:
                code.append(raw)
            continue
        if m:
            fence, code = m.group(1)[0] * len(m.group(1)), []
            continue
        if not raw.strip() or _TAG.match(raw):
            continue
        t = _TITLE.match(raw)
        if t and not re.match(r"^\s*[-*+•]\s", raw):  # "**Title**" is one, "- x:" is not
            title = (t.group("h") or t.group("b") or t.group("t") or "").strip()
            sections.append(Section(title, section_kind(title)))
            stack = []
            continue
        b = _BULLET.match(raw)
        indent = len(raw) - len(raw.lstrip())
        if b is None:
            if stack and indent >= stack[-1].indent:  # a continuation of the item above
                stack[-1].text += " " + raw.strip()
                continue
            item = Item(raw.strip(), indent, bullet=False)
        else:
            item = Item(b.group(2).strip(), len(b.group(1)))
        while stack and stack[-1].indent >= item.indent:
            stack.pop()
        (stack[-1].children if stack else sections[-1].items).append(item)
        stack.append(item)
    return [s for s in sections if s.items]


def clean(text: str) -> str:
    text = _EMPHASIS.sub(r"\2", text).strip()
    return re.sub(r"\s+", " ", text).strip(" -–—:;,")


def _subject(text: str) -> str:
    """The part of an item that names what it is about: a leading code span (a file, a
    function), else the text before its explanation; status in parentheses left out."""
    code = _LEADING_CODE.match(text)
    if code:
        return code.group(0)
    head = re.split(r"\s+[-–—]\s+|:\s+", _PAREN.sub("", text), maxsplit=1)[0].strip()
    return head if len(head) <= 120 else text[:120].rsplit(" ", 1)[0]


def _explained(text: str) -> bool:
    """A concept says something about itself (not just a label such as "WCAG compliance")."""
    return bool(re.search(r"\s[-–—]\s|:\s|\(|`", text) or _VERB.search(text))


def _fit(text: str) -> str | None:
    text = clean(text)
    if len(text) > MAX_CHARS:
        cut = text[:MAX_CHARS]
        stop = max(cut.rfind(". "), cut.rfind("; "))
        text = cut[:stop + 1] if stop > MAX_CHARS // 2 else cut.rsplit(" ", 1)[0] + " …"
    if len(_WORD.findall(text)) < MIN_WORDS:
        return None
    return text[0].upper() + text[1:] if text[0].islower() else text


def _chatter(text: str) -> bool:
    return bool(_CHATTER.search(clean(text)))


def statements(text: str) -> Iterator[Statement]:
    """A statement for every item of a summary worth remembering."""
    return statements_of(parse(text))


def statements_of(sections: list[Section], *, subjects: bool = False) -> Iterator[Statement]:
    """Statements of parsed sections; with `subjects`, a heading that is not one of the
    summary sections (e.g. "Close the review session") is the subject of its items."""
    for section in sections:
        kind = section.kind
        if kind == "skip":
            continue
        mtype, importance = TYPES[kind], IMPORTANCE[kind]
        if subjects:  # a message's own bullets: paragraphs around them are its narration
            section = Section(section.title, kind, [i for i in section.items if i.bullet])
        if subjects and kind == "other" and 0 < len(section.title) <= 60:
            title = clean(section.title)
            named = len(title.split()) > 1 and not _chatter(title)
            for stmt in _items(section, kind, mtype, importance):
                text = _fit(f"{title}: {stmt.text}") if named else stmt.text
                if text:
                    yield Statement(stmt.type, text, stmt.importance, stmt.probes)
            continue
        if kind == "next":  # one next step: the section's first item, no quotes
            first = next((i for i in section.items if not i.text.startswith(('"', "'", ">"))),
                         None)
            if first is None:
                continue
            kids = [clean(c.text) for c in first.children]
            said = _fit(f"{first.text}: {'; '.join(kids)}" if kids else first.text)
            if said:
                yield Statement(mtype, said, importance, _probe(first), pending=True)
            continue
        yield from _items(section, kind, mtype, importance)


def _items(section: Section, kind: str, mtype: str, importance: float) -> Iterator[Statement]:
    for item in section.items:
        yield from _item(item, kind, mtype, importance)


def _probe(*items: Item) -> tuple[str, ...]:
    return tuple(i.text.split(" `", 1)[0][:40] for i in items)


def _kept(item: Item, kind: str) -> list[tuple[Item, str]]:
    """An item's children worth a statement: not chatter; outside a problem or a task, not
    a bare change-log line nor a region read by its lines (not what is so)."""
    pairs = [(c, clean(c.text)) for c in item.children if not _chatter(c.text)]
    if kind not in _OWN_LINES:
        pairs = [(c, k) for c, k in pairs if not edit_only(k) and not read_out(k)]
    return [(c, k) for c, k in pairs if k]


def _own_words(text: str) -> bool:
    """An item says something of its subject (more than a name and a status)."""
    return len(_WORD.findall(_PAREN.sub("", text))) > len(_WORD.findall(_subject(text))) + 2


def _item(item: Item, kind: str, mtype: str, importance: float) -> Iterator[Statement]:
    text = clean(item.text)
    plain = kind not in _OWN_LINES  # where a bare edit or a region read is not what is so
    if not text or _chatter(text) or (plain and read_out(text)):
        return
    bare = plain and edit_only(text)  # "`file` — Added X": its details may still say more
    pairs = _kept(item, kind)
    kids = [k for _, k in pairs]
    if kind in ("errors", "pending") or not kids:
        # A problem and its fix (or a task and its parts) are one statement.
        whole = text if not kids else f"{text}: {'; '.join(kids)}"
        if bare or (kind == "other" and not _ANCHOR.search(whole)):
            return
        if (kind in ("concepts", "other") and not _explained(whole)) or (
                (item.children or kind == "files") and not kids and not _own_words(text)):
            return  # a label; a file and its status ("`x.ex` — New resource (gqc.1)")
        stmt = _fit(whole)
        if stmt:
            yield Statement(_typed(mtype, stmt), stmt, importance, _probe(item),
                            pending=kind == "pending")
        return
    # A subject with details: the subject's own text once, then each detail with it.
    subject = _subject(text)
    if _own_words(text) and not bare:
        stmt = _fit(text)
        if stmt:
            yield Statement(_typed(mtype, stmt), stmt, importance, _probe(item))
    for child, kid in pairs:
        grand = [clean(g.text) for g in child.children if not _chatter(g.text)]
        detail = kid if not grand else f"{kid}: {'; '.join(g for g in grand if g)}"
        if kind == "other" and not _ANCHOR.search(detail):
            continue
        stmt = _fit(f"{subject}: {detail}")
        if stmt:
            yield Statement(_typed(mtype, stmt), stmt, importance, _probe(child, item))


def _typed(mtype: str, text: str) -> str:
    return "config" if mtype == "fact" and _ENV.search(text) else mtype
