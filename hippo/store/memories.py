"""Brain memories: insert, read, update, status, provenance links.

Rows are the `memories` columns as stored (`tags`/`source` as JSON text); the SPEC record
is built from them by `hippo.records.to_record`. Which memories a listing or a search
covers is a `MemoryFilter`: data, translated to a query by each backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.base import Row


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories: every field left empty matches all. `projects` None means every
    project, a None inside it the global memories; every tag in `tags` must be present."""

    statuses: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    projects: tuple[str | None, ...] | None = None
    since: str | None = None  # ISO-8601 UTC, inclusive, on created_at
    until: str | None = None  # inclusive
    tags: tuple[str, ...] = ()  # compared lower-cased
    current: bool = False  # only memories no newer one supersedes (validity still open)
    as_of: str | None = None  # only memories valid then (valid_from <= T < valid_to)
    unverified: bool = False  # only machine rules/preferences no person verified or pinned


class Memories(Protocol):
    """Brain memories: insert, read, update, status, provenance links."""

    # -- rows ------------------------------------------------------------------------
    def get(self, memory_id: int) -> Row | None:
        """The memory's row, or None."""
        ...

    def get_many(self, ids: Sequence[int]) -> list[Row]:
        """The rows of those of `ids` that exist (in no particular order)."""
        ...

    def active_in_scope(self, project: str | None) -> int:
        """Active memories a search of `project` sees: its own and the global ones."""
        ...

    def exists(self, memory_id: int) -> bool:
        """Whether a row holds this id (whatever its status)."""
        ...

    def insert(self, values: dict[str, Any]) -> int:
        """Store a new row (its id kept when given); returns its id."""
        ...

    def find_same(self, dedup_key: str) -> Row | None:
        """The oldest active or done memory with this dedup key."""
        ...

    def reinforce(self, memory_id: int, *, stamp: str, confidence: float, importance: float,
                  tags: str, source: str | None) -> None:
        """Record a memory seen again: confirmed and updated at `stamp`, richer fields."""
        ...

    def update(self, memory_id: int, values: dict[str, Any]) -> None:
        """Set these columns (names of the SPEC record, dedup_key, content_hash, updated_at)."""
        ...

    def restore(self, values: dict[str, Any]) -> None:
        """Write every column of a row back exactly (an undo)."""
        ...

    def delete(self, memory_id: int) -> None:
        """Remove the row entirely (undoing its creation)."""
        ...

    def erase(self, memory_id: int, stamp: str) -> None:
        """Hard forget: blank the row's text, tags, provenance, vector and links; freed
        space is zeroed."""
        ...

    def optimize_text_index(self) -> None:
        """Merge the full-text index, so an erased text leaves no term behind."""
        ...

    def defer_references(self) -> None:
        """Until the commit, allow references to memories stored later in the transaction."""
        ...

    def active_elsewhere(self, project: str | None) -> int:
        """Active memories of other projects than `project` (global ones not counted)."""
        ...

    def listing(self, where: MemoryFilter, limit: int = 0) -> list[Row]:
        """The memories `where` selects, newest id first; `limit` 0 is all."""
        ...

    def export_rows(self) -> Iterator[Row]:
        """Every row, in id order."""
        ...

    def held(self, ids: Iterable[int]) -> dict[int, str]:
        """Of `ids`, those stored, with their dedup keys."""
        ...

    def references(self) -> list[Row]:
        """id, superseded_by, consolidated_into of every memory that points at another."""
        ...

    def citing_session(self, session_key: str) -> list[int]:
        """Ids of memories whose `source` names this Echo session, in order."""
        ...

    def pending_tasks(self, project: str | None, tag: str) -> list[Row]:
        """id, source of active machine tasks of `project` tagged `tag`."""
        ...

    def drop_unused_cache(self, hashes: Sequence[str]) -> int:
        """Erase the embedding cache rows of these content hashes that no memory and no
        Echo chunk still holds; how many went."""
        ...

    # -- vectors (only active memories are in vector matching) ------------------------
    def put_vector(self, memory_id: int, vector: np.ndarray, *, project: str, type: str,
                   tier: str, created: int) -> None:
        """(Re)place the memory's vector with its filter columns."""
        ...

    def drop_vector(self, memory_id: int) -> None:
        """Remove the memory's vector, if any."""
        ...

    def vector(self, memory_id: int) -> np.ndarray | None:
        """The memory's stored vector, or None."""
        ...

    def has_vectors(self) -> bool:
        """Whether the Brain vector index exists (a store never embedded has none)."""
        ...

    def nearest(self, vector: np.ndarray, k: int, *, type: str, project: str
                ) -> list[tuple[int, float]]:
        """The `k` nearest vectors of this type and project ('' for global): (id, distance)."""
        ...

    def current_active(self, memory_id: int) -> Row | None:
        """The memory's row if it is current: active, not superseded, its validity open."""
        ...

    def replaced(self, memory_id: int) -> list[Row]:
        """The memories this one superseded (their `superseded_by` is its id)."""
        ...

    # -- provenance links to Echo chunks ------------------------------------------------
    def sources(self, memory_id: int) -> list[Row]:
        """The memory's linked chunks with their session, path, lines and text."""
        ...

    def chunk_ids(self, memory_id: int) -> list[int]:
        """Ids of the chunks linked to the memory, in order."""
        ...

    def link(self, memory_id: int, chunk_id: int, stamp: str) -> None:
        """Link a chunk to the memory (kept once)."""
        ...

    def unlink(self, memory_id: int, chunk_id: int) -> None:
        """Remove a chunk's link to the memory."""
        ...

    def linked_to(self, chunk_ids: Iterable[int]) -> list[int]:
        """Ids of the memories linked to any of these chunks, in order."""
        ...

    # -- what the extractor reads of Echo -----------------------------------------------
    def chunks_after(self, after: int) -> list[Row]:
        """id, session_id of every Echo chunk past id `after`, in id order."""
        ...

    def session(self, session_id: int) -> Row | None:
        """id, session_key, project, format, started_at of an Echo session."""
        ...

    def session_id(self, session_key: str) -> int | None:
        """The id of the Echo session with this key."""
        ...

    def session_span(self, session_id: int) -> tuple[int | None, int | None]:
        """The first and last chunk id of an Echo session."""
        ...

    def segment(self, session_id: int, first: int, last: int) -> list[Row]:
        """The session's chunks with ids in [first, last], in sequence order."""
        ...
