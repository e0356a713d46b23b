"""Job runs: an exclusive lock per job (exit 75 when held), a run id, and its recorded outcome."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo.errors import BusyError
from hippo.timeutil import now_iso

if TYPE_CHECKING:
    from hippo.store import Store


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def new_run_id(job: str) -> str:
    return f"{job}-{now_iso().replace(':', '').replace('-', '')[:15]}-{secrets.token_hex(3)}"


@dataclass(slots=True)
class Run:
    """A running job: its id and the summary it will record."""

    id: str
    job: str
    dry_run: bool = False
    summary: dict[str, Any] = field(default_factory=dict)
    outcome: str = "ok"


def acquire(db: Store, name: str, owner: str) -> None:
    """Take the named lock, or raise BusyError (75) when a live process holds it."""
    with db.transaction():
        row = db.jobs.lock_holder(name)
        if row and _alive(row["pid"]) and row["pid"] != os.getpid():
            raise BusyError(
                f"{name} is already running (run {row['owner']}, pid {row['pid']}, since "
                f"{row['acquired_at']}); try again later"
            )
        db.jobs.take_lock(name, owner, os.getpid(), now_iso())


def release(db: Store, name: str, owner: str) -> None:
    with db.transaction():
        db.jobs.release_lock(name, owner)


@contextlib.contextmanager
def job(db: Store, name: str, *, dry_run: bool = False, lock: bool = True) -> Iterator[Run]:
    """Run a job under its lock; record start, finish and outcome (dry runs record nothing)."""
    run = Run(new_run_id(name), name, dry_run)
    if lock and not dry_run:
        acquire(db, f"job:{name}", run.id)
    if not dry_run:
        with db.transaction():
            if lock:  # we hold the lock: an earlier run still marked running was killed
                db.jobs.mark_killed(name)
            db.jobs.start_run(run.id, name, now_iso())
    try:
        yield run
    except BaseException as exc:
        run.outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        run.summary.setdefault("error", str(exc) or type(exc).__name__)
        raise
    finally:
        if not dry_run:
            import orjson

            with contextlib.suppress(Exception), db.transaction():
                db.jobs.finish_run(run.id, now_iso(), run.outcome,
                                   orjson.dumps(run.summary, default=str).decode())
            if lock:
                with contextlib.suppress(Exception):
                    release(db, f"job:{name}", run.id)
