"""Run one call in a daemon thread and collect its value, or its exception, later.

For work that leaves the GIL (SQLite, onnxruntime, sockets): the BM25 retriever beside
the vector scan (on a second connection, `beside`), a rerank request under a deadline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from hippo.store import Store

T = TypeVar("T")


class Pending(Generic[T]):
    """`fn()` running in its own daemon thread, started on construction."""

    def __init__(self, fn: Callable[[], T], name: str) -> None:
        self._box: dict[str, Any] = {}

        def run() -> None:
            try:
                self._box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                self._box["error"] = exc

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    def result(self, timeout: float | None = None) -> T:
        """`fn`'s value, or its exception raised here; TimeoutError after `timeout` seconds."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"no answer within {round((timeout or 0) * 1000)} ms")
        if "error" in self._box:
            raise self._box["error"]
        value: T = self._box["value"]
        return value


def beside(db: Store, fn: Callable[[Store], T], name: str) -> Callable[[], T]:
    """Start `fn` on `db.reader()` in a thread; calling the result collects it.

    Without a second connection (in-memory database, open transaction) `fn(db)` runs
    when collected instead. The reader may see a newer snapshot than `db`: callers must
    tolerate ids that are gone by the time they read them.
    """
    reader = db.reader()
    if reader is None:
        return lambda: fn(db)
    return Pending(lambda: fn(reader), name).result
