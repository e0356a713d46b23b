"""What every maintenance job shares: the event type, the FTS backstop, batches, a failpoint."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from hippo.store import Store

Event = dict[str, Any]
OnEvent = Callable[[Event], object]
T = TypeVar("T")


def fts_backstop(db: Store, *, repair: bool = True) -> str:
    """The Brain full-text index's own check; rebuild it when the check fails."""
    if db.health.check_fulltext("memories_fts").error is None:
        return "ok"
    if not repair:
        return "corrupt"
    with db.transaction():
        db.health.rebuild_fulltext("memories_fts")
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
