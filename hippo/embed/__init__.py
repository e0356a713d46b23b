"""Embedding providers: one abstract batch method, by name: the built-ins, then plugins.

`local` (default, offline MiniLM int8 ONNX), `openai` (any OpenAI-compatible server) and
`hash` (deterministic feature hashing, for tests and air-gapped smoke checks); another
installed package adds one through the `hippo.embedders` entry points (docs/plugins.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hippo.embed.base import Embedder
from hippo.errors import ConfigError
from hippo.plugins import Registry

if TYPE_CHECKING:
    from hippo.config import Settings


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


_REGISTRY: Registry[Factory] = Registry("embedder", _builtins, "hippo.embedders")
register = _REGISTRY.register
names = _REGISTRY.names
builtin_names = _REGISTRY.builtin_names


def get(name: str, settings: Settings | None = None) -> Embedder:
    """Build the provider called `name`; an unknown name lists the known ones."""
    emb = _REGISTRY.get(name)(settings)
    if emb.name != name:  # a store records the name to find its embedder again
        raise ConfigError(f"embedder {name!r} built one named {emb.name!r}: an embedder's "
                          "`name` is the name it is registered under (docs/plugins.md)")
    return emb


def describe(embedder: Embedder) -> dict[str, Any]:
    return {"name": embedder.name, "model": embedder.model_id, "dimensions": embedder.dimensions}


__all__ = ["Embedder", "builtin_names", "describe", "get", "names", "register"]
