"""SQLite: what the file checks its own way (`hippo.store.health.Health`): its pages
(PRAGMA integrity_check), its foreign keys, FTS5's own check and rebuild, its size."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hippo.store.health import Health, IndexCheck

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql

INTEGRITY = "PRAGMA integrity_check({limit})"
FOREIGN_KEYS = "PRAGMA foreign_key_check"
FTS_TABLES = ("memories_fts", "echo_fts")
FTS_CHECK = "INSERT INTO {t}({t}, rank) VALUES ('integrity-check', 1)"
FTS_REBUILD = "INSERT INTO {t}({t}) VALUES ('rebuild')"


def _fts(index: str) -> str:
    if index not in FTS_TABLES:
        raise ValueError(f"unknown full-text index {index!r}")
    return index


class SqliteHealth(Health):
    db: Sql

    def integrity(self, limit: int) -> list[str]:
        return [str(r["integrity_check"])
                for r in self.db.rows(INTEGRITY.format(limit=int(limit)))]

    def pending_migrations(self) -> list[str]:
        from hippo.store.sqlite.migrations import pending

        return pending(self.db)

    def foreign_key_violations(self) -> int:
        return len(self.db.rows(FOREIGN_KEYS))

    def check_fulltext(self, index: str) -> IndexCheck:
        import apsw

        table = _fts(index)
        try:
            self.db.conn.execute(FTS_CHECK.format(t=table))
            return IndexCheck()
        except (apsw.BusyError, apsw.LockedError) as exc:  # a writer, not a broken index: 75
            from hippo.store.sqlite.errors import translate

            raise translate(exc, self.db.path) from exc
        except apsw.ReadOnlyError:  # FTS5 runs its check as a write: nothing known either way
            return IndexCheck(checked=False)
        except apsw.Error as exc:
            return IndexCheck(error=str(exc))

    def rebuild_fulltext(self, index: str) -> None:
        self.db.execute(FTS_REBUILD.format(t=_fts(index)))

    def size_bytes(self) -> int:
        size = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                size += os.path.getsize(f"{self.db.path}{suffix}")
            except OSError:
                pass
        return size
