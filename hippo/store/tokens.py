"""Per-token matrices for late interaction (MaxSim), of stored texts and queries."""

from __future__ import annotations

from typing import Protocol


class TokenMatrices(Protocol):
    """Per-token matrices for late interaction (MaxSim), of stored texts and queries."""
