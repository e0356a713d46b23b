"""SQLite: the checks `hippo doctor` runs on the store, and their repairs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.store.health import IndexCheck

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sqlite.database import Sql

INTEGRITY = "PRAGMA integrity_check({limit})"
FOREIGN_KEYS = "PRAGMA foreign_key_check"
FTS_TABLES = ("memories_fts", "echo_fts")
FTS_CHECK = "INSERT INTO {t}({t}, rank) VALUES ('integrity-check', 1)"
FTS_REBUILD = "INSERT INTO {t}({t}) VALUES ('rebuild')"
VEC_TABLE = {"brain": "memories_vec", "echo": "echo_vec"}
TABLE_SQL = "SELECT sql FROM sqlite_master WHERE name = ?"
UNEMBEDDED = {
    "brain": ("SELECT id FROM memories WHERE status = 'active' AND id NOT IN "
              "(SELECT memory_id FROM memories_vec)"),
    "echo": "SELECT id FROM echo_chunks WHERE id NOT IN (SELECT chunk_id FROM echo_vec)",
}
ORPHANS = {
    "brain": ("SELECT memory_id FROM memories_vec WHERE memory_id NOT IN "
              "(SELECT id FROM memories WHERE status = 'active')"),
    "echo": "SELECT chunk_id FROM echo_vec WHERE chunk_id NOT IN (SELECT id FROM echo_chunks)",
}
CHUNKS_BY_ID = ("SELECT id, text, project, session_id, started_at FROM echo_chunks "
                "WHERE id IN (SELECT value FROM json_each(?))")
CHUNK_VEC_DROP = "DELETE FROM echo_vec WHERE chunk_id = ?"
CHUNK_VEC_PUT = ("INSERT INTO echo_vec(chunk_id, embedding, project, session_id, "
                 "started) VALUES (?, ?, ?, ?, ?)")
# Texts each store's searches score by late interaction (`hippo.retrieve.late`).
SCORED = {"brain": "SELECT text, content_hash FROM memories WHERE status = 'active'",
          "echo": "SELECT text, content_hash FROM echo_chunks"}
UNCACHED = ("SELECT text FROM ({scored}) AS t WHERE NOT EXISTS (SELECT 1 FROM embed_cache e "
            "WHERE e.model = ? AND e.content_hash = t.content_hash)")
MATRIX_COUNT = "SELECT count(*) FROM embed_cache WHERE model LIKE ?"
MATRIX_PAGE = ("SELECT model, content_hash, vector FROM embed_cache WHERE model "
               "LIKE ? AND (model, content_hash) > (?, ?) ORDER BY model, "
               "content_hash LIMIT {limit}")
MATRIX_SET = "UPDATE embed_cache SET vector = ? WHERE model = ? AND content_hash = ?"
DANGLING = ("SELECT count(*) FROM memory_sources WHERE chunk_id NOT IN "
            "(SELECT id FROM echo_chunks)")
DANGLING_DROP = "DELETE FROM memory_sources WHERE chunk_id NOT IN (SELECT id FROM echo_chunks)"
# A link whose chunk belongs to a session the memory's `source` does not name: the chunk id
# was reused (before migration 0007) or the link is wrong; either way `show` would present
# another session's text as this memory's evidence.
FOREIGN_LINKS = (
    "SELECT s.memory_id, s.chunk_id, e.session_key FROM memory_sources s "
    "JOIN echo_chunks c ON c.id = s.chunk_id JOIN echo_sessions e ON e.id = c.session_id "
    "JOIN memories m ON m.id = s.memory_id "
    "WHERE m.source IS NOT NULL AND json_valid(m.source) "
    "AND json_type(m.source, '$.session') IS NOT NULL "
    "AND NOT EXISTS (SELECT 1 FROM json_each(m.source, '$.session') j "
    "WHERE j.value = e.session_key) ORDER BY s.memory_id, s.chunk_id"
)
REFERENCES = ("SELECT id, superseded_by, consolidated_into FROM memories "
              "WHERE superseded_by IS NOT NULL OR consolidated_into IS NOT NULL")
WATERMARKS = "SELECT path, offset FROM watermarks"
WATERMARK_DROP = "DELETE FROM watermarks WHERE path = ?"


def _fts(index: str) -> str:
    if index not in FTS_TABLES:
        raise ValueError(f"unknown full-text index {index!r}")
    return index


class SqliteHealth:
    def __init__(self, db: Sql) -> None:
        self.db = db

    def integrity(self, limit: int) -> list[str]:
        return [str(r["integrity_check"])
                for r in self.db.rows(INTEGRITY.format(limit=int(limit)))]

    def pending_migrations(self) -> list[str]:
        from hippo.store.sqlite.migrations import pending

        return pending(self.db)

    def foreign_key_violations(self) -> int:
        return len(self.db.rows(FOREIGN_KEYS))

    def check_fulltext(self, index: str) -> IndexCheck:
        import apsw

        table = _fts(index)
        try:
            self.db.conn.execute(FTS_CHECK.format(t=table))
            return IndexCheck()
        except (apsw.BusyError, apsw.LockedError) as exc:  # a writer, not a broken index: 75
            from hippo.store.sqlite.errors import translate

            raise translate(exc, self.db.path) from exc
        except apsw.ReadOnlyError:  # FTS5 runs its check as a write: nothing known either way
            return IndexCheck(checked=False)
        except apsw.Error as exc:
            return IndexCheck(error=str(exc))

    def rebuild_fulltext(self, index: str) -> None:
        table = _fts(index)
        self.db.execute(FTS_REBUILD.format(t=table))

    def has_vectors(self, store: str) -> bool:
        return self.db.has_table(VEC_TABLE[store])

    def vectors_declare(self, store: str, dimensions: int) -> bool:
        sql = self.db.scalar(TABLE_SQL, (VEC_TABLE[store],)) or ""
        return f"float[{dimensions}]" in sql

    def unembedded(self, store: str) -> list[int]:
        return [r[0] for r in self.db.execute(UNEMBEDDED[store])]

    def orphan_vectors(self, store: str) -> list[int]:
        return [r[0] for r in self.db.execute(ORPHANS[store])]

    def chunks_to_embed(self, ids: Sequence[int]) -> list[Row]:
        import orjson

        return self.db.rows(CHUNKS_BY_ID, (orjson.dumps(list(ids)).decode(),))

    def drop_chunk_vector(self, chunk_id: int) -> None:
        self.db.execute(CHUNK_VEC_DROP, (chunk_id,))

    def put_chunk_vector(self, chunk_id: int, blob: bytes, project: str, session_id: int,
                         started: int | None) -> None:
        self.db.execute(CHUNK_VEC_PUT, (chunk_id, blob, project, session_id, started))

    def texts_without_token_matrix(self, store: str, model: str) -> list[str]:
        return [r["text"] for r in self.db.rows(UNCACHED.format(scored=SCORED[store]),
                                                 (model,))]

    def token_matrix_count(self, suffix: str) -> int:
        return int(self.db.scalar(MATRIX_COUNT, ("%" + suffix,)))

    def token_matrices_after(self, suffix: str, after: tuple[str, str],
                             limit: int) -> list[Row]:
        return self.db.rows(MATRIX_PAGE.format(limit=int(limit)), ("%" + suffix, *after))

    def replace_token_matrix(self, model: str, content_hash: str, blob: bytes) -> None:
        self.db.execute(MATRIX_SET, (blob, model, content_hash))

    def dangling_provenance(self) -> int:
        return int(self.db.scalar(DANGLING))

    def drop_dangling_provenance(self) -> None:
        self.db.execute(DANGLING_DROP)

    def foreign_provenance(self) -> list[Row]:
        return self.db.rows(FOREIGN_LINKS)

    def references(self) -> list[Row]:
        return self.db.rows(REFERENCES)

    def watermarks(self) -> list[tuple[str, int]]:
        return [(path, offset) for path, offset in self.db.execute(WATERMARKS)]

    def drop_watermark(self, path: str) -> None:
        self.db.execute(WATERMARK_DROP, (path,))
