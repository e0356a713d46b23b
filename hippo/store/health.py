"""The checks `hippo doctor` runs on the store, and their repairs. What each backend checks
its own way (its file or its server's schema, its full-text index) each backend's subclass
checks (`hippo.store.sqlite.health`, `hippo.store.postgres.health`); the vectors' checks are
`store.reindex`'s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hippo.store.memories import named_sessions
from hippo.store.sql import Repository

if TYPE_CHECKING:
    from hippo.store.base import Row

# Texts each store's searches score by late interaction (`hippo.retrieve.late`).
SCORED = {"brain": "SELECT text, content_hash FROM memories WHERE status = 'active'",
          "echo": "SELECT text, content_hash FROM echo_chunks"}
UNCACHED = ("SELECT text FROM ({scored}) AS t WHERE NOT EXISTS (SELECT 1 FROM embed_cache e "
            "WHERE e.model = ? AND e.content_hash = t.content_hash)")
# A model name's suffix, in any case (as SQLite's LIKE); keys in byte order.
MATRIX_COUNT = "SELECT count(*) FROM embed_cache WHERE lower(model) LIKE lower(?)"
MATRIX_PAGE = ("SELECT model, content_hash, vector FROM embed_cache WHERE lower(model) "
               "LIKE lower(?) AND (model{collate}, content_hash{collate}) > (?, ?) "
               "ORDER BY model{collate}, content_hash{collate} LIMIT ?")
MATRIX_SET = "UPDATE embed_cache SET vector = ? WHERE model = ? AND content_hash = ?"
DANGLING = ("SELECT count(*) FROM memory_sources WHERE chunk_id NOT IN "
            "(SELECT id FROM echo_chunks)")
DANGLING_DROP = "DELETE FROM memory_sources WHERE chunk_id NOT IN (SELECT id FROM echo_chunks)"
LINKS = ("SELECT s.memory_id, s.chunk_id, e.session_key, m.source FROM memory_sources s "
         "JOIN echo_chunks c ON c.id = s.chunk_id JOIN echo_sessions e ON e.id = c.session_id "
         "JOIN memories m ON m.id = s.memory_id WHERE m.source IS NOT NULL "
         "ORDER BY s.memory_id, s.chunk_id")


@dataclass(frozen=True, slots=True)
class IndexCheck:
    """A full-text index's own consistency check: `checked` False when the store could not
    run it here (read-only); `error` the store's message when the index is damaged."""

    checked: bool = True
    error: str | None = None


class Health(Repository):
    """The checks `hippo doctor` runs on the store, and their repairs."""

    # -- what each backend does its own way --------------------------------------------
    def integrity(self, limit: int) -> list[str]:
        """The store's own check of its file: ["ok"], or up to `limit` problems."""
        raise NotImplementedError

    def pending_migrations(self) -> list[str]:
        """The schema steps this store lacks, in order."""
        raise NotImplementedError

    def foreign_key_violations(self) -> int:
        """How many rows point at a row that is not there."""
        raise NotImplementedError

    def check_fulltext(self, index: str) -> IndexCheck:
        """Run the full-text index `index`'s own check (memories_fts, echo_fts); a busy
        store raises BusyError."""
        raise NotImplementedError

    def rebuild_fulltext(self, index: str) -> None:
        """Rebuild the full-text index `index` from its table."""
        raise NotImplementedError

    def size_bytes(self) -> int:
        """How much disk the store takes (a file: with its WAL; a server: its tables)."""
        raise NotImplementedError

    def texts_without_token_matrix(self, store: str, model: str) -> list[str]:
        """Texts `store`'s searches score (active memories, chunks) with no cached matrix
        under `model`."""
        return [r["text"] for r in self.db.rows(UNCACHED.format(scored=SCORED[store]),
                                                 (model,))]

    def token_matrix_count(self, suffix: str) -> int:
        """How many cached entries have a model name ending in `suffix`."""
        return int(self.db.scalar(MATRIX_COUNT, ("%" + suffix,)))

    def token_matrices_after(self, suffix: str, after: tuple[str, str],
                             limit: int) -> list[Row]:
        """The next `limit` cached entries (model, content_hash, vector) ending in `suffix`,
        in (model, content_hash) order after `after`."""
        rows = self.db.rows(self._sql(MATRIX_PAGE),
                            ("%" + suffix, *after, int(limit)))
        return [{**r, "vector": bytes(r["vector"])} for r in rows]

    def replace_token_matrix(self, model: str, content_hash: str, blob: bytes) -> None:
        """Store a new value for one cached entry."""
        self.db.execute(MATRIX_SET, (blob, model, content_hash))

    def dangling_provenance(self) -> int:
        """How many provenance links point at a missing Echo chunk."""
        return int(self.db.scalar(DANGLING))

    def drop_dangling_provenance(self) -> None:
        """Remove the provenance links that point at a missing Echo chunk."""
        self.db.execute(DANGLING_DROP)

    def foreign_provenance(self) -> list[Row]:
        """Links (memory_id, chunk_id, session_key) whose chunk belongs to a session the
        memory's source does not name, by memory and chunk: the chunk id was reused
        (before migration 0007) or the link is wrong; either way `show` would present
        another session's text as this memory's evidence."""
        found = []
        for r in self.db.rows(LINKS):
            named = named_sessions(r.pop("source"))
            if named is not None and r["session_key"] not in named:
                found.append(r)
        return found



