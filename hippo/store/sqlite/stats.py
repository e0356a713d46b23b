"""SQLite: the counts `hippo stats` shows."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hippo.store.sqlite.filters import CURRENT, UNVERIFIED

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.sqlite.database import Sql
    from hippo.store.stats import MemoryField

UNVERIFIED_COUNT = f"SELECT count(*) FROM memories m WHERE {CURRENT} AND {UNVERIFIED}"

SCHEMA = "SELECT name FROM _migrations ORDER BY name"
MEMORIES = "SELECT count(*) FROM memories"
ACTIVE = "SELECT count(*) FROM memories WHERE status = 'active'"
FIELDS = ("status", "type", "tier", "author", "project")
BY = "SELECT {c}, count(*) FROM memories WHERE {where} GROUP BY {c} ORDER BY {c}"
VEC_TABLES = {"brain": "memories_vec", "echo": "echo_vec"}
VECTORS = "SELECT count(*) FROM {table}"
SESSIONS = "SELECT count(*) FROM echo_sessions"
FILES = "SELECT count(*) FROM watermarks"
CACHE = "SELECT count(*) FROM embed_cache"
EMBED_COUNTERS = "SELECT name, value FROM counters WHERE name LIKE 'embed.%' ORDER BY name"
OTHER_COUNTERS = "SELECT name, value FROM counters WHERE name NOT LIKE 'embed.%' ORDER BY name"
RUNS = ("SELECT job, id AS run_id, started_at, finished_at, outcome FROM runs r "
        "WHERE started_at = (SELECT max(started_at) FROM runs WHERE job = r.job) ORDER BY job")
PENDING = ("SELECT count(*) FROM echo_chunks WHERE id > coalesce((SELECT CAST(value AS INTEGER) "
           "FROM meta WHERE key = 'extract.last_chunk_id'), 0)")
GUARD = ("SELECT provider, day, calls, tokens, consecutive_failures, "
         "open_until, last_error FROM guard ORDER BY provider")


class SqliteStats:
    def __init__(self, db: Sql) -> None:
        self.db = db

    def size_bytes(self) -> int:
        size = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                size += os.path.getsize(f"{self.db.path}{suffix}")
            except OSError:
                pass
        return size

    def schema_steps(self) -> list[str]:
        return [r[0] for r in self.db.execute(SCHEMA)]

    def memory_count(self, *, active: bool = False) -> int:
        return int(self.db.scalar(ACTIVE if active else MEMORIES))

    def memories_by(self, field: MemoryField, *, active: bool) -> dict[str, int]:
        if field not in FIELDS:
            raise ValueError(f"unknown memory field {field!r}")
        sql = BY.format(c=field, where="status = 'active'" if active else "1")
        return {str(k): n for k, n in self.db.execute(sql)}

    def unverified(self) -> int:
        return int(self.db.scalar(UNVERIFIED_COUNT))

    def vector_count(self, store: str) -> int:
        table = VEC_TABLES[store]
        return int(self.db.scalar(VECTORS.format(table=table))) if self.db.has_table(table) else 0

    def session_count(self) -> int:
        return int(self.db.scalar(SESSIONS))

    def file_count(self) -> int:
        return int(self.db.scalar(FILES))

    def cache_entries(self) -> int:
        return int(self.db.scalar(CACHE))

    def counters(self, *, embed: bool) -> list[tuple[str, Any]]:
        return [(n, v) for n, v in self.db.execute(EMBED_COUNTERS if embed else OTHER_COUNTERS)]

    def latest_runs(self) -> list[Row]:
        return self.db.rows(RUNS)

    def chunks_pending(self) -> int:
        return int(self.db.scalar(PENDING))

    def spend(self) -> list[Row]:
        return self.db.rows(GUARD)
