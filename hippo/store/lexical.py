"""Full-text search over memories and chunks."""

from __future__ import annotations

from typing import Protocol


class Lexical(Protocol):
    """Full-text search over memories and chunks."""
