"""A registry of named factories (embedders, extractors): built-ins register like plugins.

The built-ins load on first use; a name registered before that (a plugin) keeps its
factory, and registering never drops the other built-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from hippo.errors import UsageError

F = TypeVar("F")


class Registry(Generic[F]):
    """Factories by name; `kind` words the error for an unknown name."""

    def __init__(self, kind: str, builtins: Callable[[], Iterable[tuple[str, F]]]) -> None:
        self.kind = kind
        self._builtins: Callable[[], Iterable[tuple[str, F]]] | None = builtins
        self._factories: dict[str, F] = {}

    def register(self, name: str, factory: F) -> None:
        """Register `factory` under `name` (replacing a factory of that name)."""
        self._factories[name] = factory

    def _load(self) -> None:
        if self._builtins is not None:
            builtins, self._builtins = self._builtins, None
            for name, factory in builtins():
                self._factories.setdefault(name, factory)  # a plugin registered first wins

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._load()
        return sorted(self._factories)

    def get(self, name: str) -> F:
        """The factory called `name`; an unknown name is a UsageError listing the known."""
        self._load()
        try:
            return self._factories[name]
        except KeyError:
            raise UsageError(f"unknown {self.kind} {name!r}; known: "
                             f"{', '.join(self.names())}") from None
