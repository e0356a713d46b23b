"""FTS5 BM25 over `memories_fts` (pipeline step 2, lexical side).

The query text becomes quoted terms (`ftsquery.build_match`), never FTS5 syntax. Every
term must match first; when that finds fewer than `fts_and_min_hits`, the OR form
(stopwords dropped) adds its hits after the AND ones. Filters are part of the SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import apsw

from hippo.errors import BusyError, HippoError
from hippo.retrieve.ftsquery import build_match

if TYPE_CHECKING:
    from hippo.retrieve.filters import Filters
    from hippo.store.sqlite.database import Database

# bm25() is negative, more negative = better; ties by id keep the order stable.
MATCH = (
    "SELECT m.id AS id, bm25(memories_fts) AS score FROM memories_fts "
    "JOIN memories m ON m.id = memories_fts.rowid "
    "WHERE memories_fts MATCH ? AND {where} ORDER BY score, m.id LIMIT ?"
)
# The same ranking from the index alone: an OR of common words can match half the
# memories, and skipping a `memories` lookup per match halves the time. Its top rows are
# then checked against the filters (see `_run`).
MATCH_ONLY = (
    "SELECT rowid AS id, bm25(memories_fts) AS score FROM memories_fts "
    "WHERE memories_fts MATCH ? ORDER BY score, rowid LIMIT ?"
)
KEEP = ("SELECT m.id FROM (SELECT column1 AS id FROM (VALUES {rows})) ids "
        "CROSS JOIN memories m ON m.id = ids.id WHERE {where}")
MAX_FETCH = 2000  # beyond this many index-only rows, let SQLite filter while ranking


class FtsUnavailable(Exception):
    """The lexical retriever cannot run for this query; the message says why."""


@dataclass(frozen=True, slots=True)
class FtsHit:
    """One lexical hit: memory id and BM25 score (negated FTS5 bm25(): higher is better)."""

    id: int
    score: float


def _ranked(db: Database, expr: str, k: int, filters: Filters) -> list[FtsHit]:
    """Top `k` allowed hits: index-only ranking checked afterwards, or the joined query.

    Exact either way: the index's top rows are taken in the final order, so once `k`
    of them pass the filters (or the index has no more rows) no later row can beat them.
    """
    where, params = filters.where()
    fetch = 2 * k
    while fetch <= MAX_FETCH:
        rows = db.rows(MATCH_ONLY, [expr, fetch])
        ids = [r["id"] for r in rows]
        allowed = ({r[0] for r in db.execute(
            KEEP.format(rows=",".join("(?)" for _ in ids), where=where), [*ids, *params])}
            if ids else set())
        hits = [FtsHit(r["id"], -r["score"]) for r in rows if r["id"] in allowed]
        if len(hits) >= k or len(rows) < fetch:
            return hits[:k]
        fetch *= 4
    rows = db.rows(MATCH.format(where=where), [expr, *params, k])
    return [FtsHit(r["id"], -r["score"]) for r in rows]


def _run(db: Database, expr: str, k: int, filters: Filters) -> list[FtsHit]:
    try:
        return _ranked(db, expr, k, filters)
    except BusyError:
        raise
    except (apsw.Error, HippoError) as exc:
        raise FtsUnavailable(f"full-text index unavailable ({exc})") from exc


def search(db: Database, query: str, k: int, filters: Filters, *,
           and_min_hits: int = 5) -> list[FtsHit]:
    """Up to `k` hits, best first: AND hits, then OR hits if AND found fewer than `and_min_hits`.

    Raises FtsUnavailable when the query has no searchable term or the index is unusable.
    """
    strict = build_match(query, "and")
    loose = build_match(query, "or")
    if strict is None and loose is None:
        raise FtsUnavailable("no searchable words in the query")
    hits = _run(db, strict, k, filters) if strict is not None and k > 0 else []
    if loose is not None and loose != strict and len(hits) < min(and_min_hits, k):
        seen = {h.id for h in hits}
        extra = [h for h in _run(db, loose, k, filters) if h.id not in seen]
        hits += extra[: k - len(hits)]
    return hits
