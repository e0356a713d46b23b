"""Directories seen and the project each belongs to (worktrees share one)."""

from __future__ import annotations

from typing import Protocol


class ProjectDirs(Protocol):
    """Directories seen and the project each belongs to (worktrees share one)."""
