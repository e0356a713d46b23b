"""An agent's notes or a person's instruction file, read as statements with their lines.

Claude Code's auto memory (docs: "How Claude remembers your project") keeps a `MEMORY.md`
index (one line per topic file, `- [Title](file.md) — hook`, its first 200 lines loaded at
every session start) and topic files; newer topic files hold one memory each, under
frontmatter (`name`, `description`, `type: user | feedback | project | reference`, at the
top or under `metadata:`), its body the fact and its **Why:** and **How to apply:** lines.
Older ones, and instruction files (CLAUDE.md, `.claude/rules/*.md`, AGENTS.md, GEMINI.md),
are free Markdown: headings, bullets, paragraphs.

What becomes a statement: a frontmatter memory's body, whole; else each bullet (a sub-bullet
under a label ending in `:` reads `label: item`) and each paragraph, markdown emphasis and
links reduced to their text. Never code blocks, tables, HTML comments, headings alone, or
an index line pointing to a topic file that is read itself. The type comes from the file's
own words: its frontmatter type, else the heading it stands under, else the statement's
cue or form (`hippo.extract.cues`, `hippo.extract.statements.typed`); in a person's
instruction file an imperative is a rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_CHARS = 900  # a frontmatter memory longer than this is read bullet by bullet
MIN_WORDS = 3
_I = re.IGNORECASE

#: Claude Code's memory types, as hippo's.
FRONT_TYPES = {"user": "preference", "feedback": "rule", "project": "fact",
               "reference": "fact"}
#: A heading's words, loosely, and the type of what stands under it (first match wins).
HEADINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("task", re.compile(r"\b(?:todos?|pending|next steps?|open (?:items|tasks|questions)"
                        r"|in progress|left to do|backlog|follow[- ]ups?)\b", _I)),
    ("insight", re.compile(r"\b(?:debug\w*|errors?|fix(?:es)?|gotchas?|pitfalls?|lessons?"
                           r"|troubleshoot\w*|mistakes?|learnings?|known issues?)\b", _I)),
    ("rule", re.compile(r"\b(?:conventions?|rules?|style|guidelines?|standards?|do'?s"
                        r"|don'?ts|constraints?)\b", _I)),
    ("preference", re.compile(r"\b(?:preferences?|prefer\w*|workflow)\b", _I)),
    ("decision", re.compile(r"\b(?:decisions?|decided|choices?)\b", _I)),
    ("architecture", re.compile(r"\b(?:architecture|structure|layout|design|overview"
                                r"|where things (?:live|are))\b", _I)),
    ("tool", re.compile(r"\b(?:commands?|tools?|build\w*|testing|tests|scripts?|cli)\b", _I)),
    ("config", re.compile(r"\b(?:config\w*|settings?|environment|env vars?)\b", _I)),
)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_INDEX = re.compile(r"^\[[^\]]+\]\(([^)\s]+\.md)\)")
_SKIP = re.compile(r"^\s*(?:\||<!--|-->|>|[-=_*]{3,}\s*$)")
_STRONG_RULE = re.compile(r"\b(?:always|never|must|do not|don't|only)\b", _I)


@dataclass(frozen=True, slots=True)
class Note:
    """One statement of a file: its text, type, importance and first and last line."""

    text: str
    type: str
    importance: float
    lines: tuple[int, int]


@dataclass(slots=True)
class _Block:
    text: str
    first: int
    last: int
    heading: str = ""
    indent: int = 0
    bullet: bool = False
    parts: list[str] = field(default_factory=list)


def frontmatter(lines: list[str]) -> tuple[dict[str, str], int]:
    """The frontmatter's `key: value` pairs (nested ones by their own key) and the index
    of the first line after it (0 without one)."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    out: dict[str, str] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return out, i + 1
        m = re.match(r"^\s*([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$", line)
        if m and m.group(2):
            out.setdefault(m.group(1).lower(), m.group(2).strip("'\""))
    return {}, 0  # never closed: not frontmatter


def read(text: str, *, instructions: bool, here: Path | None = None) -> list[Note]:
    """The statements of one file. `instructions`: a person's instruction file (an
    imperative is a rule); `here`: its folder, where an index line's topic file is looked
    for."""
    lines = text.splitlines()
    front, start = frontmatter(lines)
    kind = FRONT_TYPES.get(front.get("type", "").lower())
    blocks = list(_blocks(lines, start, here))
    if front and blocks:
        body = " ".join(b.text for b in blocks)
        if len(body) <= MAX_CHARS:
            blocks = [_Block(body, blocks[0].first, blocks[-1].last)]
    out: list[Note] = []
    seen: set[str] = set()
    for b in blocks:
        said = _clean(b.text)
        if len(re.findall(r"\w+", said)) < MIN_WORDS or said.lower() in seen:
            continue
        seen.add(said.lower())
        mtype = kind or _heading_type(b.heading) or _typed(said, b.heading, instructions)
        strong = mtype == "rule" or (instructions and mtype == "preference")
        out.append(Note(said, mtype, 0.7 if strong and instructions else
                        0.6 if strong else 0.5, (b.first, b.last)))
    return out


def _blocks(lines: list[str], start: int, here: Path | None) -> Iterator[_Block]:
    """Bullets and paragraphs with their 1-based line spans (code, tables, comments out)."""
    heading, fence = "", ""
    stack: list[_Block] = []  # open bullets, outermost first
    para: _Block | None = None
    for n, raw in enumerate(lines[start:], start=start + 1):
        m = _FENCE.match(raw)
        if m is not None and not fence:
            fence, para = m.group(1)[0], None
            continue
        if fence:
            if m is not None and m.group(1)[0] == fence:
                fence = ""
            continue
        h = _HEADING.match(raw)
        b = _BULLET.match(raw)
        if not raw.strip() or _SKIP.match(raw) or h:
            yield from _close(stack, 0)
            para = None
            heading = h.group(1) if h else heading
            continue
        if b:
            if para is not None:
                para = None
            indent = len(b.group(1))
            yield from _close(stack, indent)
            item = b.group(2).strip()
            if _index_line(item, here):
                continue
            parent = stack[-1] if stack else None
            under = heading
            if parent is not None and parent.text.rstrip().endswith(":"):
                parent.parts.append("child")  # a label: said through its items
                label = parent.text.rstrip().rstrip(":")
                item, under = f"{label}: {item}", label if _heading_type(label) else heading
            stack.append(_Block(item, n, n, under, indent, True))
        elif stack and (len(raw) - len(raw.lstrip())) > stack[-1].indent:
            stack[-1].text += " " + raw.strip()
            stack[-1].last = n
        else:
            yield from _close(stack, 0)
            if para is None:
                para = _Block(raw.strip(), n, n, heading)
                yield para  # its text grows below; read once the file is done
            else:
                para.text += " " + raw.strip()
                para.last = n
    yield from _close(stack, 0)


def _close(stack: list[_Block], indent: int) -> Iterator[_Block]:
    """Pop the open bullets at `indent` or deeper; a label said through its items is not
    a statement itself."""
    while stack and stack[-1].indent >= indent:
        done = stack.pop()
        if not (done.parts and done.text.rstrip().endswith(":")):
            yield done


def _index_line(item: str, here: Path | None) -> bool:
    """`[Title](file.md) — hook` pointing to a topic file beside it: read there."""
    m = _INDEX.match(item)
    return bool(m and here is not None and (here / m.group(1)).is_file())


def _clean(text: str) -> str:
    from hippo.extract.units import clean

    text = re.sub(r"\*\*(Why|How to apply):\*\*", r"\1:", text)
    return clean(text)


def _heading_type(heading: str) -> str | None:
    return next((kind for kind, pattern in HEADINGS if pattern.search(heading)), None)


def _typed(text: str, heading: str, instructions: bool) -> str:
    from hippo.extract.cues import IMPERATIVE, scan
    from hippo.extract.statements import Where, imperative, typed
    from hippo.extract.units import Unit

    hit = scan(text, "user" if instructions else "assistant")
    if hit is not None:
        return hit[0].type
    if instructions and (imperative(text, IMPERATIVE) or _STRONG_RULE.search(text)):
        return "rule"
    return typed(Unit(text, "item", heading), Where("user" if instructions else "assistant"),
                 IMPERATIVE)
