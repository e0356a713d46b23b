"""The search stages on their own (`hippo.retrieve.stages`, `hippo.retrieve.candidates`,
`mmr.redundancy_penalty`), on hand-made candidates: no store, no model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hippo.memory.memtypes import BUILTIN
from hippo.retrieve import candidates as stage
from hippo.retrieve import stages
from hippo.retrieve.dates import Window
from hippo.retrieve.fuse import Fused
from hippo.retrieve.mmr import redundancy_penalty
from hippo.retrieve.params import DEFAULT_PARAMS, SearchParams
from hippo.retrieve.rerank import RerankUnavailable
from hippo.store.vectors import VecHit

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def record(i: int, *, type: str = "fact", created: str = "2026-05-01T00:00:00.000Z",
           importance: float = 0.5) -> dict[str, Any]:
    return {"id": i, "text": f"memory {i}", "type": type, "created_at": created,
            "confirmed_at": None, "importance": importance}


def cands(scores: list[float], **fields: Any) -> list[stage.Candidate]:
    fused = [Fused(i, s, s / 30, {}) for i, s in enumerate(scores, 1)]
    return stage.candidates(fused, {f.id: record(f.id, **fields) for f in fused})


def test_degradations_have_one_wording() -> None:
    assert stages.degradation("fts", ValueError("bad\n  thing"), stages.VECTOR_ONLY) == \
        "fts: bad thing (vector results only)"
    assert stages.degradation("embedder", RuntimeError(), stages.LEXICAL_ONLY) == \
        "embedder: RuntimeError (lexical results only)"
    assert stages.degradation("late interaction", "odd  blob", stages.FUSED_ORDER) == \
        "late interaction: odd blob (fused order)"


def test_candidates_drop_memories_deleted_since_retrieval() -> None:
    fused = [Fused(1, 1.0, 0.1, {}), Fused(2, 0.5, 0.05, {}), Fused(3, 0.2, 0.01, {})]
    got = stage.candidates(fused, {1: record(1), 3: record(3)})
    assert [c.id for c in got] == [1, 3]


def test_window_hits_keep_the_nearest_distance_and_skip_windows_out_of_bounds() -> None:
    w = [Window(NOW, NOW), Window(NOW, NOW), Window(NOW, NOW)]
    answers = iter([[VecHit(1, 0.5), VecHit(2, 0.2)], None, [VecHit(1, 0.1), VecHit(3, 0.3)]])
    assert stages.window_hits(w, 2, lambda _: next(answers)) == [1, 2]


def test_late_relevance_scales_the_pool_and_keeps_the_rest_below_it() -> None:
    fused = [Fused(i, s, 0.0, {}) for i, s in [(1, 1.0), (2, 0.8), (3, 0.5), (4, 0.4)]]
    got = stages.late_relevance([1, 2, 3], [0.2, 0.6, 0.4], fused)
    assert got == {1: 0.0, 2: 1.0, 3: pytest.approx(0.5), 4: 0.0}  # floor 0 · fused score
    flat = stages.late_relevance([1, 2], [0.3, 0.3], fused)
    assert flat == {1: 1.0, 2: 1.0, 3: 0.5, 4: 0.4}  # equal scores: all 1, floor 1


def test_relevance_applies_the_date_boost_then_the_hint() -> None:
    p = SearchParams(date_boost=0.5)
    cs = cands([1.0, 0.5], type="task")
    cs[1].date = p.date_boost
    stage.relevance("next task", cs, p)
    assert cs[0].hint == p.hint_boost > 0
    assert cs[0].relevance == min(1.0, 1.0 / 1.5 + p.hint_boost)
    assert cs[1].relevance == pytest.approx(min(1.0, (0.5 + 0.5) / 1.5 + p.hint_boost))
    plain = cands([0.4])
    plain[0].late = 0.9  # late interaction's relevance replaces the fused score
    stage.relevance("what", plain, DEFAULT_PARAMS)
    assert plain[0].relevance == 0.9 and plain[0].hint == 0.0


def test_date_boost_marks_candidates_created_in_a_window() -> None:
    cs = cands([1.0, 0.9])
    cs[1].record["created_at"] = "2025-03-03T10:00:00.000Z"
    stage.date_boost(cs, [Window(datetime(2025, 3, 3, tzinfo=UTC),
                                 datetime(2025, 3, 4, tzinfo=UTC))], DEFAULT_PARAMS)
    assert [c.date for c in cs] == [0.0, DEFAULT_PARAMS.date_boost]
    stage.date_boost(cs[:1], [], DEFAULT_PARAMS)  # no window: nothing changes
    assert cs[0].date == 0.0


def test_redundancy_penalty() -> None:
    assert redundancy_penalty(0.8, [], 0.65, 1.0) == (0.0, 0.0)
    most, penalty = redundancy_penalty(0.8, [0.2, 0.9, -0.5], 0.5, 1.0)
    assert most == 0.9 and penalty == pytest.approx(0.8)  # at most the relevance itself
    most, penalty = redundancy_penalty(0.8, [-0.3], 0.5, 1.0)
    assert (most, penalty) == (-0.3, 0.0)  # never a raise
    assert redundancy_penalty(0.8, [0.9], 0.0, 1.0) == (0.9, 0.0)  # λ 0: no penalty


def test_diversify_and_score_rank_a_near_copy_below_the_original() -> None:
    p = SearchParams()
    cs = cands([1.0, 0.99, 0.5])
    stage.relevance("x", cs, p)
    sims = {(1, 2): 0.99, (1, 3): 0.0, (2, 3): 0.0}
    picked = stage.diversify(cs, sims, 3, p)
    assert [c.id for c in picked] == [1, 3, 2]
    assert picked[0].mmr == {"rank": 1, "score": pytest.approx(p.mmr_lambda),
                             "max_similarity": 0.0, "penalty": 0.0}
    assert picked[2].mmr is not None and picked[2].mmr["max_similarity"] == 0.99
    assert picked[2].scored < picked[2].relevance
    ranked = stage.score(picked, BUILTIN, NOW, p)
    assert [c.id for c in ranked] == sorted([c.id for c in picked],
                                            key=lambda i: (-by(ranked, i).final, i))
    assert all(c.freshness is not None for c in ranked)


def by(cs: list[stage.Candidate], i: int) -> stage.Candidate:
    return next(c for c in cs if c.id == i)


def test_a_memory_from_a_named_date_is_not_stale() -> None:
    cs = cands([1.0, 1.0], created="2020-01-01T00:00:00.000Z")
    cs[0].date = 0.1
    for c in cs:
        c.scored = 1.0
    ranked = stage.score(cs, BUILTIN, NOW, DEFAULT_PARAMS)
    assert ranked[0].id == 1 and ranked[0].freshness == {**ranked[0].freshness, "value": 1.0}
    assert ranked[1].freshness is not None and ranked[1].freshness["value"] < 0.01


def test_rerank_reorders_the_pool_or_keeps_the_local_order() -> None:
    p = SearchParams()
    cs = stage.score(cands([1.0, 0.8, 0.6]), BUILTIN, NOW, p)
    degraded: list[str] = []
    got = stage.rerank("q", cs, 2, p, degraded, lambda q, texts: [0.1, 0.9])
    assert [c.id for c in got] == [2, 1] and got[0].rerank == {"rank": 1, "score": 0.9}
    assert got[0].scored == 0.9 and not degraded

    def down(q: str, texts: list[str]) -> list[float]:
        raise RerankUnavailable("VOYAGE_API_KEY is not set")

    again = stage.score(cands([1.0, 0.8]), BUILTIN, NOW, p)
    assert stage.rerank("q", again, 5, p, degraded, down) == again
    assert degraded == ["rerank: VOYAGE_API_KEY is not set (local order)"]
    one = stage.score(cands([1.0]), BUILTIN, NOW, p)
    assert stage.rerank("q", one, 5, p, degraded, down) == one  # nothing to reorder: no call
    assert len(degraded) == 1
