"""PostgreSQL: full-text search ranked by FTS5's BM25, from the `tsv` columns.

SQLite ranks with FTS5's `bm25()` (k1 = 1.2, b = 0.75, every column weight 1), and
hippo's recall was tuned on it; `ts_rank` and `ts_rank_cd` know neither document
frequency nor document length, and rank differently. So the same formula is computed
here from the stored statistics, as FTS5 computes it:

    score = sum over the query's phrases p of
            idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * len / avglen))
    idf(p) = max(ln((N - n(p) + 0.5) / (n(p) + 0.5)), 1e-6)

where N is the number of rows (every memory or chunk, as FTS5's index holds them all),
n(p) the rows the phrase occurs in (the GIN index counts them), f(p) its occurrences in
the row (`hippo_phrase_freq`: a phrase's tokens adjacent and in order), len the row's
length in tokens (`tsv_len`) and avglen the table's mean. Text is split into words the
way unicode61 splits it (`hippo_words`), and stemmed by Snowball's English stemmer
(Porter's successor; FTS5 uses Porter's), so matches agree but for a rare stem.

The query is `Terms`: each word or phrase becomes a tsquery of its own through
`phraseto_tsquery` (its tokens `<->` adjacent), bound as a parameter; no character of
the user's query is ever parsed as tsquery syntax. Ties go by id, as in SQLite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg

from hippo.store.lexical import IndexUnavailable, LexHit, Terms
from hippo.store.postgres.filters import chunk_where, memory_where

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, SearchFilters
    from hippo.store.postgres.database import PgSql

# The query's terms: each a tsquery and its lexemes in order; parameters (words, joiner).
TERMS = """
t AS (
  SELECT x.i, phraseto_tsquery('hippo_text', hippo_words(x.w)) AS tq,
         ARRAY(SELECT u.lexeme FROM unnest(hippo_doc(x.w)) AS u, unnest(u.positions) AS p(pos)
               ORDER BY p.pos) AS lx
  FROM unnest(%s::text[]) WITH ORDINALITY AS x(w, i)
),
tt AS (SELECT * FROM t WHERE cardinality(lx) > 0),
qq AS (SELECT string_agg('(' || tq::text || ')', %s ORDER BY i)::tsquery AS q FROM tt)"""
# N and the total length of `{table}`; each term's idf (the GIN index counts its rows).
STATS = """
s AS (SELECT count(*)::float8 AS n, greatest(sum(tsv_len), 1)::float8 AS tokens FROM {table}),
w AS (
  SELECT tt.i, tt.lx, greatest(ln((s.n - h.hits + 0.5) / (h.hits + 0.5)), 1e-6) AS idf
  FROM tt CROSS JOIN s
  CROSS JOIN LATERAL (SELECT count(*)::float8 AS hits FROM {table} WHERE tsv @@ tt.tq) h
)"""
# k1 = 1.2 (k1 + 1 = 2.2), b = 0.75 (1 - b = 0.25), as FTS5's bm25().
SCORE = ("(SELECT sum(w.idf * f.f * 2.2 / (f.f + 1.2 * (0.25 + 0.75 * {alias}.tsv_len "
         "/ (s.tokens / s.n)))) FROM w CROSS JOIN LATERAL "
         "(SELECT hippo_phrase_freq({alias}.tsv, w.lx)::float8 AS f) f)")
MATCH = (
    "WITH" + TERMS + "," + STATS.format(table="memories") + " "
    "SELECT m.id AS id, " + SCORE.format(alias="m") + " AS score "
    "FROM memories m CROSS JOIN qq CROSS JOIN s "
    "WHERE m.tsv @@ qq.q AND {where} ORDER BY score DESC, m.id LIMIT %s"
)
CHUNKS = (
    "WITH" + TERMS + "," + STATS.format(table="echo_chunks") + " "
    "SELECT c.id AS id, " + SCORE.format(alias="c") + " AS score "
    "FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
    "CROSS JOIN qq CROSS JOIN s "
    "WHERE c.tsv @@ qq.q AND {where} ORDER BY score DESC, c.id LIMIT %s"
)
JOINERS = {"and": " & ", "or": " | "}
LATEST = {"brain": "SELECT max(id) FROM memories", "echo": "SELECT max(id) FROM echo_chunks"}


def query_params(terms: Terms) -> list[object]:
    """The parameters of TERMS: the words and phrases as data, and how they join."""
    return [list(terms.words), JOINERS[terms.mode]]


class PgLexical:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def search(self, terms: Terms, k: int, filters: SearchFilters) -> list[LexHit]:
        if k <= 0 or not terms.words:
            return []
        where, params = memory_where(filters)
        try:
            rows = self.db.rows(MATCH.format(where=where), [*query_params(terms), *params, k])
        except psycopg.Error as exc:
            raise IndexUnavailable(str(exc)) from exc
        return [LexHit(int(r["id"]), float(r["score"])) for r in rows]

    def search_chunks(self, terms: Terms, k: int, filters: EchoFilters) -> list[int]:
        if k <= 0 or not terms.words:
            return []
        where, params = chunk_where(filters)
        try:
            rows = self.db.rows(CHUNKS.format(where=where), [*query_params(terms), *params, k])
        except psycopg.Error as exc:
            raise IndexUnavailable(str(exc)) from exc
        return [int(r["id"]) for r in rows]

    def extent(self, store: str) -> int:
        return int(self.db.scalar(LATEST[store]) or 0)
