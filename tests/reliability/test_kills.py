"""SIGKILL at random moments (seeded) of ingest, extract, consolidate and add: after every
kill `hippo doctor` passes, and a final run converges to an unkilled run's contents."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BACKEND
from tests.reliability.kills import COMMANDS, kill_test

KILLS = 3  # per command here; bench/reliability.py --kills N runs more


@pytest.mark.parametrize("command", COMMANDS)
def test_kills_leave_a_consistent_file_that_converges(tmp_path: Path, command: str,
                                                      db_path: object) -> None:
    # db_path: the postgres run keeps the tests of the backend's store; the kills make
    # their own stores (schemas there), several per test.
    rep = kill_test(tmp_path, command, kills=KILLS, seed=8, size=16, backend=BACKEND)
    print(rep.figures(), rep.progress)
    assert rep.kills == KILLS
    assert rep.doctor_failures == []
    assert rep.partial_writes == []
    assert rep.converged, rep.difference
