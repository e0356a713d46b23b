"""SQLite: what `hippo import` writes that no other write does (Echo chunks under their
exported ids)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql

HELD = ("SELECT id FROM echo_chunks WHERE id IN (SELECT value FROM json_each(?)) "
        "ORDER BY id")
NEXT_SEQ = "SELECT coalesce(max(seq), -1) + 1 FROM echo_chunks WHERE session_id = ?"
CHUNK_PUT = (
    "INSERT INTO echo_chunks(id, session_id, seq, source_path, project, roles, line_start, "
    "line_end, message_ids, started_at, ended_at, text, content_hash, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SqliteImports:
    def __init__(self, db: Sql) -> None:
        self.db = db

    def held_chunks(self, ids: Sequence[int]) -> list[int]:
        import orjson

        return [r[0] for r in self.db.execute(HELD, (orjson.dumps([int(i) for i in ids]).decode(),))]

    def put_chunk(self, chunk_id: int, session_id: int, *, source_path: str,
                  project: str | None, roles: Sequence[str], line_start: int | None,
                  line_end: int | None, message_ids: Sequence[str], started_at: str | None,
                  ended_at: str | None, text: str) -> None:
        import orjson

        from hippo.timeutil import now_iso
        from hippo.vectors import content_hash

        seq = int(self.db.scalar(NEXT_SEQ, (session_id,)))
        self.db.execute(CHUNK_PUT, (
            chunk_id, session_id, seq, source_path, project, ",".join(roles), line_start,
            line_end, orjson.dumps(list(message_ids)).decode(), started_at, ended_at, text,
            content_hash(text), now_iso()))

    def advance_ids(self) -> None:
        """Nothing to move: AUTOINCREMENT's counter follows every id inserted."""
