"""SQLite: what `hippo extract` reads of Echo (a part of `SqliteMemories`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sqlite.database import Sql

PENDING = "SELECT id, session_id FROM echo_chunks WHERE id > ? ORDER BY id"
SESSION = ("SELECT id, session_key, project, format, started_at FROM echo_sessions "
           "WHERE id = ?")
SESSION_BY_KEY = "SELECT id FROM echo_sessions WHERE session_key = ?"
SEGMENT = ("SELECT id, seq, source_path, roles, line_start, line_end, message_ids, started_at, "
           "text FROM echo_chunks WHERE session_id = ? AND id BETWEEN ? AND ? ORDER BY seq, id")
SESSION_RANGE = "SELECT min(id) AS first, max(id) AS last FROM echo_chunks WHERE session_id = ?"


class ExtractReads:
    db: Sql

    def chunks_after(self, after: int) -> list[Row]:
        return self.db.rows(PENDING, (after,))

    def session(self, session_id: int) -> Row | None:
        return self.db.row(SESSION, (session_id,))

    def session_id(self, session_key: str) -> int | None:
        sid = self.db.scalar(SESSION_BY_KEY, (session_key,))
        return None if sid is None else int(sid)

    def session_span(self, session_id: int) -> tuple[int | None, int | None]:
        row = self.db.row(SESSION_RANGE, (session_id,))
        return (row["first"], row["last"]) if row else (None, None)

    def segment(self, session_id: int, first: int, last: int) -> list[Row]:
        return self.db.rows(SEGMENT, (session_id, first, last))
