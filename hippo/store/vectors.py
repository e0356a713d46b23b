"""Embedding vectors of memories and chunks, and nearest-neighbour search over them."""

from __future__ import annotations

from typing import Protocol


class Vectors(Protocol):
    """Embedding vectors of memories and chunks, and nearest-neighbour search over them."""
