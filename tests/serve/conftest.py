from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve.helpers import kill_all


@pytest.fixture(autouse=True)
def no_server_left(isolated_home: Path) -> Iterator[None]:
    """Every server a test started is gone when it ends (killed here if the test left one:
    the test then fails)."""
    yield
    left = kill_all()
    assert not left, f"the test left servers running: {left}"
