"""Echo tests' fixtures: a second store beside the test's own, on the same backend."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import BACKEND


@pytest.fixture
def other_db(db_path: Path | str, tmp_path: Path) -> Iterator[Callable[[str], Path | str]]:
    """`other_db(name)`: a fresh store apart from `db_path` (a file, or a new schema)."""
    with contextlib.ExitStack() as stack:
        def make(name: str) -> Path | str:
            if BACKEND == "postgres":
                from tests.pgtest import store_url

                return stack.enter_context(store_url(name))
            return tmp_path / f"{name}.db"

        yield make
