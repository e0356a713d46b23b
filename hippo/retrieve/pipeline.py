"""The Brain search pipeline (SPEC "Brain search pipeline"), one function the CLI wraps.

embed the query (persistent cache) → vector KNN + FTS5 BM25 (filters inside both; plus
vector KNN inside the time windows the query names) → RRF → late-interaction relevance
and date boost (`hippo.retrieve.late`; docs/quality.md) → task hint → MMR →
relevance/importance/freshness blend → optional rerank → top N.

Nothing here fails because a helper is down: no embedder means lexical results, no FTS
means vector results, no reranker means the local order; each such fallback is named
in `SearchResult.degraded` and in every result's `degraded`. A cached query embedding
is read as a blob and the cosines come from SQLite, and late interaction scores cached
ternary token matrices with popcounts on Python ints, so a repeated query imports
neither numpy nor onnxruntime. A new query runs the model once for both its vector and
its token matrix; a candidate whose token matrix is not cached (written with late
interaction off, or before a reindex) is encoded when a search first meets it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hippo.errors import HippoError, UsageError
from hippo.memory.memtypes import TIERS, resolve
from hippo.retrieve import candidates as stage
from hippo.retrieve import fts, stages, vec
from hippo.retrieve.fuse import fuse
from hippo.retrieve.params import BM25, DATES, PARALLEL_MIN_ROWS, VECTOR, SearchParams, load_params
from hippo.retrieve.querytext import prepare
from hippo.retrieve.request import HERE, Scope, SearchRequest
from hippo.retrieve.score import match_factor
from hippo.store.filters import MemoryFilter

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.retrieve.candidates import Candidate
    from hippo.retrieve.dates import Window
    from hippo.retrieve.tokenmatrix import TokenMatrix
    from hippo.store import Store
    from hippo.store.lexical import LexHit

COUNTER_WAIT_MS = 50


@dataclass(slots=True)
class SearchResult:
    """Results best first (SPEC records + `score`, `degraded`, and `explain` when asked)."""

    query: str
    results: list[dict[str, Any]] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


def _bound(value: datetime | str | None) -> str | None:
    from hippo.timeutil import iso, parse_since

    if value is None or value == "":
        return None
    return iso(value if isinstance(value, datetime) else parse_since(value))


def _as_of(value: datetime | str | None) -> str | None:
    from hippo.timeutil import iso, option_time

    if value is None or value == "":
        return None
    return iso(value) if isinstance(value, datetime) else option_time(value, "--as-of")


def make_filters(h: Hippo, *, types: Sequence[str] = (), tiers: Sequence[str] = (),
                 tags: Sequence[str] = (), since: datetime | str | None = None,
                 until: datetime | str | None = None,
                 projects: Scope | Sequence[str | None] | None = HERE,
                 include_superseded: bool = False,
                 as_of: datetime | str | None = None) -> MemoryFilter:
    """Validated filters; `projects` a `Scope` (default: the current project plus global
    memories), None (every project) or the projects' names (None: global)."""
    for t in types:
        resolve(t, h.types)
    for tier in tiers:
        if tier not in TIERS:
            raise UsageError(f"unknown tier {tier!r}; known tiers: {', '.join(TIERS)}")
    if isinstance(projects, Scope):
        scope: tuple[str | None, ...] | None = projects.projects(h.project)
    else:
        scope = None if projects is None else tuple(dict.fromkeys(projects))
    return MemoryFilter.search(projects=scope, types=tuple(types), tiers=tuple(tiers),
                   tags=tuple(t.strip().lower() for t in tags if t.strip()),
                   since=_bound(since), until=_bound(until),
                   include_superseded=include_superseded, as_of=_as_of(as_of))


def _cached(h: Hippo, model: str, text: str) -> bytes | None:
    """The cached vector of `text` under `model`, counting the hit without ever waiting."""
    from hippo.embed.cache import content_hash

    db = h.db
    blob = db.embed_cache.get(model, content_hash(text))
    if blob is None:
        return None
    # Count the hit, but never make a search wait behind a writer (or fail on a
    # read-only file) for a counter.
    with db.waiting(COUNTER_WAIT_MS), contextlib.suppress(HippoError), db.transaction():
        db.vectors.bump("embed.cache_hits", 1)
    return blob


def query_vector(h: Hippo, text: str, degraded: list[str],
                 tokens: list[Any] | None = None) -> bytes | None:
    """The query's float32 blob: from the persistent cache, else from the embedder.

    With `tokens` (a list), a new query for the local model is encoded once for both its
    vector and its token matrix, which is appended to `tokens` for late interaction.

    A cache hit touches neither numpy nor the model (with the default embedder, not
    even the embedder object: the store's recorded model names the cache entry). Any
    embedder failure is recorded in `degraded` and gives None; a store built with
    another model than the one chosen is still exit 78.
    """
    from hippo.embed.cache import check_model, store_model

    db = h.db
    if h.settings.origins.get("embedder") == "default":
        recorded = store_model(db, "brain")
        hit = _cached(h, recorded[0], text) if recorded else None
        if hit is not None:
            return hit
    try:
        emb = h.embedder("brain")
    except Exception as exc:  # noqa: BLE001 - no embedder: lexical search still works
        degraded.append(stages.degradation("embedder", exc, stages.LEXICAL_ONLY))
        return None
    check_model(db, "brain", emb)
    hit = _cached(h, emb.model_id, text)
    if hit is not None:
        return hit
    try:
        if tokens is not None:
            from hippo.retrieve import tokencache

            if tokencache.can_encode_tokens(emb):
                # A new query for the local model: its vector and its token matrix (for
                # late interaction) come from one forward pass, not two.
                blob, matrix = tokencache.encode_query(db, emb, text)
                tokens.append(matrix)
                return blob
        from hippo.embed.cache import embed_texts, to_blob

        return to_blob(embed_texts(db, emb, [text])[0])
    except Exception as exc:  # noqa: BLE001 - provider down, key missing, timeout, ...
        degraded.append(stages.degradation("embedder", exc, stages.LEXICAL_ONLY))
        return None


def _records(db: Store, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    from hippo.memory.conflicts import mark_open
    from hippo.memory.records import to_record

    out = {r["id"]: to_record(r) for r in db.memories.get_many(ids)}
    mark_open(db, list(out.values()))  # a conflict's label says whether it still waits
    return out




@dataclass(slots=True)
class Retrieved:
    """What the retrievers found: each one's ranking (absent: it did not run), each hit's
    rank and score per retriever, and the query's vector and token matrix when known."""

    rankings: dict[str, list[int]] = field(default_factory=dict)
    vector: dict[int, dict[str, Any]] = field(default_factory=dict)
    bm25: dict[int, dict[str, Any]] = field(default_factory=dict)
    blob: bytes | None = None
    tokens: TokenMatrix | None = None


def search(h: Hippo, query: str, **options: Any) -> SearchResult:
    """Search the Brain for `query`; `options` are the fields of `SearchRequest` (limit,
    types, tiers, tags, since, until, projects, include_superseded, as_of, explain, rerank,
    params, now). At most `limit` results (default 5), best first."""
    return run(h, SearchRequest(query, **options))


def run(h: Hippo, req: SearchRequest) -> SearchResult:
    """The stages of one search request, in order."""
    from hippo.timeutil import now as clock

    p = req.params or load_params(h.settings)
    limit = p.result_limit if req.limit is None else req.limit
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    filters = make_filters(h, types=req.types, tiers=req.tiers, tags=req.tags,
                           since=req.since, until=req.until, projects=req.projects,
                           include_superseded=req.include_superseded, as_of=req.as_of)
    when = req.now or clock()
    text, notes = prepare(req.query)
    out = SearchResult(text, degraded=notes)
    if not text:
        return out
    k = p.candidates_per_retriever
    found = retrieve(h, text, k, filters, p, out.degraded)
    windows = _date_windows(text, p)
    if windows and found.blob is not None:
        found.rankings[DATES] = _window_hits(h.db, found.blob, k, filters, windows)
    fused = fuse(found.rankings, p.rrf_k, p.retriever_weights) if found.rankings else []
    if not fused:
        return out
    cands = stage.candidates(fused, _records(h.db, [f.id for f in fused]))
    best_late = stage.late_interaction(h, text, cands, p, out.degraded, found.tokens)
    stage.date_boost(cands, windows, p)
    stage.relevance(text, cands, p)
    sims = vec.similarities(h.db, [c.id for c in cands])
    ranked = stage.score(stage.diversify(cands, sims, max(p.mmr_k, limit), p), h.types, when, p)
    if _want_rerank(h, req.rerank):
        ranked = stage.rerank(text, ranked, max(p.rerank_pool, limit), p, out.degraded,
                              _reranker(h, p))
    out.results = _present(ranked[:limit], found, best_late, bool(windows), req.explain, p)
    for result in out.results:  # a degradation met late (rerank) concerns every result
        result["degraded"] = list(out.degraded)
    return out


def retrieve(h: Hippo, text: str, k: int, filters: MemoryFilter, p: SearchParams,
             degraded: list[str]) -> Retrieved:
    """Vector KNN and BM25 (beside it on a big store), each its best `k`."""
    db = h.db
    found = Retrieved()
    tokens: list[Any] = []
    collect = _lexical(db, text, k, filters, p)
    try:
        if not vec.has_store(db):
            found.rankings[VECTOR] = []  # nothing has a vector yet: ran, found nothing
        else:
            found.blob = query_vector(h, text, degraded, tokens if p.late_pool > 0 else None)
            if found.blob is not None:
                hits = vec.search(db, found.blob, k, filters)
                found.rankings[VECTOR] = [x.id for x in hits]
                found.vector = {x.id: {"rank": n, "distance": x.distance}
                                for n, x in enumerate(hits, 1)}
    except BaseException:
        with contextlib.suppress(Exception):
            collect()  # the BM25 thread ends before its connection can be closed
        raise
    try:
        lexical = collect()
    except fts.FtsUnavailable as exc:
        degraded.append(stages.degradation("fts", exc, stages.VECTOR_ONLY))
    else:
        found.rankings[BM25] = [x.id for x in lexical]
        found.bm25 = {x.id: {"rank": n, "score": x.score} for n, x in enumerate(lexical, 1)}
    found.tokens = tokens[0] if tokens else None
    return found


def _present(ranked: Sequence[Candidate], found: Retrieved, best_late: float | None,
             dated: bool, explain: bool, p: SearchParams) -> list[dict[str, Any]]:
    """The results: records with their score (and each stage's part, `explain`).

    How well the query matches anything stored scales every score, unless that is known
    otherwise: the reranker's scores are on one scale for every query already, and a
    memory created on a date the query names matches it whatever its words."""
    by = ("rerank" if any(c.rerank is not None for c in ranked)
          else "date" if any(c.date for c in ranked) else "late")
    factor = match_factor(best_late, p) if by == "late" else 1.0
    out = []
    for c in ranked:
        result = {**c.record, "score": c.final * factor, "degraded": []}
        if explain:
            result["explain"] = _explain(c, found, best_late, factor, by, dated)
        out.append(result)
    return out


def _explain(c: Candidate, found: Retrieved, best_late: float | None, factor: float,
             by: str, dated: bool) -> dict[str, Any]:
    e = {
        "bm25": found.bm25.get(c.id),
        "vector": found.vector.get(c.id),
        "fused": {"score": c.fused.score, "raw": c.fused.raw},
        "hint": c.hint,
        "relevance": c.scored,
        "mmr": c.mmr,
        "freshness": c.freshness,
        "importance": c.record["importance"],
        "rerank": c.rerank,
        "final": c.final,
        "match": None if best_late is None else {
            "best_late": best_late, "factor": factor, "by": by},
    }
    if c.late is not None:  # present only when the stage ran (an embedder with token vectors)
        e["late"] = c.late
    if dated:
        e["date"] = c.date
    return e


def _lexical(db: Store, text: str, k: int, filters: MemoryFilter,
             p: SearchParams) -> Callable[[], list[LexHit]]:
    """Start the BM25 retriever (`stages.start_lexical`); calling the result collects it."""
    def run(conn: Store) -> list[LexHit]:
        return fts.search(conn, text, k, filters, and_min_hits=p.fts_and_min_hits)

    return stages.start_lexical(db, "brain", run, "hippo-bm25", PARALLEL_MIN_ROWS)


def _date_windows(text: str, p: SearchParams) -> list[Window]:
    """Time windows the query names, widened by the slack; none when the boost is off."""
    if p.date_boost <= 0:
        return []
    from hippo.retrieve.dates import mentioned_dates

    return [w.widened(p.date_slack_days) for w in mentioned_dates(text)]


def _window_hits(db: Store, blob: bytes, k: int, filters: MemoryFilter,
                 windows: Sequence[Window]) -> list[int]:
    """Nearest `k` vectors created inside any window (and inside the user's own bounds)."""

    from hippo.timeutil import iso

    def inside(w: Window) -> Any:
        since, until = iso(w.start), iso(w.end)
        if filters.since and filters.since > since:
            since = filters.since
        if filters.until and filters.until < until:
            until = filters.until
        if since > until:
            return None
        return vec.search(db, blob, k, dataclasses.replace(filters, since=since, until=until))

    return stages.window_hits(windows, k, inside)


def _want_rerank(h: Hippo, rerank: bool | None) -> bool:
    return bool(h.settings.get("rerank")) if rerank is None else rerank


def _reranker(h: Hippo, p: SearchParams) -> Callable[[str, list[str]], list[float]]:
    """Voyage's scores of (query, texts), behind the guard (`hippo.retrieve.rerank`)."""
    def scores(text: str, texts: list[str]) -> list[float]:
        from hippo.retrieve.rerank import rerank

        return rerank(h.db, h.settings, text, texts, timeout_ms=p.rerank_timeout_ms)

    return scores
