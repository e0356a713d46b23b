"""Freshness, age and final score with hand-computed values; SearchParams defaults and overrides."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hippo.memory.memtypes import BUILTIN, TIERS, MemType, registry
from hippo.retrieve.params import BM25, DEFAULT_PARAMS, VECTOR, SearchParams
from hippo.retrieve.score import (
    age_days,
    final_score,
    freshness,
    match_factor,
    parse_timestamp,
    tau_for,
)

NOW = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)


def test_freshness_at_tau_is_one_over_e() -> None:
    for tau in (7.0, 90.0, 365.0, 3650.0):
        assert freshness(tau, tau) == math.exp(-1)
    assert freshness(0.0, 7.0) == 1.0
    assert freshness(-3.0, 7.0) == 1.0  # dated in the future: no bonus beyond 1
    assert freshness(14.0, 7.0) == math.exp(-2)
    assert freshness(30.0, 90.0) == pytest.approx(0.7165313105737893, abs=1e-15)


def test_freshness_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="tau"):
        freshness(1.0, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        freshness(float("nan"), 7.0)


def test_age_days_from_created_or_confirmed() -> None:
    assert age_days("2026-01-01T00:00:00Z", None, NOW) == 30.5
    assert age_days("2026-01-01T00:00:00Z", "2026-01-21T00:00:00Z", NOW) == 10.5
    # A confirmation older than creation (odd import) cannot age the memory.
    assert age_days("2026-01-21T00:00:00Z", "2025-01-01T00:00:00Z", NOW) == 10.5
    # Offsets are honoured; naive stored strings mean UTC.
    assert age_days("2026-01-31T14:00:00+02:00", None, NOW) == 0.0
    assert age_days("2026-01-30 12:00:00", None, NOW) == 1.0
    assert age_days("2026-02-01T12:00:00Z", None, NOW) == -1.0


def test_age_days_needs_aware_now_and_valid_timestamps() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        age_days("2026-01-01T00:00:00Z", None, datetime(2026, 1, 31))
    with pytest.raises(ValueError, match="ISO-8601"):
        age_days("yesterday", None, NOW)
    local = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert age_days("2026-01-01T00:00:00Z", None, local) == 30.5
    assert parse_timestamp("2026-01-01T00:00:00Z") == datetime(2026, 1, 1, tzinfo=UTC)


def test_final_score_hand_computed() -> None:
    # 0.75·0.8 + 0.10·0.5 + 0.15·e^-1 = 0.6 + 0.05 + 0.0551819161757164
    assert final_score(0.8, 0.5, math.exp(-1)) == pytest.approx(0.7051819161757164, abs=1e-12)
    assert final_score(1.0, 1.0, 1.0) == pytest.approx(1.0, abs=1e-12)
    assert final_score(0.0, 0.0, 0.0) == 0.0
    custom = SearchParams.from_mapping(
        {"w_relevance": 0.5, "w_importance": 0.3, "w_freshness": 0.2}
    )
    assert final_score(0.8, 0.5, 0.25, custom) == pytest.approx(0.4 + 0.15 + 0.05, abs=1e-12)


def test_typed_freshness_end_to_end() -> None:
    # A decision and an observability record, both a year old, both never confirmed.
    age = age_days("2025-01-31T12:00:00Z", None, NOW)
    assert age == 365.0
    decision = freshness(age, tau_for("decision"))
    ping = freshness(age, tau_for("observability"))
    assert decision == pytest.approx(math.exp(-0.1), abs=1e-15)
    assert ping == pytest.approx(math.exp(-365 / 7), abs=1e-30)
    assert final_score(0.6, 0.5, decision) == pytest.approx(
        0.45 + 0.05 + 0.15 * 0.9048374180359595, abs=1e-12
    )


def test_tau_table_matches_spec() -> None:
    expected = {
        **dict.fromkeys(["rule", "architecture", "decision"], 3650.0),
        **dict.fromkeys(["tool", "config", "people"], 730.0),
        "fact": 365.0,
        "insight": 180.0,
        **dict.fromkeys(["task", "todo"], 90.0),
        "observability": 7.0,
        **dict.fromkeys(["procedure", "preference"], 730.0),
    }
    assert {name: t.tau_days for name, t in BUILTIN.items()} == expected
    assert {name for name, t in BUILTIN.items() if t.frozen} == {"rule", "architecture", "decision"}
    assert TIERS == ("procedural", "semantic", "episodic")
    assert {name for name, t in BUILTIN.items() if t.tier == "episodic"} == {
        "task",
        "todo",
        "observability",
    }
    assert {name for name, t in BUILTIN.items() if t.tier == "procedural"} == {
        "rule",
        "procedure",
        "tool",
        "config",
    }
    assert {tau_for(name) for name in BUILTIN} == {3650.0, 730.0, 365.0, 180.0, 90.0, 7.0}


def test_tau_for_unknown_type_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown memory type 'memo'.*decision"):
        tau_for("memo")
    assert tau_for("memo", {"memo": MemType("memo", 30, "episodic")}) == 30.0
    # User types from [types.NAME] come with the built-ins and may override a τ.
    types = registry({"memo": {"tau_days": 30}, "fact": {"tau_days": 100}})
    assert tau_for("memo", types) == 30.0
    assert tau_for("fact", types) == 100.0
    assert tau_for("decision", types) == 3650.0


def test_search_params_defaults() -> None:
    p = DEFAULT_PARAMS
    assert (p.candidates_per_retriever, p.rrf_k, p.mmr_k, p.result_limit) == (30, 60, 10, 5)
    assert (p.mmr_lambda, p.w_relevance, p.w_importance, p.w_freshness) == (0.65, 0.75, 0.10, 0.15)
    assert p.retriever_weights == {BM25: 1.0, VECTOR: 1.0}
    assert (p.rerank_pool, p.rerank_timeout_ms) == (10, 800)
    assert p.hint_boost == 0.05
    assert p.hint_words == {
        "task",
        "tasks",
        "reminder",
        "remind",
        "deadline",
        "due",
        "next",
        "todo",
        "todos",
    }


def test_search_params_overrides() -> None:
    p = SearchParams.from_mapping(
        {"rrf_k": 30.0, "mmr_lambda": 1, "hint_words": ["Ticket", " due "], "result_limit": 8}
    )
    assert (p.rrf_k, p.mmr_lambda, p.result_limit) == (30, 1.0, 8)
    assert isinstance(p.rrf_k, int) and isinstance(p.mmr_lambda, float)
    assert p.hint_words == {"ticket", "due"}
    assert SearchParams.from_mapping({}) == DEFAULT_PARAMS


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"rrf_kk": 10}, "unknown search setting 'rrf_kk'"),
        ({"rrf_k": "60"}, "'rrf_k' must be a whole number"),
        ({"rrf_k": 1.5}, "'rrf_k' must be a whole number"),
        ({"mmr_k": True}, "'mmr_k' must be a number"),
        ({"mmr_lambda": 1.2}, "'mmr_lambda' must be between 0 and 1"),
        ({"hint_boost": 0.5}, "'hint_boost' must be between 0 and 0.2"),
        ({"hint_words": "task"}, "'hint_words' must be a list of words"),
        ({"w_freshness": -0.1}, "'w_freshness' must be a finite number"),
        ({"bm25_weight": 0, "vector_weight": 0}, "cannot both be 0"),
        ({"result_limit": 0}, "'result_limit' must be at least 1"),
        ({"match_full": 0.1}, "'match_full' must be 0 \\(off\\) or above match_floor"),
        ({"match_floor": 0.5, "match_full": 0.4}, "'match_full' must be 0"),
        ({"match_floor": -0.1}, "'match_floor' must be between 0 and 1"),
    ],
)
def test_search_params_rejects(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SearchParams.from_mapping(overrides)


@given(
    st.floats(min_value=0, max_value=1e6),
    st.floats(min_value=0, max_value=1e6),
    st.floats(min_value=1e-3, max_value=1e5),
)
def test_freshness_never_rises_with_age(a: float, b: float, tau: float) -> None:
    young, old = sorted((a, b))
    assert freshness(old, tau) <= freshness(young, tau)
    for age in (young, old):
        f = freshness(age, tau)
        assert 0.0 <= f <= 1.0
        if age / tau <= 700:  # beyond ~745 e^-x underflows to 0.0 in IEEE doubles
            assert f > 0.0


def test_match_factor_hand_computed() -> None:
    p = DEFAULT_PARAMS
    assert (p.match_floor, p.match_full) == (0.2, 0.4)
    assert match_factor(0.1, p) == 0.0  # nothing in the pool matches the query's words
    assert match_factor(0.2, p) == 0.0
    assert match_factor(0.3, p) == pytest.approx(0.5)
    assert match_factor(0.4, p) == 1.0
    assert match_factor(0.9, p) == 1.0
    assert match_factor(None, p) == 1.0  # no late interaction: the SPEC score as it is
    off = SearchParams.from_mapping({"match_full": 0})
    assert match_factor(0.0, off) == 1.0
    steep = SearchParams.from_mapping({"match_floor": 0.0, "match_full": 0.1})
    assert match_factor(0.05, steep) == pytest.approx(0.5)


@given(st.floats(min_value=-1, max_value=1), st.floats(min_value=-1, max_value=1))
def test_match_factor_stays_in_0_1_and_never_falls_as_the_match_improves(a: float,
                                                                         b: float) -> None:
    low, high = sorted((a, b))
    assert 0.0 <= match_factor(low) <= match_factor(high) <= 1.0
