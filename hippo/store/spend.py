"""The spend guard's state per provider: calls, tokens, the open circuit."""

from __future__ import annotations

from typing import Protocol


class Spend(Protocol):
    """The spend guard's state per provider: calls, tokens, the open circuit."""
