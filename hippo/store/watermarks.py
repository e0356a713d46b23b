"""How far each transcript file has been read: the protocol and its record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(slots=True)
class Watermark:
    """Where reading a file stopped, and what it looked like then."""

    path: str
    offset: int
    line: int
    head_hash: str | None
    size: int | None
    mtime: float | None
    format: str | None
    session_id: int | None
    complete: bool


class Watermarks(Protocol):
    """How far each transcript file has been read."""

    def all(self) -> dict[str, Watermark]:
        """Every file's watermark, by path."""
        ...

    def save(self, mark: Watermark) -> None:
        """Record (or replace) a file's watermark, stamped now."""
        ...

    def offsets(self) -> list[tuple[str, int]]:
        """Each file's path and the byte offset read up to."""
        ...

    def delete(self, path: str) -> None:
        """Forget a file's watermark (the next ingest reads it from the start)."""
        ...
