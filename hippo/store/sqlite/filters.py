"""SQLite: a `MemoryFilter` as a WHERE clause over `memories` and its bound parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.store.memories import MemoryFilter

# What a layer may load at all: active and not replaced by a newer memory.
CURRENT = "m.status = 'active' AND m.superseded_by IS NULL"
# Types a machine may not put in front of every session on its own (SPEC: authorship).
REVIEWED_TYPES = ("rule", "preference")
# Written by a machine, and no person has verified or pinned it yet.
UNVERIFIED = ("m.author = 'machine' AND m.type IN ("
              + ", ".join(repr(t) for t in REVIEWED_TYPES)
              + ") AND m.verified_at IS NULL AND m.pinned = 0")
TAGGED = "EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)"


def where(f: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) for `f`, and its parameters."""
    parts: list[str] = ["1"]
    params: list[Any] = []

    def among(column: str, values: tuple[Any, ...]) -> None:
        parts.append(f"{alias}.{column} IN ({','.join('?' * len(values))})")
        params.extend(values)

    if f.statuses:
        among("status", f.statuses)
    if f.types:
        among("type", f.types)
    if f.tiers:
        among("tier", f.tiers)
    if f.projects is not None:
        parts.append(_projects(f.projects, alias, params))
    if f.since:
        parts.append(f"{alias}.created_at >= ?")
        params.append(f.since)
    if f.until:
        parts.append(f"{alias}.created_at <= ?")
        params.append(f.until)
    for tag in f.tags:
        parts.append(TAGGED.format(alias=alias))
        params.append(tag.lower())
    clause = " AND ".join(parts)
    if f.current:
        clause += f" AND {alias}.superseded_by IS NULL"
    if f.unverified:
        clause += f" AND {UNVERIFIED.replace('m.', alias + '.')}"
    return clause, params


def _projects(projects: tuple[str | None, ...], alias: str, params: list[Any]) -> str:
    named = [p for p in projects if p is not None]
    clause = []
    if named:
        clause.append(f"{alias}.project IN ({','.join('?' * len(named))})")
        params.extend(named)
    if any(p is None for p in projects):
        clause.append(f"{alias}.project IS NULL")
    return "(" + (" OR ".join(clause) or "0") + ")"
