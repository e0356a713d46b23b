"""Clusters, survivors and merged statements: deterministic, whatever the input order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.maintain.merge import group, merged, statement_of, survivor_of


def rec(i: int, text: str = "x", **kw) -> dict:
    base = {"id": i, "text": text, "importance": 0.5, "confidence": 0.5, "tags": [],
            "source": None, "created_at": f"2026-01-{i:02d}T00:00:00.000Z",
            "confirmed_at": None}
    return {**base, **kw}


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(st.integers(1, 12), st.integers(1, 12)).filter(
    lambda p: p[0] < p[1]), st.floats(0.93, 1.0), max_size=30), st.randoms())
def test_clusters_do_not_depend_on_order(pairs, rnd) -> None:
    items = list(pairs.items())
    rnd.shuffle(items)
    assert group(dict(items), None) == group(pairs, None)
    clusters, _ = group(pairs, None)
    members = [m for c in clusters for m in c]
    assert len(members) == len(set(members))  # every memory in at most one cluster


def test_chain_merges_unless_a_cross_pair_conflicts() -> None:
    pairs = {(1, 2): 0.96, (2, 3): 0.95}
    assert group(pairs, None)[0] == [[1, 2, 3]]
    clusters, vetoes = group(pairs, lambda a, b: "no" if {a, b} == {1, 3} else None)
    assert clusters == [[1, 2]] and [(v.a, v.b, v.reason) for v in vetoes] == [(2, 3, "no")]


def test_survivor_and_statement_rules() -> None:
    a = rec(1, "short one", importance=0.4)
    b = rec(2, "a longer and more complete statement", importance=0.8)
    c = rec(3, "short two", importance=0.8, confidence=0.9)
    assert survivor_of([a, b, c])["id"] == 3  # importance, then confidence
    assert survivor_of([rec(4), rec(2)])["id"] == 2  # then the older id
    assert statement_of([a, b, c])["id"] == 2  # most distinct words
    assert statement_of([rec(1, "same words"), rec(5, "words same")])["id"] == 5  # newer


def test_merged_fields() -> None:
    a = rec(1, "run make test before you push", importance=0.9, tags=["ci"],
            source={"session": "s1", "lines": [1, 2]})
    b = rec(2, "before you push always run make test", tags=["make"], confidence=0.7,
            source={"session": "s2", "lines": [2, 3]}, confirmed_at="2026-03-01T00:00:00.000Z")
    c = merged([a, b], [(1, 2, 0.95)], gains_confidence=True)
    assert c.survivor == 1 and c.absorbed == [2]
    assert c.updates == {
        "text": "before you push always run make test",
        "confidence": 0.76,  # max(0.5, 0.7) + 0.3 * 0.2
        "tags": ["ci", "make"],
        "source": {"session": ["s1", "s2"], "lines": [1, 2, 3]},
        "confirmed_at": "2026-03-01T00:00:00.000Z",
    }
    plain = merged([a, b], [(1, 2, 0.95)], gains_confidence=False)
    assert plain.updates["confidence"] == 0.7
