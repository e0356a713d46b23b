"""SQLite: FTS5 BM25 over `memories_fts` and `echo_fts`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import apsw

from hippo.store.context import COLUMNS, scoped
from hippo.store.lexical import LexHit, Lexical, Terms

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.context import LayerScope

# bm25() is negative, more negative = better; ties by id keep the order stable.
MATCH = (
    "SELECT m.id AS id, bm25(memories_fts) AS score FROM memories_fts "
    "JOIN memories m ON m.id = memories_fts.rowid "
    "WHERE memories_fts MATCH ? AND {where} ORDER BY score, m.id LIMIT ?"
)
# The same ranking from the index alone: an OR of common words can match half the
# memories, and skipping a `memories` lookup per match halves the time. Its top rows are
# then checked against the filters (see `_ranked`).
MATCH_ONLY = (
    "SELECT rowid AS id, bm25(memories_fts) AS score FROM memories_fts "
    "WHERE memories_fts MATCH ? ORDER BY score, rowid LIMIT ?"
)
KEEP = ("SELECT m.id FROM (SELECT column1 AS id FROM (VALUES {rows})) ids "
        "CROSS JOIN memories m ON m.id = ids.id WHERE {where}")
MAX_FETCH = 2000  # beyond this many index-only rows, let SQLite filter while ranking
CHUNKS = ("SELECT c.id FROM echo_fts JOIN echo_chunks c ON c.id = echo_fts.rowid "
          "JOIN echo_sessions e ON e.id = c.session_id "
          "WHERE echo_fts MATCH ? AND {where} ORDER BY bm25(echo_fts) LIMIT ?")
# The context layers' recall: current memories of a scope (`hippo.store.context`).
RECALL = (
    f"SELECT {COLUMNS} FROM memories_fts f JOIN memories m ON m.id = f.rowid "
    "WHERE memories_fts MATCH ? AND {current} AND {scope} "
    "ORDER BY bm25(memories_fts), m.id LIMIT ?"
)
OPTIMIZE = {"brain": "INSERT INTO memories_fts(memories_fts) VALUES ('optimize')",
            "echo": "INSERT INTO echo_fts(echo_fts) VALUES ('optimize')"}


def quote(term: str) -> str:
    """An FTS5 string literal: double quotes around `term`, inner quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def fts5_match(terms: Terms) -> str:
    """`terms` as an FTS5 MATCH expression: each word or phrase quoted (never syntax),
    joined by spaces (FTS5's implicit AND) or ` OR `."""
    return terms.operator(" ", " OR ").join(quote(w) for w in terms.words)


class SqliteLexical(Lexical):
    def _memories(self, terms: Terms, k: int, where: str, params: list[Any]) -> list[LexHit]:
        return self._ranked(fts5_match(terms), k, where, params)

    def _ranked(self, expr: str, k: int, where: str, params: list[Any]) -> list[LexHit]:
        """Top `k` allowed hits: index-only ranking checked afterwards, or the joined query.

        Exact either way: the index's top rows are taken in the final order, so once `k`
        of them pass the filters (or the index has no more rows) no later row can beat them.
        """
        fetch = 2 * k
        while fetch <= MAX_FETCH:
            rows = self.db.rows(MATCH_ONLY, [expr, fetch])
            ids = [r["id"] for r in rows]
            allowed = ({r[0] for r in self.db.execute(
                KEEP.format(rows=",".join("(?)" for _ in ids), where=where), [*ids, *params])}
                if ids else set())
            hits = [LexHit(r["id"], -r["score"]) for r in rows if r["id"] in allowed]
            if len(hits) >= k or len(rows) < fetch:
                return hits[:k]
            fetch *= 4
        rows = self.db.rows(MATCH.format(where=where), [expr, *params, k])
        return [LexHit(r["id"], -r["score"]) for r in rows]

    def _chunks(self, terms: Terms, k: int, where: str, params: list[Any]) -> list[int]:
        return [cid for (cid,) in self.db.execute(CHUNKS.format(where=where),
                                                  (fts5_match(terms), *params, k))]

    def _broken(self, exc: Exception) -> bool:
        return isinstance(exc, apsw.Error)

    def recall(self, terms: Terms, scope: LayerScope, limit: int) -> list[Row]:
        sql, params = scoped(self.db.dialect, RECALL, scope)
        return self.db.rows(sql, [fts5_match(terms), *params, limit])

    def compact(self, store: str) -> None:
        self.db.execute(OPTIMIZE[store])
