"""Locks and runs of the maintenance jobs (tables `locks` and `runs`).

Here a job's lock is its `locks` row (`hippo.ops.jobs` asks whether its holder's process still
lives); PostgreSQL holds an advisory lock besides (`hippo.store.postgres.jobs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.store.sql import Repository

if TYPE_CHECKING:
    from hippo.store.base import Row

LOCK_HOLDER = "SELECT owner, pid, acquired_at FROM locks WHERE name = ?"
TAKE_LOCK = "INSERT OR REPLACE INTO locks(name, owner, pid, acquired_at) VALUES (?, ?, ?, ?)"
RELEASE_LOCK = "DELETE FROM locks WHERE name = ? AND owner = ?"
MARK_KILLED = "UPDATE runs SET outcome = 'killed' WHERE job = ? AND outcome = 'running'"
START_RUN = "INSERT INTO runs(id, job, started_at, outcome) VALUES (?, ?, ?, 'running')"
FINISH_RUN = "UPDATE runs SET finished_at = ?, outcome = ?, summary = ? WHERE id = ?"
GET_RUN = "SELECT id, job, outcome FROM runs WHERE id = ?"
# The undo runs that undid a run, newest first (text in byte order on both backends).
UNDOES_OF = ("SELECT id FROM runs WHERE job = 'undo' AND outcome = 'ok' AND "
             "summary{as_json} ->> 'undid' = ? "
             "ORDER BY started_at{collate} DESC, id{collate} DESC")


class Jobs(Repository):
    """Locks and runs of the maintenance jobs."""

    def lock_holder(self, name: str) -> Row | None:
        """Who holds the named lock (owner, pid, acquired_at), or None."""
        return self.db.row(LOCK_HOLDER, (name,))

    def take_lock(self, name: str, owner: str, pid: int, at: str) -> None:
        """Record `owner` (process `pid`) as the holder of the named lock since `at`."""
        self.db.execute(TAKE_LOCK, (name, owner, pid, at))

    def release_lock(self, name: str, owner: str) -> None:
        """Drop the named lock if `owner` holds it."""
        self.db.execute(RELEASE_LOCK, (name, owner))

    def mark_killed(self, job: str) -> None:
        """Mark every run of `job` still recorded as running as killed."""
        self.db.execute(MARK_KILLED, (job,))

    def start_run(self, run_id: str, job: str, at: str) -> None:
        """Record a new run of `job`, running since `at`."""
        self.db.execute(START_RUN, (run_id, job, at))

    def finish_run(self, run_id: str, at: str, outcome: str, summary: str) -> None:
        """Record a run's end: when, its outcome and its summary (JSON)."""
        self.db.execute(FINISH_RUN, (at, outcome, summary, run_id))

    def get_run(self, run_id: str) -> Row | None:
        """A run's id, job and outcome, or None."""
        return self.db.row(GET_RUN, (run_id,))

    def undoes_of(self, run_id: str) -> list[str]:
        """The successful undo runs that undid `run_id`, newest first."""
        return [str(r["id"]) for r in self.db.rows(self._sql(UNDOES_OF), (run_id,))]
