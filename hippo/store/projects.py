"""Directories seen and the project each belongs to (worktrees share one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hippo.store.base import Row


class ProjectDirs(Protocol):
    """Directories seen and the project each belongs to (worktrees share one)."""

    def get(self, path: str) -> Row | None:
        """project, common_dir recorded for exactly this directory."""
        ...

    def record(self, path: str, project: str, common_dir: str | None, seen_at: str) -> None:
        """Record (or refresh) a directory's project and repository."""
        ...

    def among(self, paths: Sequence[str]) -> list[Row]:
        """path, project of those of `paths` that are recorded."""
        ...
