"""Echo, the original transcripts: search them (only when asked), or forget a session.

`search` builds the filters itself (sessions, project, time, roles) and returns the
chunks with where each came from; `forget_session` purges one session for good. The
command line (`hippo echo`) and the MCP `echo` tool call them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hippo.errors import UsageError

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.retrieve.echo_search import EchoResult


def search(h: Hippo, query: str, *, sessions: Sequence[str] = (), project: str | None = None,
           since: str | None = None, until: str | None = None, roles: Sequence[str] = (),
           limit: int = 5, context: int = 0) -> EchoResult:
    """The best transcript chunks for `query`, across every project unless `project` is
    named (transcripts are the inspection path), within `sessions`, `roles` and the times
    `since`/`until` (ISO-8601 or 7d, 12h), each with `context` neighbouring chunks."""
    from hippo.retrieve.echo_search import search as echo_search
    from hippo.store.filters import EchoFilters
    from hippo.timeutil import iso, parse_since

    check_roles(roles)
    f = EchoFilters(sessions=list(sessions), projects=[project] if project else None,
                    since=iso(parse_since(since)) if since else None,
                    until=iso(parse_since(until)) if until else None, roles=list(roles))
    return echo_search(h, query, filters=f, limit=limit, context=context)


def check_roles(roles: Sequence[str]) -> None:
    """Refuse a role no chunk has (exit 2, naming the ones there are)."""
    if roles:
        from hippo.ingest.chunk import CHUNK_ROLES

        unknown = [r for r in roles if r not in CHUNK_ROLES]
        if unknown:
            raise UsageError(f"unknown role {unknown[0]!r}; choose {', '.join(CHUNK_ROLES)}")


@dataclass(slots=True)
class Forgotten:
    """What forgetting a session did: its chunks purged, the memories that cite it (they
    stay, marked `source.forgotten`), and whether the store could rewrite its files at
    once (`checkpointed`; else the text stays in free space until it does: `label` names
    the store, `server` says whether it is a PostgreSQL one)."""

    session: str
    chunks: int
    cited: list[int] = field(default_factory=list)
    checkpointed: bool = True
    label: str = ""
    server: bool = False


def forget_session(h: Hippo, session: str) -> Forgotten:
    """Purge a session's chunks, vectors and index rows; the memories extracted from it
    stay, marked in `source.forgotten`."""
    from hippo.ingest.forget import forget_session as purge

    cited: list[int] = []
    with h.db.transaction():
        n = purge(h.db, session, cited=cited)
    done = h.db.checkpoint()
    return Forgotten(session, n, cited, done, h.db.label, h.db.path is None)
