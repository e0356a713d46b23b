"""PostgreSQL: what maintenance jobs read and write: consolidation, reindex, undo, retire,
projects.

Project moves are in `maintenance_projects.py`, the reindex side tables in
`maintenance_reindex.py`; `PgMaintenance` is all three. The vector tables hold no
metadata: a memory's type and project come from `memories` (joined), and neighbours are
an exact scan (the HNSW index does not serve a filtered query exactly), as SQLite's vec0
KNN is."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from hippo.store.memories import COLUMNS
from hippo.store.postgres.maintenance_projects import PgProjectMoves
from hippo.store.postgres.maintenance_reindex import PgReindexTables
from hippo.store.postgres.vector import Vec

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql

LAST_AUDIT = "SELECT coalesce(max(id), 0) FROM audit"
ELIGIBLE = (
    "SELECT id, type, coalesce(project, '') FROM memories WHERE status = 'active' "
    "AND author = 'machine' AND pinned = 0 AND canonical = 0 AND superseded_by IS NULL "
    "ORDER BY id"
)
CHANGED_SINCE = ("SELECT DISTINCT memory_id FROM audit WHERE id > ? AND actor != ? "
                 "ORDER BY memory_id")
RECORDS = f"SELECT {COLUMNS} FROM memories WHERE id = ANY(?) ORDER BY id"
KEEP_APART = "SELECT a, b, run_id FROM keep_apart ORDER BY a, b"
KEEP_APART_ADD = ("INSERT INTO keep_apart(a, b, run_id, at) VALUES (?, ?, ?, ?) "
                  "ON CONFLICT DO NOTHING")
KEEP_APART_DROP = "DELETE FROM keep_apart WHERE run_id = ?"

# `+ 0` keeps the planner off the HNSW index: the filter must see every vector (exact).
KNN = (
    "SELECT v.memory_id, (v.embedding <=> ?) + 0 AS distance FROM memories_vec v "
    "JOIN memories m ON m.id = v.memory_id WHERE m.type = ? AND coalesce(m.project, '') = ? "
    "ORDER BY distance, v.memory_id LIMIT ?"
)
VECTOR = "SELECT embedding FROM memories_vec WHERE memory_id = ?"
# Streamed a page at a time along the key (no cursor left open between pages).
SCAN = (
    "SELECT v.memory_id, m.type, coalesce(m.project, ''), v.embedding FROM memories_vec v "
    "JOIN memories m ON m.id = v.memory_id WHERE v.memory_id > ? ORDER BY v.memory_id LIMIT ?"
)
SCAN_PAGE = 2000

# The full-text index is a GIN index over a generated column: it cannot drift from the
# text; what can go wrong is an index left invalid (a failed build), which REINDEX fixes.
FTS_CHECK = ("SELECT coalesce(bool_and(i.indisvalid AND i.indisready), false) FROM pg_index i "
             "WHERE i.indexrelid = to_regclass('memories_tsv')")
FTS_REBUILD = "REINDEX INDEX memories_tsv"

SAME_STATEMENT = ("SELECT id FROM memories WHERE dedup_key = ? AND id != ? "
                  "AND status IN ('active', 'done') ORDER BY id LIMIT 1")
RETIRE_CANDIDATES = (
    f"SELECT {COLUMNS} FROM memories WHERE pinned = 0 AND canonical = 0 AND "
    "(status = 'done' OR (status = 'active' AND type = ANY(?))) ORDER BY id"
)
RUN_AUDIT = "SELECT memory_id, action, before, after FROM audit WHERE run_id = ? ORDER BY id"
POINTING_AT = ("SELECT id FROM memories WHERE consolidated_into = ? OR superseded_by = ? "
               "ORDER BY id")
# The references between memories are DEFERRABLE (schema p0001_core).
DEFER_FOREIGN_KEYS = "SET CONSTRAINTS ALL DEFERRED"


class PgMaintenance(PgProjectMoves, PgReindexTables):
    def __init__(self, db: PgSql) -> None:
        self.db = db

    # -- consolidation ----------------------------------------------------------------
    def last_audit_id(self) -> int:
        return int(self.db.scalar(LAST_AUDIT))

    def consolidation_candidates(self) -> list[tuple[int, str, str]]:
        return [(int(r[0]), r[1], r[2]) for r in self.db.execute(ELIGIBLE)]

    def changed_since(self, audit_id: int, actor: str) -> list[int]:
        return [int(r[0]) for r in self.db.execute(CHANGED_SINCE, (audit_id, actor))]

    def memory_records(self, ids: Sequence[int]) -> list[Row]:
        return self.db.rows(RECORDS, ([int(i) for i in ids],))

    def has_memory_vectors(self) -> bool:
        return self.db.has_table("memories_vec")

    def kept_apart(self) -> list[tuple[int, int, str]]:
        return [(int(a), int(b), run_id) for a, b, run_id in self.db.execute(KEEP_APART)]

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
                for r in self.db.execute(KNN, (Vec(vector), type_, project, k))]

    def memory_vectors(self) -> Iterator[tuple[int, str, str, bytes]]:
        last = 0
        while True:
            page = self.db.execute(SCAN, (last, SCAN_PAGE)).fetchall()
            for mid, mtype, project, blob in page:
                yield int(mid), mtype, project, bytes(blob)
            if len(page) < SCAN_PAGE:
                return
            last = int(page[-1][0])

    # -- full-text index --------------------------------------------------------------
    def fts_intact(self) -> bool:
        return bool(self.db.scalar(FTS_CHECK))

    def fts_rebuild(self) -> None:
        self.db.execute(FTS_REBUILD)

    # -- corrections, retire, undo -----------------------------------------------------
    def same_statement(self, dedup_key: str, other_than: int) -> int | None:
        other = self.db.scalar(SAME_STATEMENT, (dedup_key, other_than))
        return None if other is None else int(other)

    def retire_candidates(self, types: Sequence[str]) -> list[Row]:
        return self.db.rows(RETIRE_CANDIDATES, (list(types),))

    def run_changes(self, run_id: str) -> list[Row]:
        return self.db.rows(RUN_AUDIT, (run_id,))

    def pointing_at(self, memory_id: int) -> list[int]:
        return [int(r[0]) for r in self.db.execute(POINTING_AT, (memory_id, memory_id))]

    def defer_references(self) -> None:
        self.db.execute(DEFER_FOREIGN_KEYS)
