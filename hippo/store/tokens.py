"""Token matrices of stored texts and of queries (late interaction), by model and content hash."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

# Set in `meta` when every cached token matrix drops near-copies of repeated tokens
# (`TokenMatrix.distinct`): on a file created since December 2026, or after
# `hippo doctor --fix` compacted an older one.
TOKENS_DISTINCT_KEY = "tokens.distinct"


class TokenMatrices(Protocol):
    """Token matrices of stored texts and of queries (late interaction), by model and content hash.

    `model` names the format too (the embedding model id plus a suffix such as
    `#tokens-t1`); a matrix is an opaque blob (`hippo.retrieve.tokenmatrix.TokenMatrix`)."""

    def get(self, model: str, content_hash: str) -> bytes | None:
        """The token matrix of the text with `content_hash` under `model`, or None."""
        ...

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """The token matrices under `model` of those `hashes` that have one."""
        ...

    def put(self, model: str, matrices: Iterable[tuple[str, bytes]], created_at: str, *,
            replace: bool = True) -> None:
        """Store (content hash, matrix) pairs under `model`; `replace` False keeps a cached one."""
        ...
