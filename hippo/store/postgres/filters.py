"""PostgreSQL: the filters of `hippo.store.memories` (`MemoryFilter`) and
`hippo.store.filters` (`SearchFilters`, `EchoFilters`) as WHERE clauses with `%s`
parameters. Lists travel as one array parameter (`= ANY(%s)`), tags as JSON text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.chunks import SHARED_KEY, SHARED_ON
from hippo.store.postgres.schema import USER

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, SearchFilters
    from hippo.store.memories import MemoryFilter

# What a layer may load at all: active and not replaced by a newer memory.
CURRENT = "m.status = 'active' AND m.superseded_by IS NULL"
# Types a machine may not put in front of every session on its own (SPEC: authorship).
REVIEWED_TYPES = ("rule", "preference")
# Written by a machine, and no person has verified or pinned it yet.
UNVERIFIED = ("m.author = 'machine' AND m.type IN ("
              + ", ".join(repr(t) for t in REVIEWED_TYPES)
              + ") AND m.verified_at IS NULL AND m.pinned = 0")
# `tags` is a JSON array as text (hippo writes nothing else there).
TAGGED = "{alias}.tags::jsonb ? %s"
ROLE = "(',' || c.roles || ',') LIKE %s"
# Echo is its ingester's: a session (alias e) is seen by its owner, or by everyone once the
# team turned sharing on (meta `echo.shared`, `hippo config --set echo.shared=on`).
SHARED = f"EXISTS (SELECT 1 FROM meta WHERE key = '{SHARED_KEY}' AND value = '{SHARED_ON}')"
OWN = f"e.owner = {USER}"
VISIBLE = f"({OWN} OR {SHARED})"


def where(f: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) for `f`, and its parameters."""
    clause, params = among(statuses=f.statuses, types=f.types, tiers=f.tiers,
                           projects=f.projects, since=f.since, until=f.until, tags=f.tags,
                           alias=alias)
    if f.current:
        clause += f" AND {alias}.superseded_by IS NULL"
    if f.unverified:
        clause += f" AND {UNVERIFIED.replace('m.', alias + '.')}"
    return clause, params


def among(*, statuses: Sequence[str] = (), types: Sequence[str] = (),
          tiers: Sequence[str] = (), projects: Sequence[str | None] | None = None,
          since: str | None = None, until: str | None = None, tags: Sequence[str] = (),
          alias: str = "m") -> tuple[str, list[Any]]:
    """The clause of a `MemoryFilter`'s fields, given one by one."""
    parts: list[str] = ["TRUE"]
    params: list[Any] = []

    def within(column: str, values: Sequence[Any]) -> None:
        parts.append(f"{alias}.{column} = ANY(%s)")
        params.append(list(values))

    if statuses:
        within("status", statuses)
    if types:
        within("type", types)
    if tiers:
        within("tier", tiers)
    if projects is not None:
        parts.append(_projects(projects, alias, params))
    if since:
        parts.append(f"{alias}.created_at >= %s")
        params.append(since)
    if until:
        parts.append(f"{alias}.created_at <= %s")
        params.append(until)
    for tag in tags:
        parts.append(TAGGED.format(alias=alias))
        params.append(tag.lower())
    return " AND ".join(parts), params


def _projects(projects: Sequence[str | None], alias: str, params: list[Any]) -> str:
    named = [p for p in projects if p is not None]
    clause = []
    if named:
        clause.append(f"{alias}.project = ANY(%s)")
        params.append(named)
    if any(p is None for p in projects):
        clause.append(f"{alias}.project IS NULL")
    return "(" + (" OR ".join(clause) or "FALSE") + ")"


def memory_where(f: SearchFilters, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) of active memories `f` allows."""
    where_, params = among(statuses=["active"], types=f.types, tiers=f.tiers,
                           projects=f.projects, since=f.since, until=f.until, tags=f.tags,
                           alias=alias)
    if not f.include_superseded:
        where_ += f" AND {alias}.superseded_by IS NULL"
    return where_, params


def chunk_where(f: EchoFilters) -> tuple[str, list[Any]]:
    """The WHERE clause over `echo_chunks` c joined with `echo_sessions` e: what `f`
    allows of the sessions this user may see (`VISIBLE`)."""
    parts: list[str] = [VISIBLE]
    params: list[Any] = []
    if f.sessions:
        parts.append("e.session_key = ANY(%s)")
        params.append(list(f.sessions))
    if f.projects is not None:
        parts.append(_projects(f.projects, "c", params))
    if f.since:
        parts.append("c.started_at >= %s")
        params.append(f.since)
    if f.until:
        parts.append("c.started_at <= %s")
        params.append(f.until)
    if f.roles:
        parts.append("(" + " OR ".join(ROLE for _ in f.roles) + ")")
        params.extend(f"%,{r},%" for r in f.roles)
    return " AND ".join(parts), params
