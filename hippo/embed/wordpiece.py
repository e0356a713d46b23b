"""BERT WordPiece tokenization in pure Python, for the few texts of a new query.

The `tokenizers` package (Rust) costs ~20 ms to import and ~50 ms to load the shipped
tokenizer.json; a new `hippo search` tokenizes one short query, which takes well under a
millisecond here. This module reproduces the shipped tokenizer (BertNormalizer with
clean_text, handle_chinese_chars, lowercase and accent stripping; BertPreTokenizer;
WordPiece with `##` continuations, [UNK] past 100 characters; the special tokens matched
verbatim in the raw text; [CLS] … [SEP] truncated to 256) and is tested token for token
against `tokenizers` on real transcripts and on random Unicode
(tests/foundation/test_wordpiece.py). Bulk embedding keeps the Rust tokenizer.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

VOCAB_FILE = Path(__file__).resolve().parent.parent / "data" / "minilm" / "vocab.txt"
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
SPECIAL_RE = re.compile("|".join(re.escape(s) for s in SPECIAL))
UNK, CLS, SEP = "[UNK]", "[CLS]", "[SEP]"
MAX_WORD_CHARS = 100
# Code points the BERT normaliser surrounds with spaces (CJK ideographs).
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
# `tokenizers` classifies characters with its own, older Unicode tables, so this module
# only takes texts whose characters are all old and stable: Latin (to U+024F) and the
# General Punctuation block (smart quotes, dashes). Every one of them is checked against
# `tokenizers` by the tests; any other text goes to `tokenizers`.
_SAFE_HIGH = (0x2000, 0x206F)


def usable(text: str) -> bool:
    """True when `encode` is known to match `tokenizers` on every character of `text`."""
    return text.isascii() or all(ord(c) < 0x250 or _SAFE_HIGH[0] <= ord(c) <= _SAFE_HIGH[1]
                                 for c in text)


@dataclass(frozen=True, slots=True)
class Encoding:
    """Token ids with [CLS]/[SEP], and for each token the span of the original text it
    came from ((0, 0) for [CLS] and [SEP]), as `tokenizers.Encoding` gives them."""

    ids: list[int]
    offsets: list[tuple[int, int]]


@functools.cache
def vocab() -> dict[str, int]:
    """Each piece of the shipped vocab.txt and its id (its line number from 0)."""
    words = VOCAB_FILE.read_text(encoding="utf-8").split("\n")
    if words[-1] == "":
        words.pop()  # the file's final newline
    return dict(zip(words, range(len(words))))


def _normal(ch: str) -> str:
    """What the BERT normaliser makes of one character (may be empty or several)."""
    cp = ord(ch)
    if ch in "\t\n\r":
        return " "
    cat = unicodedata.category(ch)
    if cp == 0 or cp == 0xFFFD or cat in ("Cc", "Cf", "Co"):  # unassigned (Cn) stays
        return ""
    if ch.isspace():
        return " "
    if any(lo <= cp <= hi for lo, hi in _CJK):
        return f" {ch} "
    if ch.isascii():
        return ch.lower()
    kept = "".join(c for c in unicodedata.normalize("NFD", ch)
                   if unicodedata.category(c) != "Mn")
    return "".join(c.lower() for c in kept)


def _is_punct(ch: str) -> bool:
    if ch.isascii():
        return not ch.isalnum() and ch.isprintable() and not ch.isspace()
    return unicodedata.category(ch)[0] == "P"


def _words(text: str, base: int) -> list[tuple[str, int, int]]:
    """Normalised words and punctuation marks of `text`, with their original spans."""
    out: list[tuple[str, int, int]] = []
    word: list[str] = []
    start = end = 0

    def flush() -> None:
        if word:
            out.append(("".join(word), start, end))
            word.clear()

    for i, ch in enumerate(text, base):
        for c in _normal(ch):
            if c.isspace():
                flush()
            elif _is_punct(c):
                flush()
                out.append((c, i, i + 1))
            else:
                if not word:
                    start = i
                word.append(c)
                end = i + 1
    flush()
    return out


def pieces(word: str, v: Container[str]) -> list[str] | None:
    """Greedy longest-match WordPiece (`##` continuations); None when some part of the
    word is not in `v` or the word is longer than MAX_WORD_CHARS: it is one [UNK] then."""
    if len(word) > MAX_WORD_CHARS:
        return None
    out: list[str] = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in v:
                out.append(piece)
                break
            end -= 1
        else:
            return None
        start = end
    return out


def encode(text: str, max_length: int = 256) -> Encoding:
    """Ids and offsets of `text` as the shipped tokenizer gives them (truncated, no padding)."""
    v = vocab()
    ids: list[int] = []
    offsets: list[tuple[int, int]] = []
    at = 0
    segments: list[tuple[str, int, bool]] = []
    for m in SPECIAL_RE.finditer(text):
        segments.append((text[at : m.start()], at, False))
        segments.append((m.group(), m.start(), True))
        at = m.end()
    segments.append((text[at:], at, False))
    for segment, base, special in segments:
        if special:
            ids.append(v[segment])
            offsets.append((base, base + len(segment)))
            continue
        for word, start, end in _words(segment, base):
            found = pieces(word, v)
            if found is None:
                ids.append(v[UNK])
                offsets.append((start, end))
                continue
            # A piece's span covers the original characters its normalised characters
            # came from (normalising can drop or add characters: accents, controls).
            if len(found) == 1:
                ids.append(v[found[0]])
                offsets.append((start, end))
                continue
            spans = _piece_spans(segment, base, start, end, found)
            for piece, span in zip(found, spans):
                ids.append(v[piece])
                offsets.append(span)
    keep = max_length - 2
    return Encoding([v[CLS], *ids[:keep], v[SEP]], [(0, 0), *offsets[:keep], (0, 0)])


def _piece_spans(segment: str, base: int, start: int, end: int,
                 pieces: list[str]) -> list[tuple[int, int]]:
    """Original spans of a word's pieces, mapping normalised characters back one by one."""
    owner: list[int] = []  # original index of each normalised character of the word
    for i in range(start, end):
        n = _normal(segment[i - base])
        owner.extend([i] * len(n.strip()) if n.strip() else [])
    spans: list[tuple[int, int]] = []
    at = 0
    for piece in pieces:
        size = len(piece) - (2 if piece.startswith("##") else 0)
        first, last = owner[at], owner[at + size - 1]
        spans.append((first, last + 1))
        at += size
    return spans
