"""PostgreSQL: a job's lock is a session-level advisory lock besides its `locks` row.

The advisory lock, keyed by the schema and the lock's name, is held by this connection for
the job's duration: two processes (on any hosts) never both hold it, and the server frees it
the moment its holder's connection ends, so a killed job leaves no stale lock. The `locks`
row only says who holds it (run, pid, host, user, since); a row whose advisory lock nobody
holds is a crashed holder's, and is not a holder. Runs are `hippo.store.jobs.Jobs`'.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from hippo.errors import BusyError
from hippo.store.jobs import Jobs

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sql import Sql

# hippo's advisory lock classes: the writer lock (database.py) is 0x48697002.
JOB_CLASS = 0x4869_7003
KEY = "hashtext(current_schema() || '/' || ?)"
TRY_LOCK = f"SELECT pg_try_advisory_lock(?, {KEY})"
UNLOCK = f"SELECT pg_advisory_unlock(?, {KEY})"
# Whether any session of this database holds the lock (two-key advisory locks: objsubid 2).
HELD = ("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        f"AND objsubid = 2 AND classid = ?::int::oid AND objid = {KEY}::oid)")
LOCK_WHO = "SELECT owner, pid, host, by_user, acquired_at FROM locks WHERE name = ?"
TAKE_LOCK = ("INSERT INTO locks(name, owner, pid, acquired_at, host) VALUES (?, ?, ?, ?, ?) "
             "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, "
             "acquired_at = excluded.acquired_at, host = excluded.host, "
             "by_user = excluded.by_user")


class PgJobs(Jobs):
    def __init__(self, db: Sql) -> None:
        super().__init__(db)
        self.held: dict[str, str] = {}  # locks this connection holds: name -> owner

    def lock_holder(self, name: str) -> Row | None:
        if name not in self.held and not self.db.scalar(HELD, (JOB_CLASS, name)):
            return None  # no session holds it: any row left is a crashed holder's
        return super().lock_holder(name)

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
        super().release_lock(name, owner)
        if self.held.get(name) == owner:
            self._unlock(name)

    def _unlock(self, name: str) -> None:
        self.held.pop(name, None)
        self.db.scalar(UNLOCK, (JOB_CLASS, name))


def _busy(name: str, who: Row | None) -> str:
    if who is None:  # its holder has not committed its row yet
        return f"{name} is already running; try again later"
    return (f"{name} is already running (run {who['owner']}, pid {who['pid']} on "
            f"{who['host'] or 'an unknown host'}, user {who['by_user']}, since "
            f"{who['acquired_at']}); try again later")
