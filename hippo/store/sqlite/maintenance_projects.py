"""SQLite: a project's rename or merge moves the rows keyed by it (saved in `project_moves`
for undo); part of `SqliteMaintenance`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.store.memories import COLUMNS, FIND_SAME

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sqlite.database import Sql

COUNTS = {
    "memories": "SELECT project, count(*), sum(status = 'active') FROM memories GROUP BY project",
    "sessions": "SELECT project, count(*) FROM echo_sessions GROUP BY project",
    "chunks": "SELECT project, count(*) FROM echo_chunks GROUP BY project",
    "dirs": "SELECT project, count(*) FROM project_dirs GROUP BY project",
}
EXISTS = (
    "SELECT 1 WHERE EXISTS (SELECT 1 FROM memories WHERE project = ?1) "
    "OR EXISTS (SELECT 1 FROM echo_sessions WHERE project = ?1) "
    "OR EXISTS (SELECT 1 FROM echo_chunks WHERE project = ?1) "
    "OR EXISTS (SELECT 1 FROM project_dirs WHERE project = ?1)"
)
MEMORIES = f"SELECT {COLUMNS}, dedup_key FROM memories WHERE project = ? ORDER BY id"
PURGED = "dedup_key = 'purged:' || id"  # a hard-forgotten row keeps its key as it is

# Rows that are not memories: table -> (its key, which of its rows). Names from code only.
MOVED_ROWS = {
    "echo_sessions": ("id", ""),
    "echo_chunks": ("id", ""),
    "project_dirs": ("path", ""),
    "memories": ("id", f" AND {PURGED}"),
}
# ?1 run, ?2 from, ?3 to: save each row's move, then make it.
SAVE_MOVES = {t: ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
                  f"SELECT ?1, '{t}', {key}, project, ?3 FROM {t} WHERE project = ?2{only}")
              for t, (key, only) in MOVED_ROWS.items()}
MAKE_MOVES = {t: f"UPDATE {t} SET project = ?3 WHERE project = ?2{only}"
              for t, (_, only) in MOVED_ROWS.items()}
ECHO_VEC_MOVE = "UPDATE echo_vec SET project = ?2 WHERE project = ?1"

# Undo: each saved move back, row by row. ?1 the row's key, ?2 the project to set.
MOVED = "SELECT tbl, row_key, before, after FROM project_moves WHERE run_id = ? ORDER BY tbl, row_key"
CURRENT = {
    "echo_sessions": "SELECT project FROM echo_sessions WHERE id = CAST(?1 AS INTEGER)",
    "echo_chunks": "SELECT project FROM echo_chunks WHERE id = CAST(?1 AS INTEGER)",
    "project_dirs": "SELECT project FROM project_dirs WHERE path = ?1",
    "memories": "SELECT project FROM memories WHERE id = CAST(?1 AS INTEGER)",
}
SET_BACK = {
    "echo_sessions": "UPDATE echo_sessions SET project = ?2 WHERE id = CAST(?1 AS INTEGER)",
    "echo_chunks": "UPDATE echo_chunks SET project = ?2 WHERE id = CAST(?1 AS INTEGER)",
    "project_dirs": "UPDATE project_dirs SET project = ?2 WHERE path = ?1",
    "memories": "UPDATE memories SET project = ?2 WHERE id = CAST(?1 AS INTEGER)",
}
ECHO_VEC_SET = "UPDATE echo_vec SET project = ?2 WHERE chunk_id = CAST(?1 AS INTEGER)"
SAVE_MOVE = ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
             "VALUES (?, ?, ?, ?, ?)")


class SqliteProjectMoves:
    db: Sql

    def project_counts(self) -> list[tuple[str, str | None, int, int | None]]:
        return [(what, row[0], row[1], row[2] if what == "memories" else None)
                for what, sql in COUNTS.items() for row in self.db.execute(sql)]

    def project_exists(self, name: str) -> bool:
        return bool(self.db.scalar(EXISTS, (name,)))

    def project_memories(self, project: str) -> list[Row]:
        return self.db.rows(MEMORIES, (project,))

    def live_statement(self, dedup_key: str) -> Row | None:
        return self.db.row(FIND_SAME, (dedup_key,))

    def move_project(self, run_id: str, src: str, dst: str) -> None:
        for table in MOVED_ROWS:
            self.db.execute(SAVE_MOVES[table], (run_id, src, dst))
            self.db.execute(MAKE_MOVES[table], (run_id, src, dst))
        if self.has_echo_vectors():
            self.db.execute(ECHO_VEC_MOVE, (src, dst))

    def project_moves(self, run_id: str) -> list[Row]:
        return self.db.rows(MOVED, (run_id,))

    def moved_row(self, table: str, row_key: str) -> Row | None:
        return self.db.row(CURRENT[table], (row_key,))

    def set_row_project(self, table: str, row_key: str, project: str | None, *,
                        echo_vectors: bool) -> None:
        self.db.execute(SET_BACK[table], (row_key, project))
        if table == "echo_chunks" and echo_vectors:
            self.db.execute(ECHO_VEC_SET, (row_key, project or ""))

    def save_move(self, run_id: str, table: str, row_key: str, before: Any,
                  after: Any) -> None:
        self.db.execute(SAVE_MOVE, (run_id, table, row_key, before, after))

    def has_echo_vectors(self) -> bool:
        return self.db.has_table("echo_vec")
