"""The Brain search pipeline (SPEC "Brain search pipeline"), one function the CLI wraps.

embed the query (persistent cache) → vector KNN + FTS5 BM25 (filters inside both; plus
vector KNN inside the time windows the query names) → RRF → late-interaction relevance
and date boost (`hippo.retrieve.query`; docs/quality.md) → task hint → MMR →
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import EllipsisType
from typing import TYPE_CHECKING, Any, cast

from hippo.errors import ConfigError, HippoError, UsageError
from hippo.memtypes import TIERS, resolve
from hippo.retrieve import fts, vec
from hippo.retrieve.constants import (
    BM25,
    DATES,
    PARALLEL_MIN_ROWS,
    VECTOR,
    SearchParams,
)
from hippo.retrieve.fuse import fuse
from hippo.retrieve.hint import apply_hint, task_hint
from hippo.retrieve.mmr import select
from hippo.retrieve.querytext import prepare
from hippo.retrieve.score import age_days, final_score, freshness, match_factor, tau_for
from hippo.store.filters import SearchFilters

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core import Hippo
    from hippo.store import Store
    from hippo.store.lexical import LexHit

RECORDS = "SELECT {columns} FROM memories WHERE id IN ({marks})"
FALLBACK_TYPE = "fact"  # τ for a stored type no longer declared in the config
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


def load_params(settings: Settings) -> SearchParams:
    """`SearchParams` with the config file's [search] table applied (bad value → exit 78)."""
    try:
        return SearchParams.from_mapping(settings.table("search"))
    except ValueError as exc:
        raise ConfigError(f"{exc} (in [search] of {settings.file})") from None


def _bound(value: datetime | str | None) -> str | None:
    from hippo.timeutil import iso, parse_since

    if value is None or value == "":
        return None
    return iso(value if isinstance(value, datetime) else parse_since(value))


def make_filters(h: Hippo, *, types: Sequence[str] = (), tiers: Sequence[str] = (),
                 tags: Sequence[str] = (), since: datetime | str | None = None,
                 until: datetime | str | None = None,
                 projects: Sequence[str | None] | None | EllipsisType = ...,
                 include_superseded: bool = False) -> SearchFilters:
    """Validated filters; `projects=...` means the current project plus global memories."""
    for t in types:
        resolve(t, h.types)
    for tier in tiers:
        if tier not in TIERS:
            raise UsageError(f"unknown tier {tier!r}; known tiers: {', '.join(TIERS)}")
    if projects is ...:
        scope: tuple[str | None, ...] | None = tuple(dict.fromkeys((h.project, None)))
    else:
        scope = None if projects is None else tuple(dict.fromkeys(projects))
    return SearchFilters(projects=scope, types=tuple(types), tiers=tuple(tiers),
                   tags=tuple(t.strip().lower() for t in tags if t.strip()),
                   since=_bound(since), until=_bound(until),
                   include_superseded=include_superseded)


def _note(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _cached(h: Hippo, model: str, text: str) -> bytes | None:
    """The cached vector of `text` under `model`, counting the hit without ever waiting."""
    from hippo.vectors import content_hash

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
    from hippo.vectors import check_model, store_model

    db = h.db
    if h.settings.origins.get("embedder") == "default":
        recorded = store_model(db, "brain")
        hit = _cached(h, recorded[0], text) if recorded else None
        if hit is not None:
            return hit
    try:
        emb = h.embedder("brain")
    except Exception as exc:  # noqa: BLE001 - no embedder: lexical search still works
        degraded.append(f"embedder: {_note(exc)} (lexical results only)")
        return None
    check_model(db, "brain", emb)
    hit = _cached(h, emb.model_id, text)
    if hit is not None:
        return hit
    try:
        if tokens is not None:
            from hippo.retrieve import query as q

            if q.can_encode_tokens(emb):
                # A new query for the local model: its vector and its token matrix (for
                # late interaction) come from one forward pass, not two.
                blob, matrix = q.encode_query(db, emb, text)
                tokens.append(matrix)
                return blob
        from hippo.vectors import embed_texts, to_blob

        return to_blob(embed_texts(db, emb, [text])[0])
    except Exception as exc:  # noqa: BLE001 - provider down, key missing, timeout, ...
        degraded.append(f"embedder: {_note(exc)} (lexical results only)")
        return None


def _records(db: Any, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    from hippo.brain import COLUMNS
    from hippo.records import to_record

    sql = RECORDS.format(columns=COLUMNS, marks=",".join("?" * len(ids)))
    return {r["id"]: to_record(r) for r in db.rows(sql, list(ids))}


def _freshness(rec: dict[str, Any], h: Hippo, now: datetime) -> dict[str, float]:
    types = h.types
    tau = tau_for(rec["type"] if rec["type"] in types else FALLBACK_TYPE, types)
    age = age_days(rec["created_at"], rec["confirmed_at"], now)
    return {"value": freshness(age, tau), "age_days": age, "tau_days": tau}


def search(
    h: Hippo,
    query: str,
    *,
    limit: int | None = None,
    types: Sequence[str] = (),
    tiers: Sequence[str] = (),
    tags: Sequence[str] = (),
    since: datetime | str | None = None,
    until: datetime | str | None = None,
    projects: Sequence[str | None] | None | EllipsisType = ...,
    include_superseded: bool = False,
    explain: bool = False,
    rerank: bool | None = None,
    params: SearchParams | None = None,
    now: datetime | None = None,
) -> SearchResult:
    """Search the Brain for `query`; at most `limit` results (default 5), best first.

    `projects`: ... (default) the current project and global memories; None every
    project; or a list of names (None in it = global). `since`/`until`: ISO-8601 or a
    relative age (7d, 12h), inclusive. Superseded memories are left out unless
    `include_superseded`. `rerank` None follows the `rerank` setting. `explain` adds
    each stage's rank and score to every result.
    """
    from hippo.timeutil import now as clock

    p = params or load_params(h.settings)
    limit = p.result_limit if limit is None else limit
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    filters = make_filters(h, types=types, tiers=tiers, tags=tags, since=since, until=until,
                           projects=projects, include_superseded=include_superseded)
    when = now or clock()
    text, notes = prepare(query)
    out = SearchResult(text, degraded=notes)
    if not text:
        return out
    db = h.db
    k = p.candidates_per_retriever

    rankings: dict[str, list[int]] = {}
    vec_info: dict[int, dict[str, Any]] = {}
    fts_info: dict[int, dict[str, Any]] = {}
    blob: bytes | None = None
    query_tokens: list[Any] = []
    collect = _lexical(db, text, k, filters, p)
    try:
        if not vec.has_store(db):
            rankings[VECTOR] = []  # nothing has a vector yet: ran, found nothing
        else:
            blob = query_vector(h, text, out.degraded,
                                query_tokens if p.late_pool > 0 else None)
            if blob is not None:
                hits = vec.search(db, blob, k, filters)
                rankings[VECTOR] = [x.id for x in hits]
                vec_info = {x.id: {"rank": n, "distance": x.distance}
                            for n, x in enumerate(hits, 1)}
    except BaseException:
        with contextlib.suppress(Exception):
            collect()  # the BM25 thread ends before its connection can be closed
        raise
    try:
        lexical = collect()
    except fts.FtsUnavailable as exc:
        out.degraded.append(f"fts: {_note(exc)} (vector results only)")
    else:
        rankings[BM25] = [x.id for x in lexical]
        fts_info = {x.id: {"rank": n, "score": x.score} for n, x in enumerate(lexical, 1)}

    windows = _date_windows(text, p)
    if windows and blob is not None:
        rankings[DATES] = _window_hits(db, blob, k, filters, windows)

    fused = fuse(rankings, p.rrf_k, p.retriever_weights) if rankings else []
    if not fused:
        return out
    records = _records(db, [f.id for f in fused])
    fused = [f for f in fused if f.id in records]  # deleted since the retrievers ran
    late, best_late = _late_relevance(h, text, fused, records, p, out.degraded,
                                      query_tokens[0] if query_tokens else None)
    dated = {f.id: p.date_boost if windows and _created_in(records[f.id], windows) else 0.0
             for f in fused}
    base = {f.id: (late[f.id] if late else f.score) for f in fused}
    if any(dated.values()):  # boost, then rescale so relevance stays in 0..1
        base = {i: (s + dated[i]) / (1.0 + p.date_boost) for i, s in base.items()}
    hint = {f.id: task_hint(text, records[f.id]["type"], p) for f in fused}
    relevance = {f.id: apply_hint(base[f.id], hint[f.id]) for f in fused}

    ids = [f.id for f in fused]
    sims = vec.similarities(db, ids)
    picked = select(ids, relevance, lambda a, b: sims.get((min(a, b), max(a, b)), 0.0),
                    max(p.mmr_k, limit), p.mmr_lambda)

    rows: list[dict[str, Any]] = []
    by_id = {f.id: f for f in fused}
    lam = p.mmr_lambda
    factor = p.mmr_penalty_weight * (1.0 - lam) / lam if lam > 0 else 0.0
    for n, (mid, mmr_score) in enumerate(picked, 1):
        rec = records[mid]
        fresh = _freshness(rec, h, when)
        if dated[mid]:  # the query asks about the time it was written: not stale for it
            fresh = {**fresh, "value": 1.0}
        # Redundancy with a better pick lowers the relevance that is scored (never raises).
        most = max((sims.get((min(mid, b), max(mid, b)), 0.0) for b, _ in picked[: n - 1]),
                   default=0.0)
        penalty = min(relevance[mid], factor * max(most, 0.0))
        rel = relevance[mid] - penalty
        rows.append({
            "id": mid, "relevance": rel, "freshness": fresh,
            "final": final_score(rel, rec["importance"], fresh["value"], p),
            "mmr": {"rank": n, "score": mmr_score, "max_similarity": most, "penalty": penalty},
            "rerank": None,
        })
    rows.sort(key=lambda r: (-r["final"], r["id"]))

    if _want_rerank(h, rerank):
        rows = _rerank(h, text, rows, records, max(p.rerank_pool, limit), p, out.degraded)
    # How well the query matches anything stored, unless that is known otherwise: the
    # reranker's scores are on one scale for every query already, and a memory created
    # on a date the query names matches it whatever its words.
    by = ("rerank" if any(r["rerank"] is not None for r in rows)
          else "date" if any(dated[r["id"]] for r in rows[:limit]) else "late")
    factor = match_factor(best_late, p) if by == "late" else 1.0

    for row in rows[:limit]:
        rec = records[row["id"]]
        result = {**rec, "score": row["final"] * factor, "degraded": list(out.degraded)}
        if explain:
            f = by_id[row["id"]]
            result["explain"] = {
                "bm25": fts_info.get(row["id"]),
                "vector": vec_info.get(row["id"]),
                "fused": {"score": f.score, "raw": f.raw},
                "hint": hint[row["id"]],
                "relevance": row["relevance"],
                "mmr": row["mmr"],
                "freshness": row["freshness"],
                "importance": rec["importance"],
                "rerank": row["rerank"],
                "final": row["final"],
                "match": None if best_late is None else {
                    "best_late": best_late, "factor": factor, "by": by},
            }
            if late:  # present only when the stage ran (an embedder with token vectors)
                result["explain"]["late"] = late[row["id"]]
            if windows:
                result["explain"]["date"] = dated[row["id"]]
        out.results.append(result)
    for result in out.results:  # a degradation met late (rerank) concerns every result
        result["degraded"] = list(out.degraded)
    return out


def _lexical(db: Store, text: str, k: int, filters: SearchFilters,
             p: SearchParams) -> Callable[[], list[LexHit]]:
    """Start the BM25 retriever; calling the result waits for its hits (or its error).

    On a big store it runs in a thread on a second connection while the caller embeds
    the query and scans the vectors: SQLite leaves the GIL while it works, so on two
    cores the BM25 time disappears behind the scan. Ids whose memory is gone by the
    time records are read are dropped below, as for any concurrent delete.
    """
    def run(conn: Store) -> list[LexHit]:
        return fts.search(conn, text, k, filters, and_min_hits=p.fts_and_min_hits)

    if db.lexical.extent("brain") < PARALLEL_MIN_ROWS:
        return lambda: run(db)
    from hippo.background import beside

    return beside(cast(Any, db), run, "hippo-bm25")


def _date_windows(text: str, p: SearchParams) -> list[Any]:
    """Time windows the query names, widened by the slack; none when the boost is off."""
    if p.date_boost <= 0:
        return []
    from hippo.retrieve.query import mentioned_dates

    return [w.widened(p.date_slack_days) for w in mentioned_dates(text)]


def _created_in(rec: dict[str, Any], windows: Sequence[Any]) -> bool:
    from hippo.retrieve.query import in_any
    from hippo.retrieve.score import parse_timestamp

    return in_any(parse_timestamp(rec["created_at"]), windows)


def _window_hits(db: Store, blob: bytes, k: int, filters: SearchFilters,
                 windows: Sequence[Any]) -> list[int]:
    """Nearest `k` vectors created inside any window (and inside the user's own bounds)."""
    import dataclasses

    from hippo.timeutil import iso

    hits: dict[int, float] = {}
    for w in windows[:4]:
        since, until = iso(w.start), iso(w.end)
        if filters.since and filters.since > since:
            since = filters.since
        if filters.until and filters.until < until:
            until = filters.until
        if since > until:
            continue
        for x in vec.search(db, blob, k, dataclasses.replace(filters, since=since, until=until)):
            hits[x.id] = min(x.distance, hits.get(x.id, x.distance))
    return sorted(hits, key=lambda i: (hits[i], i))[:k]


def _late_relevance(h: Hippo, text: str, fused: Sequence[Any],
                    records: dict[int, dict[str, Any]], p: SearchParams,
                    degraded: list[str],
                    query_tokens: Any = None) -> tuple[dict[int, float], float | None]:
    """Relevance from late interaction (`hippo.retrieve.query`) for the fused candidates,
    and the best MaxSim score of the pool as it is (before scaling: on the same scale for
    every query, so it says how well the query matches anything at all).

    The best `late_pool` candidates get their min-max scaled MaxSim score; the rest keep
    their fused order below the lowest of those. Empty (and None) when the stage is off
    or the embedder has no token vectors (or is down: already in `degraded`); a failure
    of the stage itself is added to `degraded`, and the fused score is used then.
    """
    if p.late_pool <= 0 or not fused:
        return {}, None
    from hippo.retrieve import query as q

    try:
        emb = h.embedder("brain")
    except Exception:  # noqa: BLE001 - no embedder: query_vector has said so already
        return {}, None
    if not q.can_encode_tokens(emb):
        return {}, None
    try:
        pool = list(fused[: p.late_pool])
        texts = [records[f.id]["text"] for f in pool]
        if query_tokens is None:
            query_tokens = q.query_matrix(h.db, emb, text)
        mats = q.token_matrices(h.db, emb, texts)
        raw = q.late_scores(query_tokens, mats)
    except Exception as exc:  # noqa: BLE001 - an optional stage: the fused order stands
        degraded.append(f"late interaction: {_note(exc)} (fused order)")
        return {}, None
    scaled = q.rescale(raw)
    out = {f.id: s for f, s in zip(pool, scaled)}
    floor = min(scaled, default=0.0)
    for f in fused[p.late_pool :]:
        out[f.id] = floor * f.score
    return out, max(raw, default=None)


def _want_rerank(h: Hippo, rerank: bool | None) -> bool:
    return bool(h.settings.get("rerank")) if rerank is None else rerank


def _rerank(h: Hippo, text: str, rows: list[dict[str, Any]],
            records: dict[int, dict[str, Any]], pool_size: int, p: SearchParams,
            degraded: list[str]) -> list[dict[str, Any]]:
    """Rows with the reranker's score as relevance, re-sorted; unchanged on any failure."""
    from hippo.retrieve.rerank import RerankUnavailable
    from hippo.retrieve.rerank import rerank as voyage

    pool = rows[:pool_size]
    if len(pool) < 2:
        return rows  # nothing to reorder: no call, no cost
    try:
        scores = voyage(h.db, h.settings, text, [records[r["id"]]["text"] for r in pool],
                        timeout_ms=p.rerank_timeout_ms)
    except RerankUnavailable as exc:
        degraded.append(f"rerank: {_note(exc)} (local order)")
        return rows
    order = sorted(range(len(pool)), key=lambda i: (-scores[i], pool[i]["id"]))
    for rank, i in enumerate(order, 1):
        row = pool[i]
        rec = records[row["id"]]
        row["rerank"] = {"rank": rank, "score": scores[i]}
        row["relevance"] = min(1.0, max(0.0, scores[i]))
        row["final"] = final_score(row["relevance"], rec["importance"],
                                   row["freshness"]["value"], p)
    return sorted(pool, key=lambda r: (-r["final"], r["id"]))
