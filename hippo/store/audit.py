"""The append-only history of every change to a memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hippo.store.base import Row


class Audit(Protocol):
    """The append-only history of every change to a memory."""

    def log(self, memory_id: int, action: str, *, actor: str, at: str, before: str | None,
            after: str | None, run_id: str | None) -> None:
        """Append one entry (`before`/`after`: the records as JSON text, or None)."""
        ...

    def history(self, memory_id: int) -> list[Row]:
        """id, run_id, actor, action, at, before, after of the memory's entries, in order."""
        ...

    def erase_texts(self, memory_id: int) -> None:
        """Blank the records the memory's entries hold (a purge); the entries stay."""
        ...

    def once_used(self, ids: Iterable[int]) -> set[int]:
        """Of `ids`, those the history holds an entry for."""
        ...
