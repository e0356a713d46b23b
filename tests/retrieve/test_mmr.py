"""MMR: a hand-computed selection order, lexical-only hits, ties, and the λ=1 invariant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hippo.retrieve.mmr import mmr

# Four candidates in 2-D. 2 is a near-duplicate of 1 (cosine 0.8); 3 is orthogonal to 1
# (cosine 0.6 to 2); 4 is a lexical-only hit with no vector.
IDS = [1, 2, 3, 4]
REL = {1: 1.0, 2: 0.9, 3: 0.5, 4: 0.3}
VECS = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [0.0, 0.0]])
MASK = [True, True, True, False]

# By hand, λ = 0.65:
#  step 1: pick 1 (highest relevance)       score 0.65·1.0               = 0.65
#  step 2: 2 → 0.65·0.9 − 0.35·0.8 = 0.305; 3 → 0.65·0.5 = 0.325; 4 → 0.65·0.3 = 0.195
#  step 3: 2 → 0.305 (max sim still 0.8);   4 → 0.195
#  step 4: 4 → 0.195
EXPECTED = [(1, 0.65), (3, 0.325), (2, 0.305), (4, 0.195)]


def assert_picks(got: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in expected]
    for (_, g), (_, e) in zip(got, expected, strict=True):
        assert g == pytest.approx(e, abs=1e-12)


def test_hand_computed_order_with_array_and_mask() -> None:
    assert_picks(mmr(IDS, REL, VECS, k=10, lam=0.65, mask=MASK), EXPECTED)


def test_missing_vector_as_none_row_is_the_same() -> None:
    rows = [[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], None]
    assert_picks(mmr(IDS, REL, rows, k=10, lam=0.65), EXPECTED)


def test_nan_row_is_treated_as_missing() -> None:
    vecs = VECS.copy()
    vecs[3] = np.nan
    assert_picks(mmr(IDS, REL, vecs), EXPECTED)


def test_k_limits_and_input_order_does_not_matter() -> None:
    assert_picks(mmr(IDS, REL, VECS, k=2), EXPECTED[:2])
    order = [3, 4, 2, 1]
    assert_picks(mmr(order, REL, VECS[[2, 3, 1, 0]]), EXPECTED)
    assert mmr(IDS, REL, VECS, k=0) == []
    assert mmr([], {}, None) == []


def test_higher_lambda_lets_the_near_duplicate_in() -> None:
    # λ = 0.9: 2 → 0.9·0.9 − 0.1·0.8 = 0.73 beats 3 → 0.45.
    assert_picks(
        mmr(IDS, REL, VECS, lam=0.9),
        [(1, 0.9), (2, 0.73), (3, 0.39), (4, 0.27)],  # 3: 0.45 − 0.1·0.6
    )


def test_unnormalised_vectors_are_normalised() -> None:
    assert_picks(mmr(IDS, REL, VECS * 7.0, mask=MASK), EXPECTED)


def test_ties_go_to_smallest_id() -> None:
    rel = {9: 0.5, 3: 0.5, 6: 0.5}
    assert [i for i, _ in mmr([9, 3, 6], rel, None)] == [3, 6, 9]


def test_no_vectors_at_all_is_relevance_order() -> None:
    got = mmr([1, 2, 3], {1: 0.2, 2: 0.9, 3: 0.5}, None, lam=0.5)
    assert got == [(2, 0.45), (3, 0.25), (1, 0.1)]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="unique"):
        mmr([1, 1], {1: 0.5}, None)
    with pytest.raises(ValueError, match="relevance"):
        mmr([1, 2], {1: 0.5}, None)
    with pytest.raises(ValueError, match="lambda"):
        mmr([1], {1: 0.5}, None, lam=1.5)
    with pytest.raises(ValueError, match="shape"):
        mmr([1, 2], {1: 0.5, 2: 0.4}, np.zeros((3, 2)))


@st.composite
def candidates(draw: st.DrawFn) -> tuple[list[int], dict[int, float], np.ndarray]:
    n = draw(st.integers(min_value=1, max_value=25))
    ids = draw(st.lists(st.integers(0, 10_000), min_size=n, max_size=n, unique=True))
    rel = {i: draw(st.floats(0.0, 1.0)) for i in ids}
    d = draw(st.integers(1, 6))
    flat = draw(st.lists(st.floats(-1, 1), min_size=n * d, max_size=n * d))
    return ids, rel, np.array(flat).reshape(n, d)


@given(candidates(), st.integers(1, 30))
def test_lambda_one_keeps_relevance_order(
    data: tuple[list[int], dict[int, float], np.ndarray], k: int
) -> None:
    ids, rel, vecs = data
    got = mmr(ids, rel, vecs, k=k, lam=1.0)
    expected = sorted(ids, key=lambda i: (-rel[i], i))[:k]
    assert [i for i, _ in got] == expected
    assert [s for _, s in got] == [rel[i] for i in expected]


@given(candidates(), st.floats(0.0, 1.0))
def test_selection_is_unique_and_bounded(
    data: tuple[list[int], dict[int, float], np.ndarray], lam: float
) -> None:
    ids, rel, vecs = data
    got = mmr(ids, rel, vecs, k=10, lam=lam)
    picked = [i for i, _ in got]
    assert len(picked) == len(set(picked)) == min(10, len(ids))
    assert picked[0] == min(ids, key=lambda i: (-rel[i], i))
    assert all(math.isfinite(s) and -1.0 - 1e-9 <= s <= 1.0 + 1e-9 for _, s in got)


def test_denormal_vector_counts_as_no_vector() -> None:
    """Found by hypothesis in CI: a 2e-159 row normalised to a cosine above 1."""
    ids = list(range(19))
    rel = {i: 0.0 for i in ids} | {18: 1.0}
    vecs = np.zeros((19, 1))
    vecs[17, 0], vecs[18, 0] = 2.27513051e-159, -1.0
    got = mmr(ids, rel, vecs, k=10, lam=0.0)
    assert all(math.isfinite(s) and -1.0 - 1e-9 <= s <= 1.0 + 1e-9 for _, s in got)
