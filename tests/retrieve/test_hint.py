"""Query hint: whole-word, case-insensitive, only for task/todo, bounded and clamped."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hippo.retrieve.hint import apply_hint, query_has_hint, task_hint
from hippo.retrieve.params import DEFAULT_PARAMS, MAX_HINT_BOOST, SearchParams


@pytest.mark.parametrize(
    "query",
    [
        "what's next for the deploy?",
        "TODO: clean up",
        "open todos",
        "Reminder about the invoice",
        "deadline=friday",
        "is anything due",
        "my tasks",
        "(task)",
    ],
)
def test_hint_words_boost_task_and_todo(query: str) -> None:
    assert task_hint(query, "task", DEFAULT_PARAMS) == 0.05
    assert task_hint(query, "todo", DEFAULT_PARAMS) == 0.05
    assert task_hint(query, "Task", DEFAULT_PARAMS) == 0.05
    assert task_hint(query, "fact", DEFAULT_PARAMS) == 0.0
    assert task_hint(query, "decision", DEFAULT_PARAMS) == 0.0


@pytest.mark.parametrize(
    "query",
    ["nextjs config", "multitasking", "deadlines", "overdue", "", "  "],
)
def test_no_hint_without_a_whole_hint_word(query: str) -> None:
    assert task_hint(query, "task", DEFAULT_PARAMS) == 0.0


def test_hint_words_and_boost_come_from_params() -> None:
    params = SearchParams.from_mapping({"hint_words": ["ticket"], "hint_boost": 0.1})
    assert task_hint("ticket 42", "todo", params) == 0.1
    assert task_hint("next task", "todo", params) == 0.0
    assert query_has_hint("A TICKET", params.hint_words)


def test_apply_hint_clamps_to_one() -> None:
    assert apply_hint(0.5, 0.05) == 0.55
    assert apply_hint(0.98, 0.05) == 1.0
    assert apply_hint(1.0, MAX_HINT_BOOST) == 1.0
    assert apply_hint(0.3, 0.0) == 0.3


@given(st.text(max_size=200), st.sampled_from(["task", "todo", "fact", "rule"]), st.floats(0, 1))
def test_hint_is_bounded(query: str, memory_type: str, relevance: float) -> None:
    boost = task_hint(query, memory_type, DEFAULT_PARAMS)
    assert boost in (0.0, DEFAULT_PARAMS.hint_boost)
    assert 0.0 <= boost <= MAX_HINT_BOOST
    assert relevance <= apply_hint(relevance, boost) <= 1.0
