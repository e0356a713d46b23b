"""The counts `hippo stats` shows."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from hippo.store.base import Row

# The columns `memories_by` groups by.
MemoryField = Literal["status", "type", "tier", "author", "project"]


class Stats(Protocol):
    """The counts `hippo stats` shows."""

    def size_bytes(self) -> int:
        """How much disk the store takes (a file: with its WAL; a server: its tables)."""
        ...

    def schema_steps(self) -> list[str]:
        """The names of the schema steps applied, in order."""
        ...

    def memory_count(self, *, active: bool = False) -> int:
        """How many memories there are (`active`: only the active ones)."""
        ...

    def memories_by(self, field: MemoryField, *, active: bool) -> dict[str, int]:
        """How many memories have each value of `field` (as text; None as "None"), in order
        of the value; `active`: only the active ones."""
        ...

    def unverified(self) -> int:
        """Current machine-written rules and preferences no layer loads until reviewed."""
        ...

    def vector_count(self, store: str) -> int:
        """How many vectors the index of `store` (brain, echo) holds (0: none yet)."""
        ...

    def session_count(self) -> int:
        """How many transcript sessions Echo holds."""
        ...

    def file_count(self) -> int:
        """How many transcript files have been read."""
        ...

    def cache_entries(self) -> int:
        """How many entries the embedding cache holds."""
        ...

    def counters(self, *, embed: bool) -> list[tuple[str, Any]]:
        """The named counters, by name: those of the embedding cache (`embed.*`), or the
        others."""
        ...

    def latest_runs(self) -> list[Row]:
        """Each job's last run (job, run_id, started_at, finished_at, outcome), by job."""
        ...

    def chunks_pending(self) -> int:
        """How many Echo chunks extraction has not read yet."""
        ...

    def spend(self) -> list[Row]:
        """Each paid provider's state today (calls, tokens, failures, open_until, last_error)."""
        ...
