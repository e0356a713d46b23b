"""Many hippo processes on one database at once: nothing lost, no "database is locked"
reaching the user; a process that cannot get the lock in time exits 75 with one line."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.load import load_run

SECONDS = 7  # of load; seeding and the final checks add a few more


def _assert_sound(rep) -> None:  # type: ignore[no-untyped-def]
    assert rep.failures == [], rep.failures[:5]
    assert rep.adds_missing == [], rep.adds_missing
    assert rep.lines_missing == [], rep.lines_missing[:5]
    assert rep.doctor_ok
    assert rep.adds_reported > 0 and rep.lines_written > 0


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    """4 searchers, ingest+extract, consolidate and add: real cold processes, 5 s busy
    timeout. Every kind completes work; search latency under write load is measured."""
    rep = load_run(tmp_path, seconds=SECONDS, mode="cold")
    figures = rep.figures()
    print(figures)  # shown with -s; bench/reliability.py records the longer run
    _assert_sound(rep)
    for kind in ("search", "ingest", "extract", "consolidate", "add"):
        assert rep.ops[kind]["ok"] >= 1, (kind, figures["ops"])
    assert figures["search_p95_ms"] is not None


def test_busy_past_the_timeout_is_exit_75_with_one_line(tmp_path: Path) -> None:
    """Warm workers with a 1 ms busy timeout: collisions are certain, and each one must be
    a clean exit 75 (a one-line message), never a failure, never a lost write."""
    rep = load_run(tmp_path, seconds=4, mode="warm", busy_timeout_ms=1)
    print(rep.figures())
    _assert_sound(rep)
    assert sum(c["busy"] for c in rep.ops.values()) > 0  # the lock paths really ran
    for message in rep.busy_messages:
        assert "is busy (another hippo is writing); try again" in message \
            or "is already running" in message, message
