"""Locks and runs of the maintenance jobs."""

from __future__ import annotations

from typing import Protocol


class Jobs(Protocol):
    """Locks and runs of the maintenance jobs."""
