"""A registry of named factories (embedders, extractors): the built-ins, then plugins.

The built-ins are hippo's own table (loaded on first use, in code, as llm registers its
default plugins); other installed packages add names through an entry-point group
(`hippo.embedders`, `hippo.extractors`, docs/plugins.md). Entry points are read only
for a name that is not a built-in, or to list every name: a call with a built-in never
imports `importlib.metadata` (23-36 ms in a hippo process, then 6-8 ms to scan every
installed distribution). A built-in's name always means the built-in: a plugin of the
same name is never loaded. `register()` is the in-process way in (tests, a program embedding hippo).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from hippo.errors import ConfigError, HippoError, UsageError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

F = TypeVar("F")


class Registry(Generic[F]):
    """Factories by name; `kind` words the errors, `group` is the entry-point group."""

    def __init__(self, kind: str, builtins: Callable[[], Iterable[tuple[str, F]]],
                 group: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self._builtins: Callable[[], Iterable[tuple[str, F]]] | None = builtins
        self._builtin_names: list[str] = []
        self._factories: dict[str, F] = {}

    def register(self, name: str, factory: F) -> None:
        """Register `factory` under `name` (replacing a factory of that name)."""
        self._factories[name] = factory

    def _load(self) -> None:
        if self._builtins is not None:
            builtins, self._builtins = self._builtins, None
            for name, factory in builtins():
                self._builtin_names.append(name)
                self._factories.setdefault(name, factory)  # one registered first wins

    def builtin_names(self) -> list[str]:
        """The built-ins' names, sorted: what a fresh install knows (the generated docs)."""
        self._load()
        return sorted(self._builtin_names)

    def names(self) -> list[str]:
        """Every name: the built-ins, the registered and the installed plugins', sorted."""
        self._load()
        return sorted({*self._factories, *(ep.name for ep in self._entry_points())})

    def get(self, name: str) -> F:
        """The factory called `name`: a built-in or registered one, else an installed
        plugin's (ConfigError when it does not load); an unknown name is a UsageError
        listing the known."""
        self._load()
        if name not in self._factories:
            found = self._entry_points(name)
            if not found:
                raise UsageError(f"unknown {self.kind} {name!r}; known: "
                                 f"{', '.join(self.names())}")
            if len(found) > 1:
                raise ConfigError(f"{len(found)} installed packages declare the {self.kind} "
                                  f"{name!r} ({', '.join(origin(ep) for ep in found)}): "
                                  "uninstall all but one")
            self._factories[name] = self._plugin(found[0])
        return self._factories[name]

    def _entry_points(self, name: str | None = None) -> list[EntryPoint]:
        if self.group is None:
            return []
        from importlib.metadata import entry_points

        found = entry_points(group=self.group)
        return list(found if name is None else found.select(name=name))

    def _plugin(self, ep: EntryPoint) -> F:
        """The factory `ep` names, its failures worded as the plugin's (exit 78)."""
        what = f"{self.kind} plugin {ep.name!r} ({ep.value}, from {origin(ep)})"
        try:
            factory = ep.load()
        except Exception as exc:  # the plugin's code: any error is its own
            raise ConfigError(f"{what} does not load: {one_line(exc)}") from exc
        if not callable(factory):
            raise ConfigError(f"{what} is not callable: a factory is a function or class "
                              "(docs/plugins.md)")

        def build(*args: Any) -> Any:
            try:
                return factory(*args)
            except HippoError:
                raise
            except Exception as exc:
                raise ConfigError(f"{what} failed: {one_line(exc)}") from exc

        return cast(F, build)


def origin(ep: EntryPoint) -> str:
    """The distribution that declares `ep`, as `name version`."""
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"


def one_line(exc: BaseException) -> str:
    """`Type: message` on one line (the first of the message's lines)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
