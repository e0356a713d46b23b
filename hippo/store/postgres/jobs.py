"""PostgreSQL: locks and runs of the maintenance jobs (tables `locks` and `runs`).

A job's lock is a session-level advisory lock, keyed by the schema and the lock's name,
held by this connection for the job's duration: two processes (on any hosts) never both
hold it, and the server frees it the moment its holder's connection ends, so a killed
job leaves no stale lock. The `locks` row only says who holds it (run, pid, host, user,
since); a row whose advisory lock nobody holds is a crashed holder's, and is not a holder.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from hippo.errors import BusyError

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql

# hippo's advisory lock classes: the writer lock (database.py) is 0x48697002.
JOB_CLASS = 0x4869_7003
KEY = "hashtext(current_schema() || '/' || ?)"
TRY_LOCK = f"SELECT pg_try_advisory_lock(?, {KEY})"
UNLOCK = f"SELECT pg_advisory_unlock(?, {KEY})"
# Whether any session of this database holds the lock (two-key advisory locks: objsubid 2).
HELD = ("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        f"AND objsubid = 2 AND classid = ?::int::oid AND objid = {KEY}::oid)")
LOCK_HOLDER = "SELECT owner, pid, acquired_at FROM locks WHERE name = ?"
LOCK_WHO = "SELECT owner, pid, host, by_user, acquired_at FROM locks WHERE name = ?"
TAKE_LOCK = ("INSERT INTO locks(name, owner, pid, acquired_at, host) VALUES (?, ?, ?, ?, ?) "
             "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, "
             "acquired_at = excluded.acquired_at, host = excluded.host, "
             "by_user = excluded.by_user")
RELEASE_LOCK = "DELETE FROM locks WHERE name = ? AND owner = ?"
MARK_KILLED = "UPDATE runs SET outcome = 'killed' WHERE job = ? AND outcome = 'running'"
START_RUN = "INSERT INTO runs(id, job, started_at, outcome) VALUES (?, ?, ?, 'running')"
FINISH_RUN = "UPDATE runs SET finished_at = ?, outcome = ?, summary = ? WHERE id = ?"
GET_RUN = "SELECT id, job, outcome FROM runs WHERE id = ?"
# The undo runs that undid a run, newest first (ids in byte order, as SQLite's).
UNDOES_OF = ("SELECT id FROM runs WHERE job = 'undo' AND outcome = 'ok' AND "
             "summary::jsonb ->> 'undid' = ? "
             'ORDER BY started_at COLLATE "C" DESC, id COLLATE "C" DESC')


class PgJobs:
    def __init__(self, db: PgSql) -> None:
        self.db = db
        self.held: dict[str, str] = {}  # locks this connection holds: name -> owner

    def lock_holder(self, name: str) -> Row | None:
        if name not in self.held and not self.db.scalar(HELD, (JOB_CLASS, name)):
            return None  # no session holds it: any row left is a crashed holder's
        return self.db.row(LOCK_HOLDER, (name,))

    def take_lock(self, name: str, owner: str, pid: int, at: str) -> None:
        """Take the advisory lock (BusyError when another session holds it), then say so."""
        if name not in self.held:
            if not self.db.scalar(TRY_LOCK, (JOB_CLASS, name)):
                raise BusyError(_busy(name, self.db.row(LOCK_WHO, (name,))))
            self.held[name] = owner
        try:
            self.db.execute(TAKE_LOCK, (name, owner, pid, at, socket.gethostname()))
        except BaseException:
            self._unlock(name)
            raise
        self.held[name] = owner

    def release_lock(self, name: str, owner: str) -> None:
        self.db.execute(RELEASE_LOCK, (name, owner))
        if self.held.get(name) == owner:
            self._unlock(name)

    def _unlock(self, name: str) -> None:
        self.held.pop(name, None)
        self.db.scalar(UNLOCK, (JOB_CLASS, name))

    def mark_killed(self, job: str) -> None:
        self.db.execute(MARK_KILLED, (job,))

    def start_run(self, run_id: str, job: str, at: str) -> None:
        self.db.execute(START_RUN, (run_id, job, at))

    def finish_run(self, run_id: str, at: str, outcome: str, summary: str) -> None:
        self.db.execute(FINISH_RUN, (at, outcome, summary, run_id))

    def get_run(self, run_id: str) -> Row | None:
        return self.db.row(GET_RUN, (run_id,))

    def undoes_of(self, run_id: str) -> list[str]:
        return [str(r["id"]) for r in self.db.rows(UNDOES_OF, (run_id,))]


def _busy(name: str, who: Row | None) -> str:
    if who is None:  # its holder has not committed its row yet
        return f"{name} is already running; try again later"
    return (f"{name} is already running (run {who['owner']}, pid {who['pid']} on "
            f"{who['host'] or 'an unknown host'}, user {who['by_user']}, since "
            f"{who['acquired_at']}); try again later")
