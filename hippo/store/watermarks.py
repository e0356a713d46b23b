"""How far each transcript file has been read (the `watermarks` table), once for both
backends. On PostgreSQL each user's own (`{own}`): two users' ingests read their own files
(on two machines, the same path may name two files), so a row is keyed by owner and path."""

from __future__ import annotations

from dataclasses import dataclass

from hippo.store.sql import Repository

# `e`: the rows are owned as Echo's sessions are (`Dialect.own`).
ALL = ('SELECT path, "offset", line, head_hash, size, mtime, format, session_id, complete '
       "FROM watermarks e WHERE {own}")
UPSERT = (
    'INSERT INTO watermarks(path, "offset", line, head_hash, size, mtime, format, session_id, '
    "complete, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    'ON CONFLICT ({watermark_key}) DO UPDATE SET "offset" = excluded."offset", '
    "line = excluded.line, head_hash = excluded.head_hash, size = excluded.size, "
    "mtime = excluded.mtime, format = excluded.format, session_id = excluded.session_id, "
    "complete = excluded.complete, updated_at = excluded.updated_at"
)
# A watermark is its user's (their files, on their machine).
OFFSETS = 'SELECT path, "offset" FROM watermarks e WHERE {own} ORDER BY path{collate}'
DELETE = "DELETE FROM watermarks AS e WHERE path = ? AND {own}"


@dataclass(slots=True)
class Watermark:
    """Where reading a file stopped, and what it looked like then."""

    path: str
    offset: int
    line: int
    head_hash: str | None
    size: int | None
    mtime: float | None
    format: str | None
    session_id: int | None
    complete: bool


class Watermarks(Repository):
    """How far each transcript file has been read."""

    def all(self) -> dict[str, Watermark]:
        """Every file's watermark, by path."""
        return {r[0]: Watermark(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]))
                for r in self.db.execute(self._sql(ALL))}

    def save(self, mark: Watermark) -> None:
        """Record (or replace) a file's watermark, stamped now."""
        from hippo.timeutil import now_iso

        m = mark
        self.db.execute(self._sql(UPSERT), (
            m.path, m.offset, m.line, m.head_hash, m.size, m.mtime, m.format, m.session_id,
            int(m.complete), now_iso()))

    def offsets(self) -> list[tuple[str, int]]:
        """Each file's path and the byte offset read up to, by path."""
        return [(r[0], r[1]) for r in self.db.execute(self._sql(OFFSETS))]

    def delete(self, path: str) -> None:
        """Forget a file's watermark (the next ingest reads it from the start)."""
        self.db.execute(self._sql(DELETE), (path,))
