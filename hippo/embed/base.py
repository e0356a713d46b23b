"""The one interface of an embedding provider (`hippo.embed` registers them by name)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


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
