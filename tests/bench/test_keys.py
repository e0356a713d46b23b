"""bench/keys.py: the answer-key scoring the recall benches share (one, union, none, stale)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from keys import covered, hit, holds, stale_top

SWR = [["dedupinginterval", "deduping interval"], ["30000", "30 second"]]


def test_holds_needs_one_alternative_of_every_group() -> None:
    assert holds("SWR with dedupingInterval: 30000", SWR)
    assert holds("a 30 second deduping interval", SWR)
    assert not holds("dedupingInterval is set", SWR)
    assert not holds("", SWR)


def test_holds_is_case_insensitive_both_ways() -> None:
    assert holds("Uses DEDUPINGINTERVAL = 30000", SWR)
    assert holds("uses dedupinginterval = 30000", [["DedupingInterval"], ["30000"]])


def test_holds_never_for_no_groups() -> None:
    assert not holds("anything at all", [])


def test_one_needs_a_single_result_with_every_group() -> None:
    spread = ["dedupingInterval keeps requests apart", "the window is 30000 ms"]
    assert not hit(spread, SWR, "one")
    assert hit([*spread, "dedupingInterval: 30000"], SWR, "one")


def test_union_takes_groups_from_different_results() -> None:
    spread = ["dedupingInterval keeps requests apart", "unrelated", "the window is 30000 ms"]
    assert hit(spread, SWR, "union")
    assert hit(["dedupingInterval: 30000"], SWR, "union")


def test_union_misses_when_one_group_is_nowhere() -> None:
    keys = [["nextauth"], ["admin views"], ["load test", "load testing"]]
    texts = ["NextAuth.js is pending", "Admin Views come next", "deploy with docker"]
    assert covered(texts, keys) == [True, True, False]
    assert not hit(texts, keys, "union")
    assert hit([*texts, "then LOAD TESTING"], keys, "union")


def test_union_is_case_insensitive() -> None:
    assert hit(["RECHARTS for charts", "swr for Fetching"], [["recharts"], ["SWR"]], "union")


def test_union_does_not_join_an_alternative_across_results() -> None:
    # "admin" ending one result and "views" starting the next is not "admin views".
    assert not hit(["we still need admin", "views later"], [["admin views"]], "union")


def test_union_and_one_need_results() -> None:
    assert not hit([], SWR, "union")
    assert not hit([], SWR, "one")


def test_none_is_a_hit_only_when_nothing_was_retrieved() -> None:
    assert hit([], [], "none")
    assert hit(["", "  \n"], [], "none")
    assert not hit(["## Relevant memories\n- something"], [], "none")


def test_keys_are_required_outside_none() -> None:
    with pytest.raises(ValueError, match="needs keys"):
        hit(["text"], [], "one")
    with pytest.raises(ValueError, match="needs keys"):
        hit(["text"], [], "union")
    with pytest.raises(ValueError, match="unknown scope"):
        hit(["text"], SWR, "some")


def test_stale_top_is_the_stale_claim_without_the_current_keys() -> None:
    keys = [["gqc.6"], ["05fd186", "closed spotter-gqc.6"]]
    stale = [["in_progress", "in progress"]]
    assert stale_top(["gqc.6 (IN PROGRESS): needs tests", "05fd186 gqc.6"], keys, stale)
    # The top result states the new truth as well: not stale.
    assert not stale_top(["gqc.6 was in progress, then 05fd186"], keys, stale)
    # Only the top result counts.
    assert not stale_top(["unrelated", "gqc.6 in progress"], keys, stale)


def test_stale_top_needs_every_stale_group_and_some_stale_groups() -> None:
    stale = [["fum.4"], ["open", "blocked"]]
    assert stale_top(["fum.4 is BLOCKED by fum.3"], [["fum.4 done"]], stale)
    assert not stale_top(["fum.4 needs review"], [["fum.4 done"]], stale)
    assert not stale_top(["fum.4 is open"], [["fum.4 done"]], [])
    assert not stale_top([], [["fum.4 done"]], stale)
