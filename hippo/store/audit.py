"""The append-only history of every change to a memory."""

from __future__ import annotations

from typing import Protocol


class Audit(Protocol):
    """The append-only history of every change to a memory."""
