"""Echo transcript search: FTS5 BM25 + exact cosine KNN over chunks, fused by RRF.

Searched only when asked (`hippo echo`). Filters (session, project, time, role) apply inside
both retrievers. Degrades like Brain search: no embedder → lexical only; no FTS → vector only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo.retrieve import stages
from hippo.retrieve.params import BM25, DATES, PARALLEL_MIN_ROWS, VECTOR
from hippo.retrieve.querytext import prepare
from hippo.store.chunks import to_record
from hippo.store.filters import EchoFilters

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.retrieve.dates import Window
    from hippo.store import Store
    from hippo.store.vectors import VecHit

CANDIDATES = 30


@dataclass(slots=True)
class EchoResult:
    results: list[dict[str, Any]]
    degraded: list[str] = field(default_factory=list)


def lexical(db: Store, query: str, f: EchoFilters,
            n: int = CANDIDATES) -> list[int] | None:
    """Chunk ids by BM25 (AND, then OR when AND finds too little); None: no usable terms."""
    from hippo.retrieve.ftsquery import match_terms

    out: list[int] = []
    tried = False
    for mode in ("and", "or"):
        terms = match_terms(query, mode)  # type: ignore[arg-type]
        if terms is None:
            continue
        tried = True
        for cid in db.lexical.search_chunks(terms, n, f):
            if cid not in out:
                out.append(cid)
        if len(out) >= 5:
            break
    return out[:n] if tried else None


def _lexical(db: Store, query: str, f: EchoFilters) -> Callable[[], list[int] | None]:
    """Start `lexical`; beside the vector scan, on a second connection, on a big store
    (as the Brain pipeline does); calling the result collects it."""
    def run(conn: Store) -> list[int] | None:
        return lexical(conn, query, f)

    return stages.start_lexical(db, "echo", run, "hippo-echo-bm25", PARALLEL_MIN_ROWS)


def semantic(h: Hippo, vector: Any, f: EchoFilters, n: int = CANDIDATES) -> list[tuple[int, float]]:
    """Chunk ids by exact cosine distance, filters applied in the same query."""
    from hippo.embed.cache import to_blob

    return [(x.id, x.distance) for x in h.db.vectors.knn_chunks(to_blob(vector), n, f)]


NEIGHBOUR_WEIGHT = 0.3  # measured on LoCoMo turns: +5 points recall_any@5 (docs/quality.md)


def _rank(h: Hippo, query: str, f: EchoFilters, qv: Any, rankings: dict[str, list[int]],
          degraded: list[str], params: Any) -> dict[int, float]:
    """Relevance of each candidate: RRF, then late interaction over the pool and its
    session neighbours, neighbour support, and a boost for chunks in a date the query names.
    """
    from hippo.embed.cache import to_blob
    from hippo.retrieve import dates, late, tokencache
    from hippo.retrieve.fuse import fuse
    from hippo.retrieve.score import parse_timestamp
    from hippo.timeutil import iso

    windows = [w.widened(params.date_slack_days) for w in dates.mentioned_dates(query)] \
        if params.date_boost > 0 and qv is not None else []
    if windows:
        def inside(w: Window) -> list[VecHit]:
            wf = EchoFilters(sessions=f.sessions, projects=f.projects, roles=f.roles,
                             since=iso(w.start), until=iso(w.end))
            return h.db.vectors.knn_chunks(to_blob(qv), CANDIDATES, wf)

        dated = stages.window_hits(windows, CANDIDATES, inside)
        if dated:
            rankings[DATES] = dated
    fused = fuse(rankings, k=params.rrf_k)
    rel = {x.id: x.score for x in fused}
    emb = h.embedder("echo")
    if params.late_pool > 0 and fused and tokencache.can_encode_tokens(emb):
        try:
            pool = [x.id for x in fused[: params.late_pool]]
            rows = h.db.chunks.get(pool)
            adj = {i: [r["id"] for r in h.db.chunks.neighbours(rows[i], 1)] for i in pool
                   if i in rows}
            pool = list(dict.fromkeys(pool + [n for i in pool for n in adj.get(i, [])]))
            rows = h.db.chunks.get(pool)
            pool = [i for i in pool if i in rows]
            mats = tokencache.token_matrices(h.db, emb, [rows[i]["text"] for i in pool])
            raw = late.late_scores(tokencache.query_matrix(h.db, emb, query), mats)
            scored = stages.late_relevance(pool, raw, fused)
            for i in pool:
                adj.setdefault(i, [r["id"] for r in h.db.chunks.neighbours(rows[i], 1)])
            rel = late.neighbour_support(scored, adj, NEIGHBOUR_WEIGHT)
            # a neighbour of the same session is a result only inside the filters
            found = {x.id for x in fused}  # the retrievers' own, filtered in their queries
            rel = {i: s for i, s in rel.items() if i in found or admits(rows[i], f)}
        except Exception as exc:  # noqa: BLE001 - the fused order is still a good answer
            degraded.append(stages.degradation("late interaction", exc, stages.FUSED_ORDER))
    if windows:
        rows = h.db.chunks.get(list(rel))
        for i in rel:
            started = rows.get(i, {}).get("started_at")
            if started and dates.in_any(parse_timestamp(started), windows):
                rel[i] += params.date_boost
    return rel


def admits(row: Any, f: EchoFilters) -> bool:
    """True when the chunk `row` passes what `f` asks of a chunk itself (its roles, when it
    started), as `store.clauses.chunk_where` does in SQL: a session neighbour the late
    stage adds must pass them too."""
    started = row["started_at"]
    return ((not f.roles or bool(set(str(row["roles"]).split(",")) & set(f.roles)))
            and (not f.since or (started is not None and started >= f.since))
            and (not f.until or (started is not None and started <= f.until)))


def _query_vector(h: Hippo, query: str) -> Any:
    """The query's vector from the cache, else the model. Not `Hippo.embed`: that is for
    stored text and caches its token matrix, whose ids would spell the query out."""
    from hippo.embed.cache import check_model, embed_texts

    emb = h.embedder("echo")
    check_model(h.db, "echo", emb)
    return embed_texts(h.db, emb, [query])


def _encode_once(h: Hippo, query: str, params: Any) -> None:
    """A new query's vector and token matrix from one model pass (late interaction needs
    both); a database that cannot take the write leaves it to the usual path."""
    if params.late_pool <= 0:
        return
    from hippo.errors import HippoError
    from hippo.retrieve import tokencache

    emb = h.embedder("echo")
    if tokencache.can_encode_tokens(emb) and not tokencache.query_cached(h.db, emb, query):
        with contextlib.suppress(HippoError):
            tokencache.encode_query(h.db, emb, query)  # its token ids are not kept


def search(h: Hippo, query: str, *, filters: EchoFilters | None = None, limit: int = 5,
           context: int = 0, params: Any = None) -> EchoResult:
    """The best transcript chunks for `query`, with where each came from.

    Stages as Brain search where they fit transcripts (the `[search]` settings):
    BM25 + vector (+ vector inside dates the query names), RRF, late interaction with
    the local model over the best candidates and their neighbouring chunks.
    """

    if params is None:
        from hippo.retrieve.params import load_params

        params = load_params(h.settings)
    f = filters or EchoFilters()
    query, degraded = prepare(query)
    rankings: dict[str, list[int]] = {}
    distances: dict[int, float] = {}
    qv = None
    collect = _lexical(h.db, query, f)
    has_vec = h.db.vectors.has("echo")
    if has_vec and query.strip():
        try:
            _encode_once(h, query, params)
            (qv,) = _query_vector(h, query)
            hits = semantic(h, qv, f)
            rankings[VECTOR] = [cid for cid, _ in hits]
            distances = dict(hits)
        except Exception as exc:  # noqa: BLE001 - any embedder failure degrades to lexical
            qv = None
            degraded.append(stages.degradation("embedder", exc, stages.LEXICAL_ONLY))
        except BaseException:
            with contextlib.suppress(Exception):
                collect()  # the BM25 thread ends before its connection can be closed
            raise
    try:
        lex = collect()
        if lex is None:
            degraded.append(stages.degradation("fts", "no searchable words in the query",
                                               stages.VECTOR_ONLY))
        else:
            rankings[BM25] = lex
    except Exception as exc:  # noqa: BLE001 - FTS failure degrades to vector only
        degraded.append(stages.degradation("fts", f"full-text index unavailable ({exc})",
                                           stages.VECTOR_ONLY))
    if not any(rankings.values()):
        return EchoResult([], degraded)
    ranks = {cid: {name: pos + 1 for name, ids in rankings.items()
                   for pos, i in enumerate(ids) if i == cid}
             for ids in rankings.values() for cid in ids}
    rel = _rank(h, query, f, qv, rankings, degraded, params)
    best = sorted(rel, key=lambda i: (-rel[i], i))[:limit]
    top = max(rel.values(), default=1.0) or 1.0
    rows = h.db.chunks.get(best)
    results = []
    for cid in best:
        row = rows.get(cid)
        if row is None:
            continue
        rec = to_record(row)
        rec["score"] = round(max(rel[cid], 0.0) / top, 6)
        rec["ranks"] = ranks.get(cid, {})
        if cid in distances:
            rec["distance"] = round(distances[cid], 6)
        rec["degraded"] = degraded
        if context:
            rec["context"] = h.db.chunks.neighbours(row, context)
        results.append(rec)
    return EchoResult(results, degraded)
