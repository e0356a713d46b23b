"""Brain memories: insert, read, update, status, provenance links."""

from __future__ import annotations

from typing import Protocol


class Memories(Protocol):
    """Brain memories: insert, read, update, status, provenance links."""
