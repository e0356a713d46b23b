"""Echo: transcript sessions and their chunks, verbatim."""

from __future__ import annotations

from typing import Protocol


class Chunks(Protocol):
    """Echo: transcript sessions and their chunks, verbatim."""
