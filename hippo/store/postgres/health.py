"""PostgreSQL: what the server checks its own way (`hippo.store.health.Health`).

SQLite's file checks have their server meaning here: `integrity` is that every table of
hippo's schema is there (the server checks its own pages: data checksums, amcheck);
foreign keys are enforced by the server, never merely declared; a full-text index is a
generated `tsvector` column (always its row's text) with a GIN index, checked as valid
and rebuilt by REINDEX; the size is the schema's tables with their indexes and TOAST.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.store.health import Health, IndexCheck

if TYPE_CHECKING:
    from hippo.store.postgres.database import PgSql

# The tables every hippo schema has (`hippo.store.postgres.schema`, p0001_core).
TABLES = ("meta", "memories", "memory_sources", "audit", "echo_sessions", "echo_chunks",
          "watermarks", "embed_cache", "counters", "runs", "locks", "guard", "keep_apart",
          "project_dirs", "project_moves", "_migrations")
MISSING_TABLES = ("SELECT t FROM unnest(?::text[]) AS t WHERE to_regclass(t) IS NULL "
                  "ORDER BY t LIMIT ?")
# SQLite's FTS5 tables and, here, the GIN index over each table's generated tsvector.
FTS_INDEX = {"memories_fts": "memories_tsv", "echo_fts": "echo_chunks_tsv"}
INDEX_VALID = ("SELECT i.indisvalid AND i.indisready FROM pg_index i "
               "WHERE i.indexrelid = to_regclass(?)")
REINDEX = {"memories_tsv": "REINDEX INDEX memories_tsv",
           "echo_chunks_tsv": "REINDEX INDEX echo_chunks_tsv"}
SIZE = ("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'm')")


def _gin(index: str) -> str:
    if index not in FTS_INDEX:
        raise ValueError(f"unknown full-text index {index!r}")
    return FTS_INDEX[index]


class PgHealth(Health):
    db: PgSql

    def integrity(self, limit: int) -> list[str]:
        missing = [r["t"] for r in self.db.rows(MISSING_TABLES, (list(TABLES), int(limit)))]
        return [f"table {t} is missing" for t in missing] or ["ok"]

    def pending_migrations(self) -> list[str]:
        from hippo.store.postgres.migrations import pending

        return pending(self.db)

    def foreign_key_violations(self) -> int:
        return 0  # the server enforces every declared foreign key on each write

    def check_fulltext(self, index: str) -> IndexCheck:
        gin = _gin(index)
        valid = self.db.scalar(INDEX_VALID, (gin,))
        if valid is None:
            return IndexCheck(error=f"index {gin} is missing")
        return IndexCheck() if valid else IndexCheck(error=f"index {gin} is not valid")

    def rebuild_fulltext(self, index: str) -> None:
        self.db.execute(REINDEX[_gin(index)])

    def size_bytes(self) -> int:
        return int(self.db.scalar(SIZE))
