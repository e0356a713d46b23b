"""PostgreSQL: a project's rename or merge moves the rows keyed by it (saved in
`project_moves` for undo); part of `PgMaintenance`. The vector tables carry no project
(filters join the rows they belong to), so a move never touches them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.store.memories import COLUMNS, FIND_SAME
from hippo.store.postgres.filters import VISIBLE

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql

# Groups in SQLite's order: NULL first, then the names byte by byte.
COUNTS = {
    "memories": ("SELECT project, count(*), count(*) FILTER (WHERE status = 'active') "
                 'FROM memories GROUP BY project ORDER BY project COLLATE "C" NULLS FIRST'),
    # Echo's counts: only the sessions this user may see (another's private ones are not
    # theirs to count, docs/privacy.md).
    "sessions": (f"SELECT e.project, count(*) FROM echo_sessions e WHERE {VISIBLE} "
                 'GROUP BY e.project ORDER BY e.project COLLATE "C" NULLS FIRST'),
    "chunks": ("SELECT c.project, count(*) FROM echo_chunks c JOIN echo_sessions e "
               f"ON e.id = c.session_id WHERE {VISIBLE} "
               'GROUP BY c.project ORDER BY c.project COLLATE "C" NULLS FIRST'),
    "dirs": ("SELECT project, count(*) FROM project_dirs GROUP BY project "
             'ORDER BY project COLLATE "C" NULLS FIRST'),
}
EXISTS = (
    "SELECT EXISTS (SELECT 1 FROM memories WHERE project = :p) "
    "OR EXISTS (SELECT 1 FROM echo_sessions WHERE project = :p) "
    "OR EXISTS (SELECT 1 FROM echo_chunks WHERE project = :p) "
    "OR EXISTS (SELECT 1 FROM project_dirs WHERE project = :p)"
)
MEMORIES = f"SELECT {COLUMNS}, dedup_key FROM memories WHERE project = ? ORDER BY id"
PURGED = "dedup_key = 'purged:' || id"  # a hard-forgotten row keeps its key as it is

# Rows that are not memories: table -> (its key as text, which of its rows). Names from
# code only.
MOVED_ROWS = {
    "echo_sessions": ("id::text", ""),
    "echo_chunks": ("id::text", ""),
    "project_dirs": ("path", ""),
    "memories": ("id::text", f" AND {PURGED}"),
}
# run, src, dst: save each row's move, then make it.
SAVE_MOVES = {t: ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
                  f"SELECT :run, '{t}', {key}, project, :dst FROM {t} "
                  f"WHERE project = :src{only}")
              for t, (key, only) in MOVED_ROWS.items()}
MAKE_MOVES = {t: f"UPDATE {t} SET project = :dst WHERE project = :src{only}"
              for t, (_, only) in MOVED_ROWS.items()}

# Undo: each saved move back, row by row (row keys and table names in byte order).
MOVED = ("SELECT tbl, row_key, before, after FROM project_moves WHERE run_id = ? "
         'ORDER BY tbl COLLATE "C", row_key COLLATE "C"')
ROW_BY_KEY = {
    "echo_sessions": "id = :key::bigint",
    "echo_chunks": "id = :key::bigint",
    "project_dirs": "path = :key",
    "memories": "id = :key::bigint",
}
CURRENT = {t: f"SELECT project FROM {t} WHERE {where}" for t, where in ROW_BY_KEY.items()}
SET_BACK = {t: f"UPDATE {t} SET project = :project WHERE {where}"
            for t, where in ROW_BY_KEY.items()}
SAVE_MOVE = ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
             "VALUES (?, ?, ?, ?, ?)")


class PgProjectMoves:
    db: PgSql

    def project_counts(self) -> list[tuple[str, str | None, int, int | None]]:
        return [(what, row[0], int(row[1]), int(row[2]) if what == "memories" else None)
                for what, sql in COUNTS.items() for row in self.db.execute(sql)]

    def project_exists(self, name: str) -> bool:
        return bool(self.db.scalar(EXISTS, {"p": name}))

    def project_memories(self, project: str) -> list[Row]:
        return self.db.rows(MEMORIES, (project,))

    def live_statement(self, dedup_key: str) -> Row | None:
        return self.db.row(FIND_SAME, (dedup_key,))

    def move_project(self, run_id: str, src: str, dst: str) -> None:
        params = {"run": run_id, "src": src, "dst": dst}
        for table in MOVED_ROWS:
            self.db.execute(SAVE_MOVES[table], params)
            self.db.execute(MAKE_MOVES[table], params)

    def project_moves(self, run_id: str) -> list[Row]:
        return self.db.rows(MOVED, (run_id,))

    def moved_row(self, table: str, row_key: str) -> Row | None:
        return self.db.row(CURRENT[table], {"key": row_key})

    def set_row_project(self, table: str, row_key: str, project: str | None, *,
                        echo_vectors: bool) -> None:
        self.db.execute(SET_BACK[table], {"key": row_key, "project": project})

    def save_move(self, run_id: str, table: str, row_key: str, before: Any,
                  after: Any) -> None:
        self.db.execute(SAVE_MOVE, (run_id, table, row_key, before, after))

    def has_echo_vectors(self) -> bool:
        return self.db.has_table("echo_vec")
