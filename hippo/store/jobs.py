"""Locks and runs of the maintenance jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hippo.store.base import Row


class Jobs(Protocol):
    """Locks and runs of the maintenance jobs."""

    def lock_holder(self, name: str) -> Row | None:
        """Who holds the named lock (owner, pid, acquired_at), or None."""
        ...

    def take_lock(self, name: str, owner: str, pid: int, at: str) -> None:
        """Record `owner` (process `pid`) as the holder of the named lock since `at`."""
        ...

    def release_lock(self, name: str, owner: str) -> None:
        """Drop the named lock if `owner` holds it."""
        ...

    def mark_killed(self, job: str) -> None:
        """Mark every run of `job` still recorded as running as killed."""
        ...

    def start_run(self, run_id: str, job: str, at: str) -> None:
        """Record a new run of `job`, running since `at`."""
        ...

    def finish_run(self, run_id: str, at: str, outcome: str, summary: str) -> None:
        """Record a run's end: when, its outcome and its summary (JSON)."""
        ...

    def get_run(self, run_id: str) -> Row | None:
        """A run's id, job and outcome, or None."""
        ...

    def undoes_of(self, run_id: str) -> list[str]:
        """The successful undo runs that undid `run_id`, newest first."""
        ...
