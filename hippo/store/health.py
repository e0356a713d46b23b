"""The checks `hippo doctor` runs on the store, and their repairs."""

from __future__ import annotations

from typing import Protocol


class Health(Protocol):
    """The checks `hippo doctor` runs on the store, and their repairs."""
