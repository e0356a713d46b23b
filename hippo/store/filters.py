"""What a search may return, as data: each backend turns these into its own query.

`MemoryFilter` says which memories a listing or a Brain search covers (by status, project,
type, tier, tags, time and validity); `EchoFilters` which chunks an Echo search covers (transcript chunks by session, project, time, role).
Both retrievers of a store apply the same filters inside their own query (never after),
so each still returns its best `k` among the rows the user asked about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories: every field left empty matches all. `projects` None means every
    project, a None inside it the global memories; every tag in `tags` must be present.
    A Brain search's scope is `MemoryFilter.search(...)`."""

    statuses: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    projects: tuple[str | None, ...] | None = None
    since: str | None = None  # ISO-8601 UTC (hippo.timeutil.iso), inclusive, on created_at
    until: str | None = None  # inclusive
    tags: tuple[str, ...] = ()  # every tag must be present; compared lower-cased
    current: bool = False  # only memories no newer one supersedes (validity still open)
    as_of: str | None = None  # only memories valid then (valid_from <= T < valid_to)
    unverified: bool = False  # only machine rules/preferences no person verified or pinned

    @classmethod
    def search(cls, *, projects: tuple[str | None, ...] | None = None,
               types: tuple[str, ...] = (), tiers: tuple[str, ...] = (),
               tags: tuple[str, ...] = (), since: str | None = None, until: str | None = None,
               include_superseded: bool = False, as_of: str | None = None) -> MemoryFilter:
        """What a Brain search may return: active memories, current ones unless
        `include_superseded`; as of a time, what was held then (done since included: a
        task was open then), replaced since or not."""
        return cls(statuses=("active", "done") if as_of else ("active",), types=types,
                   tiers=tiers, projects=projects, since=since, until=until, tags=tags,
                   current=not include_superseded, as_of=as_of)


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
