"""The one token counter of every budget: the shipped MiniLM WordPiece tokenizer's count.

The context layers (`hippo.layers.pack`), the search Markdown (`hippo.retrieve.render`),
Echo chunks (`hippo.ingest`) and `hippo stats` all count with `count`. The tokenizer is
BERT WordPiece, uncased: split out the special tokens, drop control characters, split on
whitespace, isolate punctuation, lowercase, then greedy longest-match against vocab.txt.
For ASCII input every one of those steps is fully defined, so ASCII text is counted in
pure Python (`count_ascii`, equal to the tokenizer's count: tests/layers/test_pack.py
checks it with hypothesis). That spares a process the ~0.1 s of loading the Rust
tokenizer, and is faster per text too; any other text goes to the Rust tokenizer. The
vocabulary and the greedy matcher are the query tokenizer's (`hippo.embed.wordpiece`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from hippo.embed.wordpiece import SPECIAL_RE, pieces, vocab

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # Cc minus \t \n \r: removed
_PIECE_RE = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")  # words and single punctuation


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from importlib import resources

    from tokenizers import Tokenizer

    data = resources.files("hippo") / "data" / "minilm" / "tokenizer.json"
    tok = Tokenizer.from_str(data.read_text(encoding="utf-8"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count(text: str) -> int:
    """Number of WordPiece tokens in `text` (no special tokens added, no truncation)."""
    if not text:
        return 0
    fast = count_ascii(text)
    if fast is not None:
        return fast
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def _word(word: str, known: dict[str, int]) -> int:
    found = pieces(word, known)
    return 1 if found is None else len(found)  # no split: the whole word is one [UNK]


def count_ascii(text: str) -> int | None:
    """The token count of `text` when it is ASCII, else None (`count` takes any text)."""
    if not text.isascii():
        return None
    known = vocab()
    total = 0
    for i, segment in enumerate(SPECIAL_RE.split(text)):
        total += i > 0  # each special token found between segments counts one
        for piece in _PIECE_RE.findall(_CONTROL_RE.sub("", segment)):
            total += 1 if len(piece) == 1 and not piece.isalnum() else _word(piece.lower(), known)
    return total


BATCH = 512


def count_many(texts: Iterable[str]) -> int:
    """Total tokens of many texts: pure-Python WordPiece for a little ASCII, else batches.

    Loading the real tokenizer costs ~0.1 s, so `hippo stats` on a small or empty store
    must not pay it; an archive is encoded in batches (one call per text is slow).
    """
    items = [t for t in texts if t]
    if not items:
        return 0
    if sum(map(len, items)) < 20_000 and all(t.isascii() for t in items):
        return sum(count_ascii(t) or 0 for t in items)
    tok = _tokenizer()  # the same tokenizer `count` uses
    return sum(len(e.ids) for start in range(0, len(items), BATCH)
               for e in tok.encode_batch(items[start:start + BATCH], add_special_tokens=False))
