"""The counts `hippo stats` shows."""

from __future__ import annotations

from typing import Protocol


class Stats(Protocol):
    """The counts `hippo stats` shows."""
