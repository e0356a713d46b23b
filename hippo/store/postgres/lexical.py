"""PostgreSQL: full-text search ranked by FTS5's BM25, from the `tsv` columns.

SQLite ranks with FTS5's `bm25()` (k1 = 1.2, b = 0.75, every column weight 1), and
hippo's recall was tuned on it; `ts_rank` and `ts_rank_cd` know neither document
frequency nor document length, and rank differently. So the same formula is computed
here from the stored statistics, as FTS5 computes it:

    score = sum over the query's phrases p of
            idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * len / avglen))
    idf(p) = max(ln((N - n(p) + 0.5) / (n(p) + 0.5)), 1e-6)

where N is the number of rows (every memory, as FTS5's index holds them all, counted in
`lexical_stats` by triggers; of Echo, the chunks this user may see),
n(p) the rows the phrase occurs in (the GIN index counts them), f(p) its occurrences in
the row (`hippo_phrase_freq`: a phrase's tokens adjacent and in order), len the row's
length in tokens (`tsv_len`) and avglen the table's mean. Text is split into words the
way unicode61 splits it (`hippo_words`, diacritics folded) and stemmed by Porter's
stemmer (Snowball's `porter`, FTS5's), so the same rows match with the same statistics.

The query is `Terms`: each word or phrase becomes a tsquery of its own through
`phraseto_tsquery` (its tokens `<->` adjacent), bound as a parameter; no character of
the user's query is ever parsed as tsquery syntax. Ties go by id, as in SQLite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg

from hippo.errors import HippoError
from hippo.store.context import COLUMNS, scoped
from hippo.store.lexical import LexHit, Lexical, Terms
from hippo.store.postgres.dialect import VISIBLE

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.context import LayerScope

# The query's terms: each a tsquery and its lexemes in order; parameters (words, joiner).
TERMS = """
t AS (
  SELECT x.i, phraseto_tsquery('hippo_text', hippo_words(x.w)) AS tq,
         ARRAY(SELECT u.lexeme FROM unnest(hippo_doc(x.w)) AS u, unnest(u.positions) AS p(pos)
               ORDER BY p.pos) AS lx
  FROM unnest(?::text[]) WITH ORDINALITY AS x(w, i)
),
tt AS MATERIALIZED (SELECT * FROM t WHERE cardinality(lx) > 0),
qq AS MATERIALIZED (SELECT string_agg('(' || tq::text || ')', ? ORDER BY i)::tsquery AS q
                    FROM tt)"""
# N and the total length of the rows (Brain: the row `lexical_stats` keeps; Echo: the
# chunks this user may see), and each term's idf (the GIN index counts its rows).
STATS = """
s AS MATERIALIZED ({stats}),
w AS MATERIALIZED (
  SELECT tt.i, tt.lx, greatest(ln((s.n - h.hits + 0.5) / (h.hits + 0.5)), 1e-6) AS idf
  FROM tt CROSS JOIN s
  CROSS JOIN LATERAL (SELECT count(*)::float8 AS hits FROM {rows} AND tsv @@ tt.tq) h
)"""
# Every memory, as FTS5's index holds them all. Of Echo, only the chunks this user may
# see: another user's transcripts move no statistic (and so no ranking) of theirs.
BRAIN_STATS = ("SELECT n::float8 AS n, greatest(tokens, 1)::float8 AS tokens "
               "FROM lexical_stats WHERE store = 'brain'")
BRAIN_ROWS = "memories WHERE TRUE"
ECHO_ROWS = ("echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
             f"WHERE {VISIBLE}")
ECHO_STATS = ("SELECT count(*)::float8 AS n, greatest(sum(tsv_len), 1)::float8 AS tokens "
              f"FROM {ECHO_ROWS}")
# k1 = 1.2 (k1 + 1 = 2.2), b = 0.75 (1 - b = 0.25), as FTS5's bm25(). The row's lexemes
# are read once, joined with the terms by their first lexeme: a word's frequency is its
# positions, a phrase's is counted (`hippo_phrase_freq`); summed in the query's order.
SCORE = ("(SELECT sum(x.idf * x.f * 2.2 / (x.f + 1.2 * (0.25 + 0.75 * {alias}.tsv_len "
         "/ (s.tokens / s.n))) ORDER BY x.i) "
         "FROM (SELECT w.i, w.idf, (CASE WHEN cardinality(w.lx) = 1 "
         "THEN cardinality(u.positions) ELSE hippo_phrase_freq({alias}.tsv, w.lx) END)::float8 "
         "AS f FROM unnest({alias}.tsv) AS u JOIN w ON u.lexeme = w.lx[1]) x)")
MATCH = (
    "WITH" + TERMS + "," + STATS.format(stats=BRAIN_STATS, rows=BRAIN_ROWS) + " "
    "SELECT m.id AS id, " + SCORE.format(alias="m") + " AS score "
    "FROM memories m CROSS JOIN s "
    "WHERE m.tsv @@ (SELECT q FROM qq) AND {where} ORDER BY score DESC, m.id LIMIT ?"
)
CHUNKS = (
    "WITH" + TERMS + "," + STATS.format(stats=ECHO_STATS, rows=ECHO_ROWS) + " "
    "SELECT c.id AS id, " + SCORE.format(alias="c") + " AS score "
    "FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
    "CROSS JOIN s "
    "WHERE c.tsv @@ (SELECT q FROM qq) AND {where} ORDER BY score DESC, c.id LIMIT ?"
)
# The context layers' recall with topics: each word or phrase a tsquery of its tokens
# (`<->` adjacent), split (`hippo_words`) and stemmed as the `tsv` columns are, bound as a
# parameter, never tsquery syntax; ranked by cover density over 1 + log(length), ties by
# id. Without topics (what recall asks) it is search's own BM25, as SQLite's is FTS5's
# bm25() in both.
TERM = "phraseto_tsquery('hippo_text', hippo_words(?))"
RECALL = (
    f"SELECT {COLUMNS} FROM memories m, ({{query}}) q(query) "
    "WHERE m.tsv @@ q.query AND {current} AND {scope} "
    "ORDER BY ts_rank_cd(m.tsv, q.query, 1) DESC, m.id LIMIT ?"
)
# What says the index cannot answer (a column or function gone, a damaged index), unlike
# a server that is down or busy, which stays the error it is.
BROKEN = (psycopg.ProgrammingError, psycopg.DataError, psycopg.InternalError)


def query_params(terms: Terms) -> list[object]:
    """The parameters of TERMS: the words and phrases as data, and how they join."""
    return [list(terms.words), terms.operator(" & ", " | ")]


class PgLexical(Lexical):
    def _memories(self, terms: Terms, k: int, where: str, params: list[Any]) -> list[LexHit]:
        rows = self.db.rows(MATCH.format(where=where), [*query_params(terms), *params, k])
        return [LexHit(int(r["id"]), float(r["score"])) for r in rows]

    def _chunks(self, terms: Terms, k: int, where: str, params: list[Any]) -> list[int]:
        rows = self.db.rows(CHUNKS.format(where=where), [*query_params(terms), *params, k])
        return [int(r["id"]) for r in rows]

    def _broken(self, exc: Exception) -> bool:
        return isinstance(exc, BROKEN) or (type(exc) is HippoError
                                           and isinstance(exc.__cause__, BROKEN))

    def recall(self, terms: Terms, scope: LayerScope, limit: int) -> list[Row]:
        if not terms.words or limit < 1:
            return []
        if not scope.topics:
            return self._ranked(terms, scope, limit)
        query = "SELECT " + terms.operator(" && ", " || ").join(TERM for _ in terms.words)
        sql, params = scoped(self.db.dialect, RECALL.replace("{query}", query), scope)
        return self.db.rows(sql, [*terms.words, *params, limit])

    def _ranked(self, terms: Terms, scope: LayerScope, limit: int) -> list[Row]:
        """Search's BM25 over the scope's current memories, best first."""
        from hippo.store.filters import MemoryFilter

        projects = (None if scope.all_projects else (None,) if scope.project is None
                    else (scope.project, None))
        hits = self.search(terms, limit, MemoryFilter.search(projects=projects))
        if not hits:
            return []
        from hippo.store.memories import Memories

        rows = {int(r["id"]): r for r in Memories(self.db).get_many([h.id for h in hits])}
        return [rows[h.id] for h in hits if h.id in rows]
