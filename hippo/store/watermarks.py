"""How far each transcript file has been read."""

from __future__ import annotations

from typing import Protocol


class Watermarks(Protocol):
    """How far each transcript file has been read."""
