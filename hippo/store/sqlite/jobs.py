"""SQLite: locks and runs of the maintenance jobs (tables `locks` and `runs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sqlite.database import Sql

LOCK_HOLDER = "SELECT owner, pid, acquired_at FROM locks WHERE name = ?"
TAKE_LOCK = "INSERT OR REPLACE INTO locks(name, owner, pid, acquired_at) VALUES (?, ?, ?, ?)"
RELEASE_LOCK = "DELETE FROM locks WHERE name = ? AND owner = ?"
MARK_KILLED = "UPDATE runs SET outcome = 'killed' WHERE job = ? AND outcome = 'running'"
START_RUN = "INSERT INTO runs(id, job, started_at, outcome) VALUES (?, ?, ?, 'running')"
FINISH_RUN = "UPDATE runs SET finished_at = ?, outcome = ?, summary = ? WHERE id = ?"
GET_RUN = "SELECT id, job, outcome FROM runs WHERE id = ?"
# The undo runs that undid a run, newest first.
UNDOES_OF = ("SELECT id FROM runs WHERE job = 'undo' AND outcome = 'ok' AND "
             "json_extract(summary, '$.undid') = ? ORDER BY started_at DESC, id DESC")


class SqliteJobs:
    def __init__(self, db: Sql) -> None:
        self.db = db

    def lock_holder(self, name: str) -> Row | None:
        return self.db.row(LOCK_HOLDER, (name,))

    def take_lock(self, name: str, owner: str, pid: int, at: str) -> None:
        self.db.execute(TAKE_LOCK, (name, owner, pid, at))

    def release_lock(self, name: str, owner: str) -> None:
        self.db.execute(RELEASE_LOCK, (name, owner))

    def mark_killed(self, job: str) -> None:
        self.db.execute(MARK_KILLED, (job,))

    def start_run(self, run_id: str, job: str, at: str) -> None:
        self.db.execute(START_RUN, (run_id, job, at))

    def finish_run(self, run_id: str, at: str, outcome: str, summary: str) -> None:
        self.db.execute(FINISH_RUN, (at, outcome, summary, run_id))

    def get_run(self, run_id: str) -> Row | None:
        return self.db.row(GET_RUN, (run_id,))

    def undoes_of(self, run_id: str) -> list[str]:
        return [str(r[0]) for r in self.db.execute(UNDOES_OF, (run_id,))]
