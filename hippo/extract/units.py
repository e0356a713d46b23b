"""A message's markdown as units of statement: the sentences of its paragraphs, each list item
under the intro or heading it stands under, a short list as one unit, and the names a code
block defines.

A unit reads alone without adding a word its message lacks: a sentence that starts by
pointing back ("It ...", "This ...", "The fix ...") is joined to the sentence before it, a
list item carries its heading's or parent's subject (`subject: item`), a one-line code block
is kept inline and a longer one contributes only the names it defines (`function f`,
`def f`, `func f`, `const f =`). Code, quotes, tables and diffs are never a unit, but for
a command or a setting in a block with the comment that says what it is for ("production
build: `bun run build`", kind `code`: `hippo.extract.commented`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hippo.extract.blocks import EMPHASIS, FENCE, SKIP_LINE, sentences
from hippo.extract.changelog import counts_only, edit_only
from hippo.extract.commented import commented

MAX_CHARS = 420
LIST_ITEM_CHARS = 170  # items this short (each) are one list unit when they fit MAX_CHARS
SUBJECT_CHARS = 90
MAX_DEFINED = 3
_I = re.IGNORECASE

_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d{1,2}[.)])\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}(?:#{1,6}\s+(.+?)\s*#*\s*$|\*\*([^*\n]{2,100})\*\*:?\s*$)")
_RULE = re.compile(r"^\s*[-=_*]{3,}\s*$")  # a horizontal rule
# "`name` — what it is": a paragraph that defines a term reads as a list item.
_DEFINITION = re.compile(r"^`[^`]+`\s*(?:[—–:]|-\s)\s*\S")
# A sentence that points back to what the one before it named.
_ANAPHOR = re.compile(
    r"^(?:it|its|it's|this|that|these|those|they|their|there|here|which|so that|both"
    r"|so (?:i|we|you) (?:don't|do not|no longer|won't|never)"
    r"|the (?:fix|function|method|module|file|class|hook|change|problem|issue|bug|error|cause"
    r"|setting|command|flag|option|value|result|reason|approach|pattern|same)"
    r"|(?:fix|solution|cause|reason|why)\s*:)\b", _I)
# An intro to a list of what may or will be done, not of what is.
_PROPOSAL = re.compile(r"\b(?:will|would|could|might|may|i can|propose[ds]?|suggest(?:ed|ions?)?"
                       r"|potential|involves?|here (?:are|is)|here's|options?|plan)\b", _I)
# A pronoun subject: the sentence means nothing without the one it points back to.
POINTS_BACK = r"^(?:it|it's|this|that|that's|these|those|they|they're)\b"
_POINTS_BACK = re.compile(POINTS_BACK, _I)
# Narration of what the agent is about to do: nothing to join a sentence to.
_NARRATION = re.compile(r"^(?:let me|let's|i'll|i will|now,? (?:let|i)|next,? i)\b", _I)
# A line of code that defines something, and its name (`def f`, `export function f`, `func (r *R) F`).
DEFINES = re.compile(
    r"^(?:(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:pub(?:\(\w+\))?\s+)?"
    r"(?:function|func|fn|class|interface|type|struct|const|let|var)|\s{0,4}(?:async\s+)?"
    r"(?:def|defp|defmacro|func|fn|function))\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
_WORD = re.compile(r"\w+")


@dataclass(slots=True)
class Unit:
    """One candidate statement of a message, with where it stood."""

    text: str
    kind: str  # sentence | item | list | code
    heading: str = ""  # the heading or intro line it stands under
    index: int = 0  # its order in the message
    joined: int = 1  # source sentences it holds
    fix: bool = False  # a cause joined with its fix ("Fix: ...")


@dataclass(slots=True)
class _Item:
    text: str
    indent: int
    children: list[_Item] = field(default_factory=list)


@dataclass(slots=True)
class _Block:
    kind: str  # para | items | code | heading
    text: str = ""  # a heading's or paragraph's text; a code block's language
    items: list[_Item] = field(default_factory=list)
    code: list[str] = field(default_factory=list)


_CODE_SPAN = re.compile(r"(`[^`\n]*`)")
_LINK = re.compile(r"\[([^\]\n]+)\]\([^)\s]+\)")  # a markdown link reads as its text


def clean(text: str) -> str:
    """Emphasis dropped outside code spans (`__init__` stays), spaces collapsed."""
    parts = _CODE_SPAN.split(text)
    text = "".join(p if i % 2 else _LINK.sub(r"\1", EMPHASIS.sub(r"\2", p))
                   for i, p in enumerate(parts))
    return re.sub(r"\s+", " ", text).strip(" -–—;,")


def _blocks(text: str) -> list[_Block]:
    """Paragraphs, lists (item trees), code blocks and headings, in order."""
    out: list[_Block] = []
    fence: str | None = None
    stack: list[_Item] = []
    for raw in text.splitlines():
        m = FENCE.match(raw)
        if fence is not None:
            if m and m.group(1).startswith(fence):
                fence = None
            else:
                out[-1].code.append(raw)
            continue
        if m:
            fence = m.group(1)[0] * len(m.group(1))
            out.append(_Block("code", raw[m.end():].strip().lower()))
            stack = []
            continue
        if not raw.strip() or SKIP_LINE.match(raw) or _RULE.match(raw):
            continue
        h = _HEADING.match(raw)
        if h:
            out.append(_Block("heading", clean(h.group(1) or h.group(2) or "")))
            stack = []
            continue
        b = _BULLET.match(raw)
        if b is None and _DEFINITION.match(raw.strip()):
            b = re.match(r"^()(.*)$", raw.strip())
        indent = len(raw) - len(raw.lstrip())
        if b is not None:
            _place(out, stack, _Item(b.group(2).strip(), len(b.group(1))))
        elif stack and indent > 0:
            stack[-1].text += " " + raw.strip()
        else:  # a line of its own: people and models in a chat do not hard-wrap
            if raw.startswith(("    ", "\t")):
                continue  # indented code
            out.append(_Block("para", raw.strip()))
            stack = []
    return out


def _place(out: list[_Block], stack: list[_Item], item: _Item) -> None:
    """Put a list item under its parent (by indent), or start or extend a list."""
    while stack and stack[-1].indent >= item.indent:
        stack.pop()
    if stack:
        stack[-1].children.append(item)
    else:
        if not out or out[-1].kind != "items":
            out.append(_Block("items"))
        out[-1].items.append(item)
    stack.append(item)


def _join_back(said: list[str]) -> list[tuple[str, int, bool]]:
    """Sentences, each joined to the one before when it points back to it."""
    out: list[tuple[str, int, bool]] = []
    for s in said:
        fix = bool(re.match(r"^(?:the )?(?:fix|solution)\b", s, _I))
        if (out and _ANAPHOR.match(s) and not _NARRATION.match(out[-1][0])
                and len(out[-1][0]) + len(s) < MAX_CHARS):
            prev, n, was_fix = out[-1]
            out[-1] = (f"{prev} {s}", n + 1, was_fix or fix)
        else:
            out.append((s, 1, False))
    return out


def _flat(item: _Item) -> str:
    text = clean(item.text).rstrip(":")
    kids = [_flat(k) for k in item.children]
    kids = [k for k in kids if k]
    return f"{text}: {'; '.join(kids)}" if kids and text else text or "; ".join(kids)


def _subject(text: str) -> str:
    """The part of a line that names what it is about (before its explanation)."""
    code = re.match(r"^`[^`]+`", text)
    if code:
        return code.group(0)
    head = re.split(r"\s+[-–—]\s+|:\s+", re.sub(r"\s*\([^()]*\)", "", text), maxsplit=1)[0]
    return head.strip().rstrip(":")


def _items(items: list[_Item], intro: str, index: int) -> list[Unit]:
    # A bare change-log item ("Added alias X") or a count of tests says nothing of what is.
    items = [i for i in items if i.children or not (edit_only(clean(i.text))
                                                    or counts_only(clean(i.text)))]
    flat = [_flat(i) for i in items]
    flat = [f for f in flat if f]
    if not flat:
        return []
    lead = intro.strip().rstrip(":").strip()
    if _PROPOSAL.search(lead):
        return []  # "Here are my proposed changes:", "This involves:": a plan, not what is
    whole = f"{lead}: {'; '.join(flat)}" if lead else "; ".join(flat)
    if len(flat) >= 2 and max(map(len, flat)) <= LIST_ITEM_CHARS and len(whole) <= MAX_CHARS:
        return [Unit(whole, "list", lead, index, len(flat))]
    subject = lead if 0 < len(lead) <= SUBJECT_CHARS else ""
    out = []
    for item in items:
        text = clean(item.text)
        if not item.children or len(_flat(item)) <= MAX_CHARS:
            said = _flat(item)
            out.append(Unit(f"{subject}: {said}" if subject else said, "item", lead, index))
            continue
        if len(_WORD.findall(text)) > len(_WORD.findall(_subject(text))) + 2:
            out.append(Unit(f"{subject}: {text}" if subject else text, "item", lead, index))
        own = _subject(text)
        for kid in item.children:
            out.append(Unit(f"{own}: {_flat(kid)}", "item", lead, index))
    return out


def _defined(code: list[str]) -> list[str]:
    names = [m.group(1) for ln in code if (m := DEFINES.match(ln))]
    return list(dict.fromkeys(n for n in names if len(n) > 2))[:MAX_DEFINED]


def _sentences(line: str, heading: str, out: list[Unit]) -> None:
    """A line's sentences onto `out`; one that starts by pointing back (`It`, `This`) reads
    with the sentence before it, in its line or the line above."""
    said = [clean(s) for s in sentences(clean(line))]
    for s, joined, fix in _join_back([s for s in said if s]):
        prev = out[-1] if out else None
        if (prev is not None and prev.kind == "sentence" and _POINTS_BACK.match(s)
                and not _NARRATION.match(prev.text) and len(prev.text) + len(s) < MAX_CHARS):
            prev.text, prev.joined = f"{prev.text} {s}", prev.joined + joined
            prev.fix = prev.fix or fix
            continue
        out.append(Unit(s, "sentence", heading, len(out), joined, fix))


def units(text: str) -> list[Unit]:
    """The units of one message, in order."""
    out: list[Unit] = []
    heading = ""
    blocks = _blocks(text)
    for n, block in enumerate(blocks):
        if block.kind == "heading":
            heading = block.text
        elif block.kind == "code":
            said = commented(block.code, block.text)
            if out and len(block.code) == 1 and block.code[0].strip() and not said:
                out[-1].text += f" `{block.code[0].strip()}`"
            elif out and not out[-1].text.endswith(":") and (names := _defined(block.code)):
                # ("Here is the block:" introduces code: nothing to carry)
                out[-1].text += " (" + ", ".join(f"`{x}`" for x in names) + ")"
            out += [Unit(text, "code", heading, len(out)) for text in said]
        elif block.kind == "items":
            intro = heading
            if out and n and blocks[n - 1].kind == "para" and out[-1].text.endswith(":"):
                intro = out.pop().text  # "Analytics endpoints on X:" introduces the items
            out += _items(block.items, intro, len(out))
        else:
            _sentences(block.text, heading, out)
    for i, u in enumerate(out):
        u.index = i
    return out
