"""Exact token counts for ASCII text without loading the tokenizer (saves ~0.1 s per start).

The shipped tokenizer (`hippo.tokens`) is BERT WordPiece, uncased: split out the special
tokens, drop control characters, split on whitespace, isolate punctuation, lowercase,
then greedy longest-match against vocab.txt. For ASCII input every one of those steps is
fully defined, so this pure-Python count equals `hippo.tokens.count` (tested exhaustively
with hypothesis); any other text goes to the real tokenizer.
"""

from __future__ import annotations

import re
from functools import lru_cache

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # added tokens, matched in raw text
MAX_WORD = 100  # longer words are one [UNK]
_SPECIAL_RE = re.compile("|".join(re.escape(s) for s in SPECIAL))
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # Cc minus \t \n \r: removed
_PIECE_RE = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")  # words and single punctuation


@lru_cache(maxsize=1)
def vocab() -> frozenset[str]:
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "data" / "minilm" / "vocab.txt"
    return frozenset(path.read_text(encoding="utf-8").split("\n"))


def _word(word: str, known: frozenset[str]) -> int:
    if len(word) > MAX_WORD:
        return 1
    n, start, end = 0, 0, len(word)
    while start < end:
        stop = end
        while stop > start:
            piece = word[start:stop] if start == 0 else "##" + word[start:stop]
            if piece in known:
                break
            stop -= 1
        else:
            return 1  # no piece matches: the whole word is [UNK]
        n += 1
        start = stop
    return n


def count_ascii(text: str) -> int | None:
    """The token count of `text` when it is ASCII, else None (use `hippo.tokens.count`)."""
    if not text.isascii():
        return None
    known = vocab()
    total = 0
    for i, segment in enumerate(_SPECIAL_RE.split(text)):
        total += i > 0  # each special token found between segments counts one
        for piece in _PIECE_RE.findall(_CONTROL_RE.sub("", segment)):
            total += 1 if len(piece) == 1 and not piece.isalnum() else _word(piece.lower(), known)
    return total


def count(text: str) -> int:
    """`hippo.tokens.count(text)`, without loading the tokenizer for ASCII text."""
    fast = count_ascii(text)
    if fast is not None:
        return fast
    from hippo import tokens

    return tokens.count(text)
