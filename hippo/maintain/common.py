"""What every maintenance job shares: meta keys, stale runs, the FTS backstop, a failpoint."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import apsw

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database

Event = dict[str, Any]
OnEvent = Callable[[Event], object]
T = TypeVar("T")

META_GET = "SELECT value FROM meta WHERE key = ?"
META_SET = "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)"
META_DEL = "DELETE FROM meta WHERE key = ?"
# Only the lock holder runs a job, so any other run of it still marked running is dead.
FTS_CHECK = "INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)"
FTS_REBUILD = "INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')"


def meta_get(db: Database, key: str) -> str | None:
    value = db.scalar(META_GET, (key,))
    return None if value is None else str(value)


def meta_set(db: Database, key: str, value: str | None) -> None:
    if value is None:
        db.execute(META_DEL, (key,))
    else:
        db.execute(META_SET, (key, value))


def fts_backstop(db: Database, *, repair: bool = True) -> str:
    """FTS5 integrity-check of the Brain index; rebuild it when the check fails."""
    try:
        db.conn.execute(FTS_CHECK)  # raw: a failed check is apsw.CorruptError, expected here
        return "ok"
    except apsw.CorruptError:
        if not repair:
            return "corrupt"
    except (apsw.BusyError, apsw.LockedError) as exc:  # the check takes the write lock
        from hippo.store.sqlite.database import translate

        raise translate(exc, db.path) from exc
    with db.transaction():
        db.execute(FTS_REBUILD)
    return "rebuilt"


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def failpoint(name: str) -> None:
    """Crash tests: HIPPO_FAILPOINT=name:N kills this process with SIGKILL on the Nth hit;
    name:N:INT sends SIGINT instead (a Ctrl-C at exactly that point)."""
    spec = os.environ.get("HIPPO_FAILPOINT")
    if not spec or not spec.startswith(name + ":"):
        return
    parts = spec[len(name) + 1:].split(":")
    hits = _HITS[name] = _HITS.get(name, 0) + 1
    if hits >= int(parts[0]):
        os.kill(os.getpid(), signal.SIGINT if parts[1:] == ["INT"] else signal.SIGKILL)


_HITS: dict[str, int] = {}
