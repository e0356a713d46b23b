"""What a search may return: active memories in scope, by type, tier, tags and time.

Both retrievers apply the same `Filters` inside their own query (never after), so
each still returns its best `k` among the memories the user asked about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hippo.brain import filters_sql


@dataclass(frozen=True, slots=True)
class Filters:
    """Search scope. `projects` None means every project; a None inside it means global."""

    projects: tuple[str | None, ...] | None = None
    types: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # every tag must be present
    since: str | None = None  # ISO-8601 UTC (hippo.timeutil.iso), inclusive
    until: str | None = None  # inclusive
    include_superseded: bool = False

    def where(self, alias: str = "m") -> tuple[str, list[Any]]:
        """The WHERE clause over `memories` (alias `alias`) and its bound parameters."""
        where, params = filters_sql(
            types=self.types, tiers=self.tiers, projects=self.projects, statuses=("active",),
            since=self.since, until=self.until, tags=self.tags, alias=alias,
        )
        if not self.include_superseded:
            where += f" AND {alias}.superseded_by IS NULL"
        return where, params
