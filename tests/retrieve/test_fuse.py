"""Reciprocal rank fusion: exact scores, normalisation, ties, and the [0, 1] invariant."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hippo.retrieve.fuse import Fused, fuse, max_rrf, normalised_rrf, rrf
from hippo.retrieve.params import BM25, VECTOR, SearchParams


def test_rrf_two_retrievers_swapped_ranks_exact() -> None:
    rankings = {BM25: [1, 2], VECTOR: [2, 1]}
    assert rrf(rankings, k=60) == {1: 1 / 61 + 1 / 62, 2: 1 / 61 + 1 / 62}
    expected = (1 / 61 + 1 / 62) / (2 / 61)
    assert normalised_rrf(rankings, k=60) == {1: expected, 2: expected}
    assert expected == pytest.approx(0.99193548387, abs=1e-11)


def test_first_everywhere_scores_exactly_one() -> None:
    norm = normalised_rrf({BM25: [7, 8, 9], VECTOR: [7, 9]})
    assert norm[7] == 1.0
    assert norm[9] == pytest.approx((1 / 63 + 1 / 62) / (2 / 61), abs=1e-15)
    # 8 was found by BM25 alone, at rank 2: it stays a candidate with half-scale credit.
    assert norm[8] == pytest.approx((1 / 62) / (2 / 61), abs=1e-15)


def test_id_from_one_retriever_only_stays_a_candidate() -> None:
    norm = normalised_rrf({BM25: [10], VECTOR: [20]})
    assert norm == {10: 0.5, 20: 0.5}


def test_empty_ranking_still_counts_in_the_maximum() -> None:
    # BM25 ran and found nothing: a vector-only top hit is worth half.
    assert normalised_rrf({BM25: [], VECTOR: [3]}) == {3: 0.5}
    # BM25 unavailable (left out): the vector retriever alone can reach 1.0.
    alone = normalised_rrf({VECTOR: [3, 4]})
    assert alone[3] == 1.0
    assert alone[4] == pytest.approx(61 / 62, abs=1e-15)


def test_weights() -> None:
    rankings = {BM25: [1], VECTOR: [2]}
    weights = {BM25: 2.0, VECTOR: 1.0}
    assert rrf(rankings, 60, weights) == {1: 2 / 61, 2: 1 / 61}
    assert max_rrf(rankings, 60, weights) == pytest.approx(3 / 61, abs=1e-15)
    norm = normalised_rrf(rankings, 60, weights)
    assert norm[1] == pytest.approx(2 / 3, abs=1e-15)
    assert norm[2] == pytest.approx(1 / 3, abs=1e-15)
    # A retriever missing from the weights mapping gets weight 1.0.
    assert rrf({BM25: [1], "other": [1]}, 60, {BM25: 0.5}) == {1: 0.5 / 61 + 1 / 61}


def test_params_weights_feed_fusion() -> None:
    params = SearchParams.from_mapping({"bm25_weight": 3, "rrf_k": 10})
    rankings = {BM25: [1], VECTOR: [1, 2]}
    raw = rrf(rankings, params.rrf_k, params.retriever_weights)
    assert raw == {1: 3 / 11 + 1 / 11, 2: 1 / 12}


def test_bad_weights_and_k() -> None:
    with pytest.raises(ValueError, match="bm25"):
        rrf({BM25: [1]}, 60, {BM25: -1.0})
    with pytest.raises(ValueError, match="positive"):
        normalised_rrf({BM25: [1]}, 60, {BM25: 0.0})
    with pytest.raises(ValueError, match="k"):
        rrf({BM25: [1]}, k=-1)


def test_repeated_id_in_one_ranking_counts_once() -> None:
    assert rrf({BM25: [5, 5, 6]}) == {5: 1 / 61, 6: 1 / 62}


def test_fuse_orders_best_first_ties_by_id_and_keeps_ranks() -> None:
    fused = fuse({BM25: [2, 1, 3], VECTOR: [1, 2]})
    assert [f.id for f in fused] == [1, 2, 3]  # 1 and 2 tie exactly; 1 wins by id
    assert fused[0] == Fused(
        id=1,
        score=(1 / 62 + 1 / 61) / (2 / 61),
        raw=1 / 62 + 1 / 61,
        ranks={BM25: 2, VECTOR: 1},
    )
    assert fused[1].ranks == {BM25: 1, VECTOR: 2}
    assert fused[2].ranks == {BM25: 3}
    assert fused[2].raw == 1 / 63
    assert fuse({}) == []


rankings_strategy = st.dictionaries(
    st.sampled_from([BM25, VECTOR, "third"]),
    st.lists(st.integers(min_value=1, max_value=60), max_size=40),
    min_size=1,
)
weights_strategy = st.fixed_dictionaries(
    {
        BM25: st.floats(min_value=0.01, max_value=10),
        VECTOR: st.floats(min_value=0.01, max_value=10),
        "third": st.floats(min_value=0.01, max_value=10),
    }
)


@given(rankings_strategy, weights_strategy, st.integers(min_value=0, max_value=200))
def test_normalised_fusion_stays_in_unit_interval(
    rankings: dict[str, list[int]], weights: dict[str, float], k: int
) -> None:
    norm = normalised_rrf(rankings, k, weights)
    assert set(norm) == {i for ids in rankings.values() for i in ids}
    assert all(0.0 < s <= 1.0 for s in norm.values())
    fused = fuse(rankings, k, weights)
    keys = [(-f.score, f.id) for f in fused]
    assert keys == sorted(keys)


@given(rankings_strategy)
def test_fusion_does_not_depend_on_retriever_order(rankings: dict[str, list[int]]) -> None:
    reversed_rankings = dict(reversed(list(rankings.items())))
    assert fuse(rankings) == fuse(reversed_rankings)
