"""Brain search's stages after retrieval, over one record per fused candidate.

fuse → late interaction → date windows → task hint → MMR → score → rerank: each stage
reads and fills fields of `Candidate` (`hippo.retrieve.pipeline` runs them in order).
Pure but for late interaction (token matrices from the store, maybe the model), MMR's
similarities (from the store) and the reranker (a paid call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hippo.retrieve import stages
from hippo.retrieve.hint import apply_hint, task_hint
from hippo.retrieve.mmr import redundancy_penalty, select
from hippo.retrieve.score import age_days, final_score, freshness, tau_for

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.retrieve.dates import Window
    from hippo.retrieve.fuse import Fused
    from hippo.retrieve.params import SearchParams
    from hippo.retrieve.tokenmatrix import TokenMatrix

FALLBACK_TYPE = "fact"  # τ for a stored type no longer declared in the config


@dataclass(slots=True)
class Candidate:
    """One fused candidate and what each stage made of it."""

    fused: Fused
    record: dict[str, Any]
    late: float | None = None  # late interaction's relevance (None: the stage did not run)
    date: float = 0.0  # the date boost: created inside a window the query names
    hint: float = 0.0  # the task hint's boost
    relevance: float = 0.0  # fused (or late) relevance, date boost and hint applied
    # From MMR on (the picked candidates only):
    mmr: dict[str, Any] | None = None
    scored: float = 0.0  # the relevance scored: less MMR's penalty, or the reranker's
    freshness: dict[str, float] | None = None
    final: float = 0.0
    rerank: dict[str, Any] | None = None

    @property
    def id(self) -> int:
        return self.fused.id


def candidates(fused: Sequence[Fused], records: dict[int, dict[str, Any]]) -> list[Candidate]:
    """The fused candidates whose memory still exists, in fused order."""
    return [Candidate(f, records[f.id]) for f in fused if f.id in records]


def late_interaction(h: Hippo, text: str, cands: Sequence[Candidate], p: SearchParams,
                     degraded: list[str], query_tokens: TokenMatrix | None = None
                     ) -> float | None:
    """Relevance from late interaction (`hippo.retrieve.late`) for the candidates, and the
    best MaxSim score of the pool as it is (before scaling: on the same scale for every
    query, so it says how well the query matches anything at all).

    The best `late_pool` candidates get their min-max scaled MaxSim score; the rest keep
    their fused order below the lowest of those. Nothing (and None) when the stage is off
    or the embedder has no token vectors (or is down: already in `degraded`); a failure
    of the stage itself is added to `degraded`, and the fused score is used then.
    """
    if p.late_pool <= 0 or not cands:
        return None
    from hippo.retrieve import tokencache

    try:
        emb = h.embedder("brain")
    except Exception:  # noqa: BLE001 - no embedder: the query vector has said so already
        return None
    if not tokencache.can_encode_tokens(emb):
        return None
    from hippo.retrieve import late

    try:
        pool = list(cands[: p.late_pool])
        texts = [c.record["text"] for c in pool]
        if query_tokens is None:
            query_tokens = tokencache.query_matrix(h.db, emb, text)
        mats = tokencache.token_matrices(h.db, emb, texts)
        raw = late.late_scores(query_tokens, mats)
    except Exception as exc:  # noqa: BLE001 - an optional stage: the fused order stands
        degraded.append(stages.degradation("late interaction", exc, stages.FUSED_ORDER))
        return None
    scores = stages.late_relevance([c.id for c in pool], raw, [c.fused for c in cands])
    for c in cands:
        c.late = scores[c.id]
    return max(raw, default=None)


def date_boost(cands: Sequence[Candidate], windows: Sequence[Window], p: SearchParams) -> None:
    """The boost of candidates created inside a window the query names."""
    if not windows:
        return
    from hippo.retrieve.dates import in_any
    from hippo.retrieve.score import parse_timestamp

    for c in cands:
        if in_any(parse_timestamp(c.record["created_at"]), windows):
            c.date = p.date_boost


def relevance(text: str, cands: Sequence[Candidate], p: SearchParams) -> None:
    """Each candidate's relevance: late (else fused) score, the date boost (then rescaled
    so relevance stays in 0..1), the task hint."""
    boosted = any(c.date for c in cands)
    for c in cands:
        base = c.late if c.late is not None else c.fused.score
        if boosted:
            base = (base + c.date) / (1.0 + p.date_boost)
        c.hint = task_hint(text, c.record["type"], p)
        c.relevance = apply_hint(base, c.hint)


def diversify(cands: Sequence[Candidate], sims: dict[tuple[int, int], float], n: int,
              p: SearchParams) -> list[Candidate]:
    """MMR's picks, best first, each with its redundancy with the better picks: its
    penalty lowers the relevance that is scored (never raises it)."""
    by_id = {c.id: c for c in cands}

    def sim(a: int, b: int) -> float:
        return sims.get((min(a, b), max(a, b)), 0.0)

    picked = select(list(by_id), {c.id: c.relevance for c in cands}, sim, n, p.mmr_lambda)
    out = []
    for rank, (mid, mmr_score) in enumerate(picked, 1):
        c = by_id[mid]
        most, penalty = redundancy_penalty(c.relevance, [sim(mid, b) for b, _ in picked[: rank - 1]],
                                           p.mmr_lambda, p.mmr_penalty_weight)
        c.scored = c.relevance - penalty
        c.mmr = {"rank": rank, "score": mmr_score, "max_similarity": most, "penalty": penalty}
        out.append(c)
    return out


def _freshness(rec: dict[str, Any], types: Any, now: datetime) -> dict[str, float]:
    tau = tau_for(rec["type"] if rec["type"] in types else FALLBACK_TYPE, types)
    age = age_days(rec["created_at"], rec["confirmed_at"], now)
    return {"value": freshness(age, tau), "age_days": age, "tau_days": tau}


def score(picked: list[Candidate], types: Any, now: datetime, p: SearchParams) -> list[Candidate]:
    """The final blend of relevance, importance and freshness, best first. A memory
    created on a date the query names is not stale for it."""
    for c in picked:
        fresh = _freshness(c.record, types, now)
        if c.date:
            fresh = {**fresh, "value": 1.0}
        c.freshness = fresh
        c.final = final_score(c.scored, c.record["importance"], fresh["value"], p)
    return sorted(picked, key=lambda c: (-c.final, c.id))


def rerank(text: str, ranked: list[Candidate], pool_size: int, p: SearchParams,
           degraded: list[str], reranker: Callable[[str, list[str]], list[float]]
           ) -> list[Candidate]:
    """The candidates with the reranker's score as relevance, re-sorted; unchanged on
    any failure (named in `degraded`)."""
    from hippo.retrieve.rerank import RerankUnavailable

    pool = ranked[:pool_size]
    if len(pool) < 2:
        return ranked  # nothing to reorder: no call, no cost
    try:
        scores = reranker(text, [c.record["text"] for c in pool])
    except RerankUnavailable as exc:
        degraded.append(stages.degradation("rerank", exc, stages.LOCAL_ORDER))
        return ranked
    order = sorted(range(len(pool)), key=lambda i: (-scores[i], pool[i].id))
    for rank, i in enumerate(order, 1):
        c = pool[i]
        c.rerank = {"rank": rank, "score": scores[i]}
        c.scored = min(1.0, max(0.0, scores[i]))
        assert c.freshness is not None
        c.final = final_score(c.scored, c.record["importance"], c.freshness["value"], p)
    return sorted(pool, key=lambda c: (-c.final, c.id))
