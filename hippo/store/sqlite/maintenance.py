"""SQLite: what maintenance jobs read and write: consolidation, reindex, undo, retire, projects.

Project moves are in `maintenance_projects.py`, the reindex side tables in
`maintenance_reindex.py`; `SqliteMaintenance` is all three."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from hippo.store.memories import COLUMNS
from hippo.store.sqlite.maintenance_projects import SqliteProjectMoves
from hippo.store.sqlite.maintenance_reindex import SqliteReindexTables

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sqlite.database import Sql

LAST_AUDIT = "SELECT coalesce(max(id), 0) FROM audit"
ELIGIBLE = (
    "SELECT id, type, coalesce(project, '') FROM memories WHERE status = 'active' "
    "AND author = 'machine' AND pinned = 0 AND canonical = 0 AND superseded_by IS NULL"
)
CHANGED_SINCE = "SELECT DISTINCT memory_id FROM audit WHERE id > ? AND actor != ?"
RECORDS = f"SELECT {COLUMNS} FROM memories WHERE id IN (SELECT value FROM json_each(?))"
KEEP_APART = "SELECT a, b, run_id FROM keep_apart"
KEEP_APART_ADD = "INSERT OR IGNORE INTO keep_apart(a, b, run_id, at) VALUES (?, ?, ?, ?)"
KEEP_APART_DROP = "DELETE FROM keep_apart WHERE run_id = ?"

KNN = (
    "SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ? "
    "AND type = ? AND project = ?"
)
VECTOR = "SELECT embedding FROM memories_vec WHERE memory_id = ?"
SCAN = "SELECT memory_id, type, project, embedding FROM memories_vec"

FTS_CHECK = "INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)"
FTS_REBUILD = "INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')"

SAME_STATEMENT = ("SELECT id FROM memories WHERE dedup_key = ? AND id != ? "
                  "AND status IN ('active', 'done') ORDER BY id LIMIT 1")
RETIRE_CANDIDATES = (
    f"SELECT {COLUMNS} FROM memories WHERE pinned = 0 AND canonical = 0 AND "
    "(status = 'done' OR (status = 'active' AND type IN (SELECT value FROM json_each(?)))) "
    "ORDER BY id"
)
RUN_AUDIT = "SELECT memory_id, action, before, after FROM audit WHERE run_id = ? ORDER BY id"
POINTING_AT = "SELECT id FROM memories WHERE consolidated_into = ? OR superseded_by = ?"
DEFER_FOREIGN_KEYS = "PRAGMA defer_foreign_keys = ON"


def _ids(ids: Sequence[Any]) -> str:
    import orjson

    return orjson.dumps(list(ids)).decode()


class SqliteMaintenance(SqliteProjectMoves, SqliteReindexTables):
    def __init__(self, db: Sql) -> None:
        self.db = db

    # -- consolidation ----------------------------------------------------------------
    def last_audit_id(self) -> int:
        return int(self.db.scalar(LAST_AUDIT))

    def consolidation_candidates(self) -> list[tuple[int, str, str]]:
        return [(r[0], r[1], r[2]) for r in self.db.execute(ELIGIBLE)]

    def changed_since(self, audit_id: int, actor: str) -> list[int]:
        return [r[0] for r in self.db.execute(CHANGED_SINCE, (audit_id, actor))]

    def memory_records(self, ids: Sequence[int]) -> list[Row]:
        return self.db.rows(RECORDS, (_ids(ids),))

    def has_memory_vectors(self) -> bool:
        return self.db.has_table("memories_vec")

    def kept_apart(self) -> list[tuple[int, int, str]]:
        return [(a, b, run_id) for a, b, run_id in self.db.execute(KEEP_APART)]

    def keep_apart(self, a: int, b: int, run_id: str, at: str) -> None:
        self.db.execute(KEEP_APART_ADD, (a, b, run_id, at))

    def drop_kept_apart(self, run_id: str) -> None:
        self.db.execute(KEEP_APART_DROP, (run_id,))

    # -- neighbours -------------------------------------------------------------------
    def memory_vector(self, memory_id: int) -> bytes | None:
        blob = self.db.scalar(VECTOR, (memory_id,))
        return None if blob is None else bytes(blob)

    def memory_neighbours(self, vector: bytes, k: int, type_: str,
                          project: str) -> list[tuple[int, float]]:
        return [(int(r[0]), float(r[1]))
                for r in self.db.execute(KNN, (vector, k, type_, project))]

    def memory_vectors(self) -> Iterator[tuple[int, str, str, bytes]]:
        yield from self.db.execute(SCAN)

    # -- full-text index --------------------------------------------------------------
    def fts_intact(self) -> bool:
        try:
            self.db.conn.execute(FTS_CHECK)  # raw: a failed check is apsw.CorruptError, expected
            return True
        except apsw.CorruptError:
            return False
        except (apsw.BusyError, apsw.LockedError) as exc:  # the check takes the write lock
            from hippo.store.sqlite.errors import translate

            raise translate(exc, self.db.path) from exc

    def fts_rebuild(self) -> None:
        self.db.execute(FTS_REBUILD)

    # -- corrections, retire, undo -----------------------------------------------------
    def same_statement(self, dedup_key: str, other_than: int) -> int | None:
        other = self.db.scalar(SAME_STATEMENT, (dedup_key, other_than))
        return None if other is None else int(other)

    def retire_candidates(self, types: Sequence[str]) -> list[Row]:
        return self.db.rows(RETIRE_CANDIDATES, (_ids(types),))

    def run_changes(self, run_id: str) -> list[Row]:
        return self.db.rows(RUN_AUDIT, (run_id,))

    def pointing_at(self, memory_id: int) -> list[int]:
        return [r[0] for r in self.db.execute(POINTING_AT, (memory_id, memory_id))]

    def defer_references(self) -> None:
        self.db.execute(DEFER_FOREIGN_KEYS)
