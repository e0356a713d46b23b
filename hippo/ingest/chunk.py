"""Pack a session's meaningful messages into embedding-sized chunks.

Chunks break only at message boundaries (and where the session or sidechain changes); a
message too long for one chunk is split at paragraph, then line, sentence and word boundaries,
with a hard character cut as the last resort. A summary (a compaction's distillation of the
session) becomes chunks of its own with role `summary`, never mixed with turns, split at its
section and top-level bullet boundaries (a sub-bullet stays with its parent, a code block
stays whole where it fits). Token counts are additive over the rendered
blocks (plus one per blank-line separator), which holds for whitespace-pretokenised
tokenizers and for the default estimate. Deterministic: same messages, same chunks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from hippo.ingest.model import Message
from hippo.store.chunks import Chunk

_WORDS = re.compile(r"\w+|[^\w\s]")
_CHUNKED_KINDS = frozenset({"message", "tool_call", "tool_result"})
_CHUNKED_ROLES = frozenset({"user", "assistant", "tool"})
SUMMARY_ROLE = "summary"
# Every role a chunk can carry: what `hippo echo --role` accepts.
CHUNK_ROLES = ("user", "assistant", "tool", SUMMARY_ROLE)
# Where a summary may be cut: a heading, a section title ("4. Errors and fixes:",
# "**Pending Tasks**", "Summary:"), a top-level bullet or an <analysis>/<summary> tag.
_SUMMARY_BOUNDARY = re.compile(
    r"^(?:#{1,6}\s|\s{0,3}(?:[-*+•]|\d{1,2}[.)])\s|\*\*[^*\n]+\*\*:?\s*$"
    r"|[A-Z][\w ()/&,'-]{0,60}:\s*$|</?(?:analysis|summary)>)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_SEPARATOR = "\n\n"
# Coarse to fine: paragraphs, lines, sentences, words.
_SPLITTERS = (
    re.compile(r"\n\s*\n"),
    re.compile(r"\n"),
    re.compile(r"(?<=[.!?。！？])\s+"),
    re.compile(r"\s+"),
)


def estimate_tokens(text: str) -> int:
    """Fast tokenizer-free estimate: 1.3 per word or punctuation mark, plus 1 per non-ASCII char.

    Non-ASCII characters count singly because CJK text has no spaces and WordPiece splits it
    per character; the result is additive over whitespace-separated pieces.
    """
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    return math.ceil(len(_WORDS.findall(text)) * 1.3) + non_ascii


def chunk_messages(
    messages: list[Message],
    *,
    max_tokens: int = 400,
    count_tokens: Callable[[str], int] | None = None,
) -> list[Chunk]:
    """Group chunkable messages into chunks of at most `max_tokens` (summaries/empties left out)."""
    count = count_tokens or estimate_tokens
    if max_tokens < count("assistant: x"):
        raise ValueError(f"max_tokens={max_tokens} cannot hold even a one-word message")
    chunks: list[Chunk] = []
    open_: list[tuple[Message, str]] = []
    used = 0

    def flush() -> None:
        nonlocal open_, used
        if open_:
            chunks.append(_make(open_))
        open_, used = [], 0

    for msg in messages:
        if msg.kind == "summary" and msg.text.strip():
            flush()
            prefix = f"{SUMMARY_ROLE}: "
            for piece in _summary_pieces(msg.text.strip(), max_tokens, count, prefix):
                chunks.append(_make([(msg, prefix + piece)], SUMMARY_ROLE))
            continue
        if msg.kind not in _CHUNKED_KINDS or msg.role not in _CHUNKED_ROLES or not msg.text.strip():
            continue
        block = f"{msg.role}: {msg.text.strip()}"
        cost = count(block)
        if open_ and (_breaks(open_[-1][0], msg) or used + 1 + cost > max_tokens):
            flush()
        if cost <= max_tokens:
            used += cost + (1 if open_ else 0)
            open_.append((msg, block))
            continue
        flush()
        prefix = f"{msg.role}: "
        for piece in _split(msg.text.strip(), max_tokens, count, prefix):
            chunks.append(_make([(msg, prefix + piece)]))
    flush()
    return chunks


def _breaks(prev: Message, msg: Message) -> bool:
    """A new chunk starts where the session or the sidechain changes."""
    return prev.session_id != msg.session_id or prev.is_sidechain != msg.is_sidechain


def _make(parts: list[tuple[Message, str]], role: str | None = None) -> Chunk:
    msgs = [m for m, _ in parts]
    roles = [role] if role else list(dict.fromkeys(m.role for m in msgs))
    ids = list(dict.fromkeys(m.message_id for m in msgs if m.message_id))
    stamps = [m.timestamp for m in msgs if m.timestamp]
    return Chunk(
        text=_SEPARATOR.join(block for _, block in parts),
        roles=roles,
        line_start=min(m.line_start for m in msgs),
        line_end=max(m.line_end for m in msgs),
        message_ids=ids,
        started_at=stamps[0] if stamps else None,
        ended_at=stamps[-1] if stamps else None,
        session_id=msgs[0].session_id,
    )


def _summary_pieces(text: str, max_tokens: int, count: Callable[[str], int],
                    prefix: str) -> list[str]:
    """A summary packed into pieces that each fit, cut only at section and bullet boundaries
    (an indented sub-bullet or a code block belongs to the item above it); an item too long
    on its own is split like any long message."""
    budget = max(1, max_tokens - count(prefix))
    items: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and items and _SUMMARY_BOUNDARY.match(line):
            items.append(line)
        elif items:
            items[-1] += line
        else:
            items.append(line)
        if m:
            mark = m.group(1)
            fence = mark[0] * len(mark) if fence is None else (None if mark.startswith(fence)
                                                                 else fence)
    # An item too long on its own is cut between its lines, then (one long line) its words.
    units = [u for item in items
             for u in ([item] if count(item) <= budget else item.splitlines(keepends=True))]
    pieces: list[str] = []
    current, used = "", 0
    for unit in units:
        cost = count(unit)
        if cost > budget:
            if current.strip():
                pieces.append(current)
            pieces.extend(_split_at(unit.strip(), 0, budget, count))
            current, used = "", 0
        elif current and used + cost > budget:
            pieces.append(current)
            current, used = unit, cost
        else:
            current, used = current + unit, used + cost
    if current.strip():
        pieces.append(current)
    # Indentation is kept: it says which item a sub-bullet belongs to.
    return [p.strip("\n").rstrip() for p in pieces if p.strip()]


def _split(text: str, max_tokens: int, count: Callable[[str], int], prefix: str) -> list[str]:
    """Pieces of `text` that each fit `max_tokens` once `prefix` is put in front."""
    budget = max(1, max_tokens - count(prefix))
    return [p for p in _split_at(text, 0, budget, count) if p.strip()]


def _split_at(text: str, level: int, budget: int, count: Callable[[str], int]) -> list[str]:
    """Greedy packing of the parts at one boundary level, each part counted once.

    Summing part counts never undercounts the joined text for a subadditive counter (the
    default and whitespace-pretokenised tokenizers are), so every piece stays within budget.
    """
    if level == len(_SPLITTERS):
        return _hard_cut(text, budget, count)
    pieces: list[str] = []
    current, used = "", 0
    for part in _parts(text, _SPLITTERS[level]):
        cost = count(part)
        if cost > budget:
            if current.strip():
                pieces.append(current.strip())
            pieces.extend(_split_at(part.strip(), level + 1, budget, count))
            current, used = "", 0
        elif used + cost > budget:
            pieces.append(current.strip())
            current, used = part, cost
        else:
            current, used = current + part, used + cost
    if current.strip():
        pieces.append(current.strip())
    return pieces


def _parts(text: str, splitter: re.Pattern[str]) -> list[str]:
    """Split keeping each separator attached to the part before it, so joins are lossless."""
    parts, pos = [], 0
    for m in splitter.finditer(text):
        parts.append(text[pos : m.end()])
        pos = m.end()
    parts.append(text[pos:])
    return [p for p in parts if p]


def _hard_cut(text: str, budget: int, count: Callable[[str], int]) -> list[str]:
    """Cut a run with no usable boundary into the longest prefixes that fit (binary search)."""
    pieces: list[str] = []
    while text:
        lo, hi = 1, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(text[:mid]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        pieces.append(text[:lo])
        text = text[lo:]
    return pieces
