"""What the context layers read: the floor's rules and guidance, recall, sizes."""

from __future__ import annotations

from typing import Protocol


class ContextRows(Protocol):
    """What the context layers read: the floor's rules and guidance, recall, sizes."""
