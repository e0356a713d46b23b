"""Cached embeddings of texts, by embedding model and content hash: a text is embedded once."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol


class EmbedCache(Protocol):
    """Cached embeddings of texts, by embedding model and content hash: a text is embedded once.

    Vectors are float32 blobs (`hippo.vectors.to_blob`)."""

    def get(self, model: str, content_hash: str) -> bytes | None:
        """The cached vector of the text with `content_hash` under `model`, or None."""
        ...

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """The cached vectors under `model` of those `hashes` that have one."""
        ...

    def put_many(self, model: str, vectors: Iterable[tuple[str, bytes]] | Mapping[str, bytes],
                 created_at: str) -> None:
        """Cache (content hash, vector) pairs under `model`; a hash already cached is kept."""
        ...
