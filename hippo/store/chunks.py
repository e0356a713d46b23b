"""Echo: transcript sessions and their chunks, verbatim. The protocol and the record every
backend returns (one field list for search results and the export)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from hippo.ingest.chunk import Chunk

# A chunk's record, in this order: what `hippo echo` shows (with `seq`) and what
# `hippo export --store echo` writes (without it).
RECORD_FIELDS = ("id", "session", "format", "project", "source_path", "roles", "line_start",
                 "line_end", "message_ids", "started_at", "ended_at", "seq", "text")
EXPORT_FIELDS = tuple(f for f in RECORD_FIELDS if f != "seq")
# A store many users share (PostgreSQL) shows each user only the sessions they ingested,
# unless this meta key is "on": the team's switch, kept in the store (`hippo config --set`).
SHARED_KEY = "echo.shared"
SHARED_ON = "on"


def to_record(row: Mapping[str, Any], fields: Sequence[str] = RECORD_FIELDS) -> dict[str, Any]:
    """A chunk row as its record: `fields` in order, roles as a list, message ids parsed
    (a ValueError when they are not JSON)."""
    import orjson

    rec = {f: row[f] for f in fields}
    rec["roles"] = row["roles"].split(",") if row["roles"] else []
    rec["message_ids"] = orjson.loads(row["message_ids"]) if row["message_ids"] else []
    return rec


def to_export(row: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk row as `hippo export --store echo` writes it."""
    return to_record(row, EXPORT_FIELDS)


class Chunks(Protocol):
    """Echo: transcript sessions and their chunks, verbatim.

    Rows (`get`) carry the record's fields plus `session_id`; records (`neighbours`,
    `export`) are `to_record`'s."""

    def find_session(self, key: str) -> int | None:
        """The id of the session named `key`, or None."""
        ...

    def add_session(self, key: str, *, fmt: str, source_path: str, project: str | None,
                    cwd: str | None, parent_key: str | None, agent: str | None,
                    started_at: str | None) -> int:
        """The id of the session named `key`, created (no messages yet) on first sight."""
        ...

    def update_session(self, session_id: int, *, messages: int, ended_at: str | None,
                       started_at: str | None, cwd: str | None, project: str | None,
                       agent: str | None, parent_key: str | None) -> None:
        """Count `messages` more, move its end to `ended_at`, fill the fields still unknown."""
        ...

    def add(self, session_id: int, chunks: Sequence[Chunk], texts: Sequence[str],
            vectors: np.ndarray | None, *, source_path: str, project: str | None) -> list[int]:
        """Append chunks (and their vectors) to a session, continuing its sequence numbers;
        their new ids in order."""
        ...

    def session_messages(self, session_id: int) -> list[tuple[list[str], str]]:
        """Each chunk of a session as (its message ids, its text)."""
        ...

    def ids_of_file(self, source_path: str) -> list[int]:
        """The ids of every chunk read from a file."""
        ...

    def ids_of_session(self, key: str) -> list[int]:
        """The ids of every chunk of the session named `key`."""
        ...

    def delete(self, ids: Sequence[int], *, secure: bool = False) -> None:
        """Delete chunks and their vectors; `secure`: freed pages are zeroed (a purge)."""
        ...

    def delete_session(self, key: str) -> None:
        """Delete the session named `key` (its chunks are deleted first)."""
        ...

    def compact_index(self) -> None:
        """Compact the full-text index, so no deleted text lingers in it."""
        ...

    def get(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The rows of those of `ids` that exist, by id."""
        ...

    def count(self, project: str | None = None, *, every_project: bool = False) -> int:
        """Chunks of `project` (None: of no project), or of every project."""
        ...

    def neighbours(self, row: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
        """Records of the chunks up to `n` places either side of `row` in its session, in order."""
        ...

    def export(self) -> Iterator[dict[str, Any]]:
        """Every chunk as its exported record (`to_export`), in id order."""
        ...
