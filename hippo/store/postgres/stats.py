"""PostgreSQL: the counts `hippo stats` shows. Text sorts in byte order (`COLLATE "C"`)
and NULL first, as SQLite sorts them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.store.postgres.filters import CURRENT, OWN, UNVERIFIED, VISIBLE
from hippo.store.postgres.schema import USER

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql
    from hippo.store.stats import MemoryField

# What the schema takes on disk: its tables with their indexes and TOAST.
SIZE = ("SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'm')")
SCHEMA = 'SELECT name FROM _migrations ORDER BY name COLLATE "C"'
MEMORIES = "SELECT count(*) FROM memories"
ACTIVE = "SELECT count(*) FROM memories WHERE status = 'active'"
UNVERIFIED_COUNT = f"SELECT count(*) FROM memories m WHERE {CURRENT} AND {UNVERIFIED}"
BY = {(field, active): (f"SELECT {field} AS value, count(*) AS n FROM memories "
                        f"WHERE {'status = ' + repr('active') if active else 'true'} "
                        f'GROUP BY {field} ORDER BY {field} COLLATE "C" NULLS FIRST')
      for field in ("status", "type", "tier", "author", "project") for active in (False, True)}
# Echo counts what this user sees (their own sessions, or everyone's once shared), as
# `chunks.count` does; the files read are their own.
VECTORS = {"brain": "SELECT count(*) FROM memories_vec",
           "echo": ("SELECT count(*) FROM echo_vec v JOIN echo_chunks c ON c.id = v.chunk_id "
                    f"JOIN echo_sessions e ON e.id = c.session_id WHERE {VISIBLE}")}
VEC_TABLES = {"brain": "memories_vec", "echo": "echo_vec"}
SESSIONS = f"SELECT count(*) FROM echo_sessions e WHERE {VISIBLE}"
FILES = f"SELECT count(*) FROM watermarks WHERE owner = {USER}"
CACHE = "SELECT count(*) FROM embed_cache"
EMBED_COUNTERS = ("SELECT name, value FROM counters WHERE starts_with(lower(name), 'embed.') "
                  'ORDER BY name COLLATE "C"')
OTHER_COUNTERS = ("SELECT name, value FROM counters WHERE NOT starts_with(lower(name), 'embed.') "
                  'ORDER BY name COLLATE "C"')
RUNS = ("SELECT job, id AS run_id, started_at, finished_at, outcome FROM runs r "
        "WHERE started_at = (SELECT max(started_at COLLATE \"C\") FROM runs WHERE job = r.job) "
        'ORDER BY job COLLATE "C"')
# meta's value is text: a value that is no integer counts as 0, as SQLite's CAST makes it.
PENDING = ("SELECT count(*) FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
           "WHERE {which} AND c.id > coalesce((SELECT CASE WHEN value ~ "
           "'^\\s*-?[0-9]{{1,18}}\\s*$' THEN trim(value)::bigint ELSE 0 END FROM meta "
           "WHERE key = {key}), 0)")
# On a team store, a member's own chunks past their own watermark (`hippo.store.meta`).
SHARED_PENDING = PENDING.format(which=VISIBLE, key="'extract.last_chunk_id'")
OWN_PENDING = PENDING.format(which=OWN, key="'user/' || current_user || '/extract.last_chunk_id'")
GUARD = ("SELECT provider, day, calls, tokens, consecutive_failures, "
         'open_until, last_error FROM guard ORDER BY provider COLLATE "C"')


class PgStats:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def size_bytes(self) -> int:
        return int(self.db.scalar(SIZE))

    def schema_steps(self) -> list[str]:
        return [r["name"] for r in self.db.rows(SCHEMA)]

    def memory_count(self, *, active: bool = False) -> int:
        return int(self.db.scalar(ACTIVE if active else MEMORIES))

    def memories_by(self, field: MemoryField, *, active: bool) -> dict[str, int]:
        sql = BY.get((field, bool(active)))
        if sql is None:
            raise ValueError(f"unknown memory field {field!r}")
        return {str(r["value"]): int(r["n"]) for r in self.db.rows(sql)}

    def unverified(self) -> int:
        return int(self.db.scalar(UNVERIFIED_COUNT))

    def vector_count(self, store: str) -> int:
        if not self.db.has_table(VEC_TABLES[store]):
            return 0
        return int(self.db.scalar(VECTORS[store]))

    def session_count(self) -> int:
        return int(self.db.scalar(SESSIONS))

    def file_count(self) -> int:
        return int(self.db.scalar(FILES))

    def cache_entries(self) -> int:
        return int(self.db.scalar(CACHE))

    def counters(self, *, embed: bool) -> list[tuple[str, Any]]:
        return [(r["name"], int(r["value"]))
                for r in self.db.rows(EMBED_COUNTERS if embed else OTHER_COUNTERS)]

    def latest_runs(self) -> list[Row]:
        return self.db.rows(RUNS)

    def chunks_pending(self) -> int:
        return int(self.db.scalar(OWN_PENDING if self.db.team else SHARED_PENDING))

    def spend(self) -> list[Row]:
        return self.db.rows(GUARD)
