"""Embedding providers: one abstract batch method, registered by name like a plugin.

`local` (default, offline MiniLM int8 ONNX), `openai` (any OpenAI-compatible server) and
`hash` (deterministic feature hashing, for tests and air-gapped smoke checks).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hippo.registry import Registry

if TYPE_CHECKING:
    import numpy as np

    from hippo.config import Settings


class Embedder(ABC):
    """A text-embedding model. Subclasses set `model_id` and `dimensions`."""

    name: str = ""
    model_id: str = ""
    dimensions: int = 0
    #: Whether a call costs money or leaves the machine (spend guard applies).
    remote: bool = False

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dimensions) float32 array of L2-normalised vectors."""


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


_REGISTRY: Registry[Factory] = Registry("embedder", _builtins)
register = _REGISTRY.register
names = _REGISTRY.names


def get(name: str, settings: Settings | None = None) -> Embedder:
    """Build the provider called `name`; an unknown name lists the known ones."""
    return _REGISTRY.get(name)(settings)


def describe(embedder: Embedder) -> dict[str, Any]:
    return {"name": embedder.name, "model": embedder.model_id, "dimensions": embedder.dimensions}
