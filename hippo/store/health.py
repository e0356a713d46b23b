"""The checks `hippo doctor` runs on the store, and their repairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hippo.store.base import Row


@dataclass(frozen=True, slots=True)
class IndexCheck:
    """A full-text index's own consistency check: `checked` False when the store could not
    run it here (read-only); `error` the store's message when the index is damaged."""

    checked: bool = True
    error: str | None = None


class Health(Protocol):
    """The checks `hippo doctor` runs on the store, and their repairs."""

    def integrity(self, limit: int) -> list[str]:
        """The store's own check of its file: ["ok"], or up to `limit` problems."""
        ...

    def pending_migrations(self) -> list[str]:
        """The schema steps this store lacks, in order."""
        ...

    def foreign_key_violations(self) -> int:
        """How many rows point at a row that is not there."""
        ...

    def check_fulltext(self, index: str) -> IndexCheck:
        """Run the full-text index `index`'s own check (memories_fts, echo_fts)."""
        ...

    def rebuild_fulltext(self, index: str) -> None:
        """Rebuild the full-text index `index` from its table."""
        ...

    def has_vectors(self, store: str) -> bool:
        """Whether the vector index of `store` (brain, echo) exists."""
        ...

    def vectors_declare(self, store: str, dimensions: int) -> bool:
        """Whether the vector index of `store` is declared with `dimensions`."""
        ...

    def unembedded(self, store: str) -> list[int]:
        """Ids that should have a vector in `store` and have none (active memories, chunks)."""
        ...

    def orphan_vectors(self, store: str) -> list[int]:
        """Ids of vectors in `store` with no active memory (brain) or chunk (echo) behind."""
        ...

    def chunks_to_embed(self, ids: Sequence[int]) -> list[Row]:
        """Those Echo chunks: id, text, project, session_id, started_at."""
        ...

    def drop_chunk_vector(self, chunk_id: int) -> None:
        """Remove the vector of an Echo chunk."""
        ...

    def put_chunk_vector(self, chunk_id: int, blob: bytes, project: str, session_id: int,
                         started: int | None) -> None:
        """Store the vector of an Echo chunk, with its filter columns."""
        ...

    def texts_without_token_matrix(self, store: str, model: str) -> list[str]:
        """Texts `store`'s searches score (active memories, chunks) with no cached matrix
        under `model`."""
        ...

    def token_matrix_count(self, suffix: str) -> int:
        """How many cached entries have a model name ending in `suffix`."""
        ...

    def token_matrices_after(self, suffix: str, after: tuple[str, str],
                             limit: int) -> list[Row]:
        """The next `limit` cached entries (model, content_hash, vector) ending in `suffix`,
        in (model, content_hash) order after `after`."""
        ...

    def replace_token_matrix(self, model: str, content_hash: str, blob: bytes) -> None:
        """Store a new value for one cached entry."""
        ...

    def dangling_provenance(self) -> int:
        """How many provenance links point at a missing Echo chunk."""
        ...

    def drop_dangling_provenance(self) -> None:
        """Remove the provenance links that point at a missing Echo chunk."""
        ...

    def foreign_provenance(self) -> list[Row]:
        """Links (memory_id, chunk_id, session_key) whose chunk belongs to a session the
        memory's source does not name, by memory and chunk."""
        ...

    def references(self) -> list[Row]:
        """Every memory's superseded_by and consolidated_into that is set (id first)."""
        ...

    def watermarks(self) -> list[tuple[str, int]]:
        """Every transcript file read so far, with the offset read up to."""
        ...

    def drop_watermark(self, path: str) -> None:
        """Forget how far `path` was read."""
        ...
