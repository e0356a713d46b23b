"""Vectors already computed, by model and content hash."""

from __future__ import annotations

from typing import Protocol


class EmbedCache(Protocol):
    """Vectors already computed, by model and content hash."""
