"""Small named values: job watermarks, each store's embedding model, flags."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol


class Meta(Protocol):
    """Small named values: job watermarks, each store's embedding model, flags."""

    def get(self, key: str) -> str | None:
        """The value stored under `key`, or None."""
        ...

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        """The values of those of `keys` that are stored."""
        ...

    def set(self, key: str, value: str | None) -> None:
        """Store `value` under `key` (None removes it)."""
        ...

    def set_many(self, values: Mapping[str, str]) -> None: ...

    def set_default(self, key: str, value: str) -> None:
        """Store `value` unless `key` already has one."""
        ...
