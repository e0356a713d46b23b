"""Embedding providers: one abstract batch method, by name: the built-ins, then plugins.

`local` (default, offline MiniLM int8 ONNX), `openai` (any OpenAI-compatible server) and
`hash` (deterministic feature hashing, for tests and air-gapped smoke checks); another
installed package adds one through the `hippo.embedders` entry points (docs/plugins.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable

    from hippo.config import Settings
    from hippo.embed.base import Embedder
    from hippo.plugins import Registry

    Factory = Callable[["Settings | None"], Embedder]


def _builtins() -> tuple[tuple[str, Factory], ...]:
    def local(settings: Settings | None) -> Embedder:
        from hippo.embed.local import LocalEmbedder

        return LocalEmbedder()

    def openai(settings: Settings | None) -> Embedder:
        from hippo.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)

    def hashed(settings: Settings | None) -> Embedder:
        from hippo.embed.hashed import HashEmbedder

        return HashEmbedder()

    return ("local", local), ("openai", openai), ("hash", hashed)


# Built on first use: `hippo.embed.cache` (every search) is below this package, and pays
# for no registry until an embedder is asked for by name.
_REGISTRY: list[Registry[Factory]] = []


def _registry() -> Registry[Factory]:
    if not _REGISTRY:
        from hippo.plugins import Registry

        _REGISTRY.append(Registry("embedder", _builtins, "hippo.embedders"))
    return _REGISTRY[0]


def register(name: str, factory: Factory) -> None:
    """Register `factory` under `name` (a plugin registered before first use keeps it)."""
    _registry().register(name, factory)


def names() -> list[str]:
    """Every embedder's name: the built-ins and the installed plugins'."""
    return _registry().names()


def builtin_names() -> list[str]:
    """The built-in embedders' names (what the generated docs list)."""
    return _registry().builtin_names()


def get(name: str, settings: Settings | None = None) -> Embedder:
    """Build the provider called `name`; an unknown name lists the known ones."""
    emb = _registry().get(name)(settings)
    if emb.name != name:  # a store records the name to find its embedder again
        raise ConfigError(f"embedder {name!r} built one named {emb.name!r}: an embedder's "
                          "`name` is the name it is registered under (docs/plugins.md)")
    return emb


def describe(embedder: Embedder) -> dict[str, Any]:
    return {"name": embedder.name, "model": embedder.model_id, "dimensions": embedder.dimensions}


def __getattr__(name: str) -> Any:
    """`hippo.embed.Embedder`, the interface, imported when asked for."""
    if name == "Embedder":
        from hippo.embed.base import Embedder

        return Embedder
    raise AttributeError(f"module 'hippo.embed' has no attribute {name!r}")


__all__ = ["Embedder", "builtin_names", "describe", "get", "names", "register"]
