"""The counts `hippo stats` shows. Text sorts byte by byte and NULL first on both backends;
Echo counts what this user may see (their own sessions, or everyone's once shared), as
`chunks.count` does, and the files they read. (The store's size: `store.health`.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from hippo.store.clauses import UNVERIFIED, current
from hippo.store.sql import Repository
from hippo.store.vectors import TABLES

if TYPE_CHECKING:
    from hippo.store.base import Row

# The columns `memories_by` groups by.
MemoryField = Literal["status", "type", "tier", "author", "project"]

SCHEMA = "SELECT name FROM _migrations ORDER BY name{collate}"
MEMORIES = "SELECT count(*) FROM memories"
ACTIVE = "SELECT count(*) FROM memories WHERE status = 'active'"
BY = {(field, active): (f"SELECT {field}, count(*) FROM memories "
                        f"WHERE {'status = ' + repr('active') if active else '{true}'} "
                        f"GROUP BY {field} ORDER BY {field}{{collate}} NULLS FIRST")
      for field in ("status", "type", "tier", "author", "project") for active in (False, True)}
VECTORS = "SELECT count(*) FROM {table}"
# Where another's sessions may be hidden: the vectors of the chunks this user may see.
SEEN_VECTORS = ("SELECT count(*) FROM echo_vec v JOIN echo_chunks c ON c.id = v.chunk_id "
                "JOIN echo_sessions e ON e.id = c.session_id WHERE {visible}")
SESSIONS = "SELECT count(*) FROM echo_sessions e WHERE {visible}"
FILES = "SELECT count(*) FROM watermarks e WHERE {own}"  # e: the row's owner is `own`'s
CACHE = "SELECT count(*) FROM embed_cache"
COUNTERS = ("SELECT name, value FROM counters WHERE lower(name) {which} 'embed.%' "
            "ORDER BY name{{collate}}")
RUNS = ("SELECT job, id AS run_id, started_at, finished_at, outcome FROM runs r "
        "WHERE started_at = (SELECT max(started_at{collate}) FROM runs WHERE job = r.job) "
        "ORDER BY job{collate}")
# On a team store, a member's own chunks past their own watermark (`store.meta`).
PENDING = ("SELECT count(*) FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
           "WHERE {which} AND c.id > ?")
GUARD = ("SELECT provider, day, calls, tokens, consecutive_failures, "
         "open_until, last_error FROM guard ORDER BY provider{collate}")


class Stats(Repository):
    """The counts `hippo stats` shows."""

    def _scalar(self, template: str, *params: Any) -> int:
        return int(self.db.scalar(self._sql(template), params) or 0)

    def schema_steps(self) -> list[str]:
        """The names of the schema steps applied, in order."""
        return [r[0] for r in self.db.execute(self._sql(SCHEMA))]

    def memory_count(self, *, active: bool = False) -> int:
        """How many memories there are (`active`: only the active ones)."""
        return self._scalar(ACTIVE if active else MEMORIES)

    def memories_by(self, field: MemoryField, *, active: bool) -> dict[str, int]:
        """How many memories have each value of `field` (as text; None as "None"), in order
        of the value; `active`: only the active ones."""
        sql = BY.get((field, bool(active)))
        if sql is None:
            raise ValueError(f"unknown memory field {field!r}")
        return {str(k): int(n) for k, n in self.db.execute(self._sql(sql))}

    def unverified(self) -> int:
        """Current machine-written rules and preferences no layer loads until reviewed."""
        return int(self.db.scalar(f"SELECT count(*) FROM memories m WHERE "
                                  f"{current(self.db.dialect)} AND {UNVERIFIED}"))

    def vector_count(self, store: str) -> int:
        """How many vectors the index of `store` (brain, echo) holds (0: none yet)."""
        table = TABLES[store][0]
        if not self.db.has_table(table):
            return 0
        if store == "echo" and self.db.dialect.visible != "1":
            return self._scalar(SEEN_VECTORS)
        return self._scalar(VECTORS.format(table=table))

    def session_count(self) -> int:
        """How many transcript sessions Echo holds."""
        return self._scalar(SESSIONS)

    def file_count(self) -> int:
        """How many transcript files have been read."""
        return self._scalar(FILES)

    def cache_entries(self) -> int:
        """How many entries the embedding cache holds."""
        return self._scalar(CACHE)

    def counters(self, *, embed: bool) -> list[tuple[str, Any]]:
        """The named counters, by name: those of the embedding cache (`embed.*`), or the
        others."""
        sql = COUNTERS.format(which="LIKE" if embed else "NOT LIKE")
        return [(n, v) for n, v in self.db.execute(self._sql(sql))]

    def latest_runs(self) -> list[Row]:
        """Each job's last run (job, run_id, started_at, finished_at, outcome), by job."""
        return self.db.rows(self._sql(RUNS))

    def chunks_pending(self, watermark: int) -> int:
        """How many Echo chunks extraction has not read yet: past its `watermark`."""
        return self._scalar(PENDING.format(which="{own}" if self.db.team else "{visible}"),
                            watermark)

    def spend(self) -> list[Row]:
        """Each paid provider's state today (calls, tokens, failures, open_until, last_error)."""
        return self.db.rows(self._sql(GUARD))
