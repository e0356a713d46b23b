"""Many hippo processes on one database at once: nothing lost, no "database is locked"
reaching the user; a process that cannot get the lock in time exits 75 with one line."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import orjson

from tests.reliability.harness import OK, TEMPFAIL, one_line_error, run, transcript
from tests.reliability.load import Load, load_run

SECONDS = 7  # of load; seeding and the final checks add a few more


def _assert_sound(rep) -> None:  # type: ignore[no-untyped-def]
    assert rep.failures == [], rep.failures[:5]
    assert rep.adds_missing == [], rep.adds_missing
    assert rep.lines_missing == [], rep.lines_missing[:5]
    assert rep.doctor_ok
    assert rep.adds_reported > 0 and rep.lines_written > 0


def test_concurrent_processes_lose_nothing(tmp_path: Path, db_path: Path | str) -> None:
    """4 searchers, ingest+extract, consolidate and add: real cold processes, 5 s busy
    timeout. Every kind completes work; search latency under write load is measured."""
    rep = load_run(tmp_path, seconds=SECONDS, mode="cold", db=db_path)
    figures = rep.figures()
    print(figures)  # shown with -s; bench/reliability.py records the longer run
    _assert_sound(rep)
    for kind in ("search", "ingest", "extract", "consolidate", "add"):
        assert rep.ops[kind]["ok"] >= 1, (kind, figures["ops"])
    assert figures["search_p95_ms"] is not None


BUSY = "is busy (another hippo is writing); try again"


def test_busy_past_the_timeout_is_exit_75_with_one_line(tmp_path: Path,
                                                         db_path: Path | str) -> None:
    """A writer that cannot get the lock within its busy timeout exits 75 with one line.

    Deterministic on any machine: this test itself holds the database's write lock (BEGIN
    IMMEDIATE, taken before any process starts and released after they all ended), so
    every writer started meanwhile must collide, however slow or loaded the machine; a
    reader is not blocked (WAL). Afterwards the same writes succeed and nothing is lost."""
    load = Load(tmp_path, seconds=0, busy_timeout_ms=1, db=db_path)
    load.seed(memories=8)
    transcript(load.transcripts / "held.jsonl", 99)
    rec = {"text": "written once the lock is free carries token heldlock"}
    add = ("add", "--json", "-")
    ingest = ("ingest", str(load.transcripts), "--idle-minutes", "0")
    writers = [add, ingest, ("extract",), ("consolidate",), ("retire",)]
    with _holding(load.db):  # the handshake: held before anything starts
        busy = [run(load.db, *args, env=load.env, input=orjson.dumps(rec) + b"\n")
                for args in writers]
        reader = run(load.db, "search", "--json", "--", "seed memory", env=load.env)
    for op in busy:
        assert op.rc == TEMPFAIL, (op.kind, op.rc, op.stderr)
        assert one_line_error(op), (op.kind, op.stderr)
        assert BUSY in op.stderr, (op.kind, op.stderr)
        assert op.stdout == b"", (op.kind, op.stdout)  # nothing claimed as done
    assert reader.rc == OK and reader.lines, reader.stderr
    # Free again: the same calls, with the same 1 ms timeout and nothing else running, work.
    after = run(load.db, *add, env=load.env, input=orjson.dumps(rec) + b"\n")
    assert after.rc == OK, after.stderr
    load.report.record(after)
    load._note_add(after)
    assert run(load.db, *ingest, env=load.env).rc == OK
    rep = load.check()
    _assert_sound(rep)


@contextlib.contextmanager
def _holding(db: Path | str) -> Iterator[None]:
    """The store's write lock, held: BEGIN IMMEDIATE on a file, the writer advisory lock
    (a write transaction) on a server."""
    if isinstance(db, str):
        from hippo.store import connect

        store = connect(db)
        try:
            with store.transaction():
                yield
        finally:
            store.close()
        return
    import apsw

    holder = apsw.Connection(str(db))
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_warm_collisions_are_clean_and_lose_nothing(tmp_path: Path) -> None:
    """Warm workers with a 1 ms busy timeout: whatever collides (how often depends on the
    machine, so no count is asserted) is a clean exit 75 with one line, never a failure,
    never a lost write."""
    rep = load_run(tmp_path, seconds=4, mode="warm", busy_timeout_ms=1)
    print(rep.figures())
    assert rep.failures == [], rep.failures[:5]
    assert rep.adds_missing == [], rep.adds_missing
    assert rep.lines_missing == [], rep.lines_missing[:5]
    assert rep.doctor_ok
    for message in rep.busy_messages:
        assert BUSY in message or "is already running" in message, message
