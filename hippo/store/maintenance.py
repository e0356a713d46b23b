"""What maintenance jobs read and write: consolidation, reindex, undo, retire, projects."""

from __future__ import annotations

from typing import Protocol


class Maintenance(Protocol):
    """What maintenance jobs read and write: consolidation, reindex, undo, retire, projects."""
