"""What a search may return, as data: each backend turns these into its own query.

`SearchFilters` scope a Brain search (active memories by project, type, tier, tags and
time); `EchoFilters` an Echo search (transcript chunks by session, project, time, role).
Both retrievers of a store apply the same filters inside their own query (never after),
so each still returns its best `k` among the rows the user asked about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple


class SearchFilters(NamedTuple):
    """Brain search scope. `projects` None means every project; a None inside it means global."""

    projects: tuple[str | None, ...] | None = None
    types: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # every tag must be present
    since: str | None = None  # ISO-8601 UTC (hippo.timeutil.iso), inclusive
    until: str | None = None  # inclusive
    include_superseded: bool = False
    as_of: str | None = None  # what was held then: valid at this time, replaced since or not


@dataclass(slots=True)
class EchoFilters:
    """Echo search scope: sessions (keys), projects (None: every project; a None inside
    it: chunks of no project), the time a chunk started, the roles that speak in it."""

    sessions: Sequence[str] = ()
    projects: Sequence[str | None] | None = None  # None: every project
    since: str | None = None
    until: str | None = None
    roles: Sequence[str] = ()

    def narrowed(self) -> bool:
        """True when any filter is set (an unfiltered search may use the index alone)."""
        return bool(self.sessions or self.since or self.until or self.roles
                    or self.projects is not None)
