"""What maintenance jobs read and write: consolidation, reindex, undo, retire, projects."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hippo.store.base import Row


class Maintenance(Protocol):
    """What maintenance jobs read and write: consolidation, reindex, undo, retire, projects."""

    # -- consolidation ----------------------------------------------------------------
    def last_audit_id(self) -> int:
        """The id of the newest audit entry (0 when there is none)."""
        ...

    def consolidation_candidates(self) -> list[tuple[int, str, str]]:
        """(id, type, project or "") of active, machine-written, unpinned, non-canonical,
        unsuperseded memories: those consolidation may merge."""
        ...

    def changed_since(self, audit_id: int, actor: str) -> list[int]:
        """Memories changed after audit entry `audit_id` by anyone but `actor`."""
        ...

    def memory_records(self, ids: Sequence[int]) -> list[Row]:
        """The stored rows (brain columns) of the memories `ids` that exist."""
        ...

    def has_memory_vectors(self) -> bool:
        """Whether the Brain's vector table exists (any memory was ever embedded)."""
        ...

    def kept_apart(self) -> list[tuple[int, int, str]]:
        """(a, b, run) pairs an undo of run's merge keeps from merging again (a < b)."""
        ...

    def keep_apart(self, a: int, b: int, run_id: str, at: str) -> None:
        """Keep memories a < b from merging again (recorded by the undo `run_id`)."""
        ...

    def drop_kept_apart(self, run_id: str) -> None:
        """Forget the pairs the undo `run_id` kept apart."""
        ...

    # -- neighbours (Brain vectors) ------------------------------------------------------
    def memory_vector(self, memory_id: int) -> bytes | None:
        """A memory's stored vector (little-endian float32), or None."""
        ...

    def memory_neighbours(self, vector: bytes, k: int, type_: str,
                          project: str) -> list[tuple[int, float]]:
        """The `k` memories of that type and project nearest `vector`: (id, cosine distance),
        nearest first."""
        ...

    def memory_vectors(self) -> Iterator[tuple[int, str, str, bytes]]:
        """Every stored Brain vector: (memory id, type, project or "", vector), streamed."""
        ...

    # -- the Brain's full-text index ---------------------------------------------------
    def fts_intact(self) -> bool:
        """Whether the Brain's full-text index passes its integrity check (takes the write
        lock; a busy store raises BusyError)."""
        ...

    def fts_rebuild(self) -> None:
        """Rebuild the Brain's full-text index from the memories."""
        ...

    # -- corrections, retire, undo -----------------------------------------------------
    def same_statement(self, dedup_key: str, other_than: int) -> int | None:
        """The oldest live (active or done) memory other than `other_than` with that dedup
        key, or None."""
        ...

    def retire_candidates(self, types: Sequence[str]) -> list[Row]:
        """Unpinned, non-canonical memories that are done, or active and of one of `types`,
        by id (brain columns)."""
        ...

    def run_changes(self, run_id: str) -> list[Row]:
        """The audit entries of a run in order: memory_id, action, before, after (JSON)."""
        ...

    def pointing_at(self, memory_id: int) -> list[int]:
        """Memories consolidated into or superseded by `memory_id`."""
        ...

    def defer_references(self) -> None:
        """Check references between memories at commit, not per statement (this transaction)."""
        ...

    # -- projects (rename, merge, and their undo) --------------------------------------
    def project_counts(self) -> list[tuple[str, str | None, int, int | None]]:
        """(what, project, rows, active) per project for memories (active: how many are),
        then sessions, chunks and dirs (active None)."""
        ...

    def project_exists(self, name: str) -> bool:
        """Whether any memory, session, chunk or recorded directory belongs to `name`."""
        ...

    def project_memories(self, project: str) -> list[Row]:
        """Every memory of `project` by id, any status (brain columns and dedup_key)."""
        ...

    def live_statement(self, dedup_key: str) -> Row | None:
        """The oldest active or done memory with that dedup key (brain columns), or None."""
        ...

    def move_project(self, run_id: str, src: str, dst: str) -> None:
        """Move sessions, chunks (and their vectors), directories and hard-forgotten
        memories of `src` to `dst`, saving each move under `run_id`."""
        ...

    def project_moves(self, run_id: str) -> list[Row]:
        """The moves saved under `run_id`: tbl, row_key, before, after (by tbl, row_key)."""
        ...

    def moved_row(self, table: str, row_key: str) -> Row | None:
        """The row a saved move names ({"project": ...}), or None when it is gone."""
        ...

    def set_row_project(self, table: str, row_key: str, project: str | None, *,
                        echo_vectors: bool) -> None:
        """Put the row a saved move names in `project` (a chunk's vector too when
        `echo_vectors`)."""
        ...

    def save_move(self, run_id: str, table: str, row_key: str, before: Any,
                  after: Any) -> None:
        """Save one move of a row from project `before` to `after` under `run_id`."""
        ...

    def has_echo_vectors(self) -> bool:
        """Whether the Echo vector table exists."""
        ...

    # -- reindex (each store's live vector table and its side table) ---------------------
    def vector_count(self, store: str) -> int:
        """How many vectors the store's live table holds."""
        ...

    def side_count(self, store: str) -> int:
        """How many vectors the store's side table (a reindex in progress) holds."""
        ...

    def has_side_table(self, store: str) -> bool:
        """Whether the store has a side table."""
        ...

    def vector_metadata(self, store: str,
                        keys: Sequence[int] | None = None) -> dict[int, tuple[Any, ...]]:
        """key -> metadata columns of the live vectors (only `keys` when given)."""
        ...

    def side_metadata(self, store: str) -> dict[int, tuple[Any, tuple[Any, ...]]]:
        """key -> (content hash, metadata columns) of the side table's vectors."""
        ...

    def content_hashes(self, store: str) -> list[tuple[int, str]]:
        """(id, content hash) of every text the store holds."""
        ...

    def texts(self, store: str, keys: Sequence[int]) -> list[tuple[int, str, str]]:
        """(id, text, content hash) of the texts `keys` that exist."""
        ...

    def write_side(self, store: str, key: int, vector: bytes, metadata: tuple[Any, ...],
                   content_hash: str) -> None:
        """Put one vector (replacing any) into the store's side table."""
        ...

    def drop_side_row(self, store: str, key: int) -> None:
        """Remove one vector from the store's side table."""
        ...

    def create_side_table(self, store: str, dim: int, *, drop_old: bool) -> None:
        """Create the side table for `dim` dimensions (after dropping the old one when
        `drop_old`); an existing one is kept."""
        ...

    def swap_side_table(self, store: str, dim: int) -> None:
        """Replace the live table by the side table's vectors and drop the side table."""
        ...
