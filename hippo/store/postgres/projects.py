"""PostgreSQL: directories seen and the project each belongs to (worktrees share one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql

RECORDED_ONE = "SELECT project, common_dir FROM project_dirs WHERE path = ?"
RECORD = (
    "INSERT INTO project_dirs(path, project, common_dir, seen_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (path) DO UPDATE SET project = excluded.project, "
    "common_dir = excluded.common_dir, seen_at = excluded.seen_at"
)
RECORDED_AMONG = "SELECT path, project FROM project_dirs WHERE path = ANY(?)"


class PgProjectDirs:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def get(self, path: str) -> Row | None:
        return self.db.row(RECORDED_ONE, (path,))

    def record(self, path: str, project: str, common_dir: str | None, seen_at: str) -> None:
        self.db.execute(RECORD, (path, project, common_dir, seen_at))

    def among(self, paths: Sequence[str]) -> list[Row]:
        if not paths:
            return []
        return self.db.rows(RECORDED_AMONG, (list(paths),))
