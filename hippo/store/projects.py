"""Projects: the directories seen and the project each belongs to (worktrees share one),
and a project's rename or merge, which moves the rows keyed by it (saved in
`project_moves` for undo). Vectors that carry a project of their own (SQLite's vec0)
follow through `store.reindex`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.sql import Repository, render

if TYPE_CHECKING:
    from hippo.store.base import Row

RECORDED_ONE = "SELECT project, common_dir FROM project_dirs WHERE path = ?"
RECORD = (
    "INSERT INTO project_dirs(path, project, common_dir, seen_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT(path) DO UPDATE SET project = excluded.project, "
    "common_dir = excluded.common_dir, seen_at = excluded.seen_at"
)
RECORDED_AMONG = "SELECT path, project FROM project_dirs WHERE path {in_list}"

# Groups by name (NULL first, then byte by byte). Echo counts only the sessions this user
# may see (another's private ones are not theirs to count, docs/privacy.md).
BY_NAME = "GROUP BY {p} ORDER BY {p}{{collate}} NULLS FIRST"
COUNTS = {
    "memories": ("SELECT project, count(*), count(*) FILTER (WHERE status = 'active') "
                 "FROM memories " + BY_NAME.format(p="project")),
    "sessions": ("SELECT e.project, count(*) FROM echo_sessions e WHERE {visible} "
                 + BY_NAME.format(p="e.project")),
    "chunks": ("SELECT c.project, count(*) FROM echo_chunks c JOIN echo_sessions e "
               "ON e.id = c.session_id WHERE {visible} " + BY_NAME.format(p="c.project")),
    "dirs": "SELECT project, count(*) FROM project_dirs " + BY_NAME.format(p="project"),
}
EXISTS = (
    "SELECT EXISTS (SELECT 1 FROM memories WHERE project = :p) "
    "OR EXISTS (SELECT 1 FROM echo_sessions WHERE project = :p) "
    "OR EXISTS (SELECT 1 FROM echo_chunks WHERE project = :p) "
    "OR EXISTS (SELECT 1 FROM project_dirs WHERE project = :p)"
)
MEMORIES = "SELECT {columns}, dedup_key FROM memories WHERE project = ? ORDER BY id"
PURGED = "dedup_key = 'purged:' || id"  # a hard-forgotten row keeps its key as it is

# Rows that are not memories: table -> (its key as text, which of its rows). Names from
# code only.
MOVED_ROWS = {
    "echo_sessions": ("CAST(id AS TEXT)", ""),
    "echo_chunks": ("CAST(id AS TEXT)", ""),
    "project_dirs": ("path", ""),
    "memories": ("CAST(id AS TEXT)", f" AND {PURGED}"),
}
# Save each row's move, then make it.
SAVE_MOVES = {t: ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
                  f"SELECT :run, '{t}', {key}, project, :dst FROM {t} "
                  f"WHERE project = :src{only}")
              for t, (key, only) in MOVED_ROWS.items()}
MAKE_MOVES = {t: f"UPDATE {t} SET project = :dst WHERE project = :src{only}"
              for t, (_, only) in MOVED_ROWS.items()}

# Undo: each saved move back, row by row (row keys and table names in byte order).
MOVED = ("SELECT tbl, row_key, before, after FROM project_moves WHERE run_id = ? "
         "ORDER BY tbl{collate}, row_key{collate}")
ROW_BY_KEY = {
    "echo_sessions": "id = CAST(:key AS BIGINT)",
    "echo_chunks": "id = CAST(:key AS BIGINT)",
    "project_dirs": "path = :key",
    "memories": "id = CAST(:key AS BIGINT)",
}
CURRENT = {t: f"SELECT project FROM {t} WHERE {where}" for t, where in ROW_BY_KEY.items()}
SET_BACK = {t: f"UPDATE {t} SET project = :project WHERE {where}"
            for t, where in ROW_BY_KEY.items()}
SAVE_MOVE = ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
             "VALUES (?, ?, ?, ?, ?)")


class Projects(Repository):
    """Directories seen and the project each belongs to; a project's rename or merge: the
    rows it moves, saved for undo."""

    def directory(self, path: str) -> Row | None:
        """project, common_dir recorded for exactly this directory."""
        return self.db.row(RECORDED_ONE, (path,))

    def record_directory(self, path: str, project: str, common_dir: str | None,
                         seen_at: str) -> None:
        """Record (or refresh) a directory's project and repository."""
        self.db.execute(RECORD, (path, project, common_dir, seen_at))

    def directories(self, paths: Sequence[str]) -> list[Row]:
        """path, project of those of `paths` that are recorded."""
        d = self.db.dialect
        return self.db.rows(render(d, RECORDED_AMONG), (d.listed(list(paths)),))

    def counts(self) -> list[tuple[str, str | None, int, int | None]]:
        """(what, project, rows, active) per project for memories (active: how many are),
        then sessions, chunks and dirs (active None)."""
        return [(what, row[0], int(row[1]), int(row[2]) if what == "memories" else None)
                for what, sql in COUNTS.items()
                for row in self.db.execute(self._sql(sql))]

    def exists(self, name: str) -> bool:
        """Whether any memory, session, chunk or recorded directory belongs to `name`."""
        return bool(self.db.scalar(EXISTS, {"p": name}))

    def memories(self, project: str) -> list[Row]:
        """Every memory of `project` by id, any status (brain columns and dedup_key)."""
        from hippo.store.memories import FIELDS  # not at import: a hook reads directories only

        return self.db.rows(MEMORIES.format(columns=", ".join(FIELDS)), (project,))

    def move(self, run_id: str, src: str, dst: str) -> None:
        """Move sessions, chunks, directories and hard-forgotten memories of `src` to
        `dst`, saving each move under `run_id`."""
        params = {"run": run_id, "src": src, "dst": dst}
        for table in MOVED_ROWS:
            self.db.execute(SAVE_MOVES[table], params)
            self.db.execute(MAKE_MOVES[table], params)

    def moves(self, run_id: str) -> list[Row]:
        """The moves saved under `run_id`: tbl, row_key, before, after (by tbl, row_key)."""
        return self.db.rows(self._sql(MOVED), (run_id,))

    def moved_row(self, table: str, row_key: str) -> Row | None:
        """The row a saved move names ({"project": ...}), or None when it is gone."""
        return self.db.row(CURRENT[table], {"key": row_key})

    def set_row_project(self, table: str, row_key: str, project: str | None) -> None:
        """Put the row a saved move names in `project`."""
        self.db.execute(SET_BACK[table], {"key": row_key, "project": project})

    def save_move(self, run_id: str, table: str, row_key: str, before: Any,
                  after: Any) -> None:
        """Save one move of a row from project `before` to `after` under `run_id`."""
        self.db.execute(SAVE_MOVE, (run_id, table, row_key, before, after))
