"""Exact token counts for ASCII text without loading the tokenizer (saves ~0.1 s per start).

The shipped tokenizer (`hippo.tokens`) is BERT WordPiece, uncased: split out the special
tokens, drop control characters, split on whitespace, isolate punctuation, lowercase,
then greedy longest-match against vocab.txt. For ASCII input every one of those steps is
fully defined, so this pure-Python count equals `hippo.tokens.count` (tested exhaustively
with hypothesis); any other text goes to the real tokenizer. The vocabulary, the special
tokens and the greedy matcher are the query tokenizer's (`hippo.embed.wordpiece`); this
module adds only the regex split that makes counting ASCII cheap.
"""

from __future__ import annotations

import re

from hippo.embed.wordpiece import SPECIAL_RE, pieces, vocab

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # Cc minus \t \n \r: removed
_PIECE_RE = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")  # words and single punctuation


def _word(word: str, known: dict[str, int]) -> int:
    found = pieces(word, known)
    return 1 if found is None else len(found)  # no split: the whole word is one [UNK]


def count_ascii(text: str) -> int | None:
    """The token count of `text` when it is ASCII, else None (use `hippo.tokens.count`)."""
    if not text.isascii():
        return None
    known = vocab()
    total = 0
    for i, segment in enumerate(SPECIAL_RE.split(text)):
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
