"""PostgreSQL: how far each transcript file has been read, in the `watermarks` table.

Each user's own: two users' ingests read their own files (on two machines, the same path
may name two files), so every row is keyed by its owner and the path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.store.postgres.schema import USER
from hippo.store.watermarks import Watermark

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

OWN = f"owner = {USER}"
ALL = ('SELECT path, "offset", line, head_hash, size, mtime, format, session_id, complete '
       f"FROM watermarks WHERE {OWN}")
UPSERT = (
    'INSERT INTO watermarks(path, "offset", line, head_hash, size, mtime, format, session_id, '
    "complete, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    'ON CONFLICT (owner, path) DO UPDATE SET "offset" = excluded."offset", '
    "line = excluded.line, head_hash = excluded.head_hash, size = excluded.size, "
    "mtime = excluded.mtime, format = excluded.format, session_id = excluded.session_id, "
    "complete = excluded.complete, updated_at = excluded.updated_at"
)
OFFSETS = f'SELECT path, "offset" FROM watermarks WHERE {OWN}'
DELETE = f"DELETE FROM watermarks WHERE path = ? AND {OWN}"


class PgWatermarks:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def all(self) -> dict[str, Watermark]:
        return {r[0]: Watermark(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]))
                for r in self.db.execute(ALL)}

    def save(self, mark: Watermark) -> None:
        from hippo.timeutil import now_iso

        m = mark
        self.db.execute(UPSERT, (m.path, m.offset, m.line, m.head_hash, m.size, m.mtime,
                                 m.format, m.session_id, int(m.complete), now_iso()))

    def offsets(self) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self.db.execute(OFFSETS)]

    def delete(self, path: str) -> None:
        self.db.execute(DELETE, (path,))
