"""bench/supersede_pairs.py: how a labelled pair is scored, and that every label is readable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from supersede_pairs import PAIRS, find, judge

OLD = {"id": 1, "text": "Spotter-x.4 (OPEN)", "status": "active", "superseded_by": None,
       "source": {"session": "aaaaaaaa-1"}}
NEW = {"id": 2, "text": "Closed spotter-x.4: done", "status": "active", "superseded_by": None,
       "source": {"session": "aaaaaaaa-1"}}


def test_a_changed_pair_is_found_when_the_old_memory_is_no_longer_current() -> None:
    changed = {"changed": True}
    assert judge(changed, OLD, NEW) == "fn"
    assert judge(changed, {**OLD, "status": "done", "superseded_by": 2}, NEW) == "tp"
    assert judge(changed, {**OLD, "superseded_by": 7}, NEW) == "tp"  # retired by another


def test_an_unchanged_pair_is_wrong_only_when_the_new_one_supersedes_the_old() -> None:
    apart = {"changed": False}
    assert judge(apart, OLD, NEW) == "tn"
    assert judge(apart, {**OLD, "superseded_by": 2}, NEW) == "fp"
    assert judge(apart, {**OLD, "superseded_by": 7}, NEW) == "tn"


def test_memories_are_found_by_session_and_text_prefix() -> None:
    assert find([OLD, NEW], "aaaaaaaa", "Closed spotter-x.4") is NEW
    assert find([OLD, NEW], "bbbbbbbb", "Closed spotter-x.4") is None


def test_the_labelled_pairs_are_twenty_per_session_both_ways() -> None:
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))["pairs"]
    sessions = {p["session"] for p in pairs}
    assert len(sessions) == 3 and len(pairs) == 60
    for s in sessions:
        mine = [p for p in pairs if p["session"] == s]
        assert len(mine) == 20 and {p["changed"] for p in mine} == {True, False}
        assert all(p["old"] and p["new"] and p["why"] for p in mine)
