"""The literal guard: numbers, identifiers and negation that embeddings blur."""

from __future__ import annotations

import pytest

from hippo.maintain.literals import conflict, literals, negated


@pytest.mark.parametrize(("a", "b", "why"), [
    ("use port 5432", "use port 5433", "literals differ: 5432 / 5433"),
    ("Use Python 3.11", "Use Python 3.12.", "literals differ: 3.11 / 3.12"),
    ("Logs go to /var/log/app.log", "Logs go to /var/log/app/app.log",
     "literals differ: /var/log/app.log / /var/log/app/app.log"),
    ("Read OPENAI_API_KEY", "Read OPENAI_KEY", "literals differ: openai_api_key / openai_key"),
    ("Rebase with --force", "Rebase with --force-with-lease",
     "literals differ: --force / --force-with-lease"),
    ("Retry three times", "Retry five times", "literals differ: three / five"),
    ("Run the linter first", "Do not run the linter first", "only one statement is negated"),
    ("Always use tabs", "Never use tabs", "only one statement is negated"),
    ("Use tabs", "Don't use tabs", "only one statement is negated"),
])
def test_conflicts(a: str, b: str, why: str) -> None:
    assert conflict(a, b) == why
    assert conflict(b, a) is not None


@pytest.mark.parametrize(("a", "b"), [
    ("Run pytest -q before pushing", "Before pushing, run pytest -q"),
    ("The staging DB is db-staging.internal", "The staging database is db-staging.internal"),
    ("Run the tests", "Run the tests with pytest -q"),  # one side more complete: allowed
    ("Never commit to main", "Do not commit to main"),
    ("Enable WAL mode", "Turn on WAL mode"),
])
def test_no_conflict(a: str, b: str) -> None:
    assert conflict(a, b) is None


def test_literals_and_negation() -> None:
    assert literals("Deploy v2 via deploy.yml (see `make ship`) at 10:30, API and useEffect.") \
        == {"v2", "deploy.yml", "10:30", "api", "useeffect"}
    assert literals("a plain sentence, with well known words.") == frozenset()
    assert negated("it isn't") and negated("we cannot") and not negated("notable nothingness")
