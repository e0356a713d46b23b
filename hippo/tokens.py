"""Token counts with the shipped MiniLM WordPiece tokenizer (budgets for prompt text)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


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
    """Number of WordPiece tokens in `text` (no special tokens, no truncation)."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
