"""What `hippo import` writes that no other write does: Echo chunks under the ids their
export gave them, and the id counters moved past every id imported."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Imports(Protocol):
    """What `hippo import` writes that no other write does."""

    def held_chunks(self, ids: Sequence[int]) -> list[int]:
        """Of `ids`, the chunks stored, whoever's session holds them, in order."""
        ...

    def put_chunk(self, chunk_id: int, session_id: int, *, source_path: str,
                  project: str | None, roles: Sequence[str], line_start: int | None,
                  line_end: int | None, message_ids: Sequence[str], started_at: str | None,
                  ended_at: str | None, text: str) -> None:
        """Append one chunk to its session (the next sequence number) under `chunk_id`."""
        ...

    def advance_ids(self) -> None:
        """Move each table's id counter past the largest id anything names (rows, audit,
        links, a memory's source), so no later insert reuses an imported id."""
        ...
