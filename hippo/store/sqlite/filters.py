"""SQLite: the search filters (`hippo.store.filters`) as WHERE clauses and bound parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, SearchFilters

TAGGED = "EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)"
ROLE = "(',' || c.roles || ',') LIKE ?"


def _among(parts: list[str], params: list[Any], column: str, values: Sequence[Any]) -> None:
    parts.append(f"{column} IN ({','.join('?' * len(values))})")
    params.extend(values)


def _projects(parts: list[str], params: list[Any], column: str,
              projects: Sequence[str | None]) -> None:
    named = [p for p in projects if p is not None]
    clause = []
    if named:
        clause.append(f"{column} IN ({','.join('?' * len(named))})")
        params.extend(named)
    if any(p is None for p in projects):
        clause.append(f"{column} IS NULL")
    parts.append("(" + (" OR ".join(clause) or "0") + ")")


def memory_where(f: SearchFilters, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) of active memories `f` allows."""
    parts: list[str] = ["1"]
    params: list[Any] = []
    _among(parts, params, f"{alias}.status", ["active"])
    if f.types:
        _among(parts, params, f"{alias}.type", list(f.types))
    if f.tiers:
        _among(parts, params, f"{alias}.tier", list(f.tiers))
    if f.projects is not None:
        _projects(parts, params, f"{alias}.project", f.projects)
    if f.since:
        parts.append(f"{alias}.created_at >= ?")
        params.append(f.since)
    if f.until:
        parts.append(f"{alias}.created_at <= ?")
        params.append(f.until)
    for tag in f.tags:
        parts.append(TAGGED.format(alias=alias))
        params.append(tag.lower())
    where = " AND ".join(parts)
    if not f.include_superseded:
        where += f" AND {alias}.superseded_by IS NULL"
    return where, params


def chunk_where(f: EchoFilters) -> tuple[str, list[Any]]:
    """The WHERE clause over `echo_chunks` c joined with `echo_sessions` e."""
    parts: list[str] = ["1"]
    params: list[Any] = []
    if f.sessions:
        _among(parts, params, "e.session_key", list(f.sessions))
    if f.projects is not None:
        _projects(parts, params, "c.project", f.projects)
    if f.since:
        parts.append("c.started_at >= ?")
        params.append(f.since)
    if f.until:
        parts.append("c.started_at <= ?")
        params.append(f.until)
    if f.roles:
        parts.append("(" + " OR ".join(ROLE for _ in f.roles) + ")")
        params.extend(f"%,{r},%" for r in f.roles)
    return " AND ".join(parts), params
