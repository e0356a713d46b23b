"""The filters (`MemoryFilter`, `EchoFilters`) as WHERE clauses with bound parameters
(`?`: the store's own), once for every SQL backend: a `Dialect` says how its SQL spells
a list, truth and a tag test (`hippo.store.sqlite.dialect`, `hippo.store.postgres.dialect`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from hippo.store.filters import EchoFilters, MemoryFilter

# Valid now: not replaced by a newer memory, and its validity not over (`{now}`: the
# backend's clock as a stored timestamp, `Dialect.now`).
VALID_NOW = ("{alias}.superseded_by IS NULL AND ({alias}.valid_to IS NULL "
             "OR {alias}.valid_to > {now})")
# What a layer may load at all: active and current (each backend's `CURRENT`, `current`).
CURRENT = "m.status = 'active' AND " + VALID_NOW.replace("{alias}", "m")
# Valid at a time `{t}` (a parameter, twice): held from `valid_from` (else `created_at`)
# until `valid_to`, whether or not something replaced it since.
VALID_AT = ("coalesce({alias}.valid_from, {alias}.created_at) <= {t} "
            "AND ({alias}.valid_to IS NULL OR {alias}.valid_to > {t})")
# Types a machine may not put in front of every session on its own (SPEC: authorship).
REVIEWED_TYPES = ("rule", "preference")
# Written by a machine, and no person has verified or pinned it yet.
UNVERIFIED = ("m.author = 'machine' AND m.type IN ("
              + ", ".join(repr(t) for t in REVIEWED_TYPES)
              + ") AND m.verified_at IS NULL AND m.pinned = 0")


class Dialect(NamedTuple):
    """How one backend's SQL spells what the clauses need."""

    true: str
    false: str
    tagged: str  # `{alias}`'s tags hold one tag, the parameter
    now: str  # the current time, as the canonical timestamp text (`hippo.timeutil.iso`)
    # `column` is one of `values`: the clause, with its parameters appended to `params`
    within: Callable[[str, Sequence[Any], list[Any]], str]
    # a list as one parameter (`listed(values)`) and `column {in_list}` testing it
    listed: Callable[[Sequence[Any]], Any]
    in_list: str
    name: str = "sqlite"
    # sessions (alias e) this user may see, and their own: every one but on a team store
    visible: str = "1"
    own: str = "1"
    defer_references: str = "PRAGMA defer_foreign_keys = ON"
    secure_delete: str = "PRAGMA secure_delete = ON"  # freed pages zeroed ("": none)
    # a new memory's id, when the database gives none itself; then marked as taken
    next_id: str = ""
    mark_id: str = ""
    # after a text column: compare it byte by byte (SQLite's BINARY, PostgreSQL's "C")
    collate: str = ""
    # after a JSON text column: read as JSON (by `->>`; SQLite reads JSON text as it is)
    as_json: str = ""
    # An Echo chunk's vector (named parameters :id, :vec, :project, :session, :started),
    # `vector` making a blob its parameter; dropping one ("": it goes with its chunk).
    chunk_vector: str = ("INSERT INTO echo_vec(chunk_id, embedding, project, session_id, "
                         "started) VALUES (:id, :vec, :project, :session, :started)")
    vector: Callable[[bytes], Any] = bytes
    drop_chunk_vector: str = "DELETE FROM echo_vec WHERE chunk_id = ?"
    # After an import, the id counters moved past every imported id ("": they follow).
    advance_ids: str = ""
    watermark_key: str = "path"  # what names a user's watermark (ON CONFLICT)

    @property
    def fragments(self) -> dict[str, str]:
        """What a query template (`hippo.store.sql.render`) may name."""
        return {"in_list": self.in_list, "true": self.true, "false": self.false,
                "now": self.now, "visible": self.visible, "own": self.own,
                "tagged": self.tagged.format(alias="m"), "current": current(self),
                "collate": self.collate, "as_json": self.as_json,
                "watermark_key": self.watermark_key}


def where(d: Dialect, f: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE clause over `memories` (alias `alias`) for `f`, and its parameters."""
    clause, params = among(d, statuses=f.statuses, types=f.types, tiers=f.tiers,
                           projects=f.projects, since=f.since, until=f.until, tags=f.tags,
                           alias=alias)
    if f.as_of:
        clause += " AND " + valid_at(d, alias, f.as_of, params)
    elif f.current:
        clause += " AND " + VALID_NOW.format(alias=alias, now=d.now)
    if f.unverified:
        clause += f" AND {UNVERIFIED.replace('m.', alias + '.')}"
    return clause, params


def among(d: Dialect, *, statuses: Sequence[str] = (), types: Sequence[str] = (),
          tiers: Sequence[str] = (), projects: Sequence[str | None] | None = None,
          since: str | None = None, until: str | None = None, tags: Sequence[str] = (),
          alias: str = "m") -> tuple[str, list[Any]]:
    """The clause of a `MemoryFilter`'s fields, given one by one."""
    parts: list[str] = [d.true]
    params: list[Any] = []
    for column, values in (("status", statuses), ("type", types), ("tier", tiers)):
        if values:
            parts.append(d.within(f"{alias}.{column}", values, params))
    if projects is not None:
        parts.append(_projects(d, projects, alias, params))
    if since:
        parts.append(f"{alias}.created_at >= ?")
        params.append(since)
    if until:
        parts.append(f"{alias}.created_at <= ?")
        params.append(until)
    for tag in tags:
        parts.append(d.tagged.format(alias=alias))
        params.append(tag.lower())
    return " AND ".join(parts), params


def _projects(d: Dialect, projects: Sequence[str | None], alias: str,
              params: list[Any]) -> str:
    named = [p for p in projects if p is not None]
    clause = []
    if named:
        clause.append(d.within(f"{alias}.project", named, params))
    if any(p is None for p in projects):
        clause.append(f"{alias}.project IS NULL")
    return "(" + (" OR ".join(clause) or d.false) + ")"



def current(d: Dialect) -> str:
    """`CURRENT` in this backend's spelling (over `memories m`)."""
    return CURRENT.format(now=d.now)


def valid_at(d: Dialect, alias: str, when: str, params: list[Any]) -> str:
    """The clause of memories valid at `when` (ISO-8601 UTC); its parameters appended."""
    params.extend((when, when))
    return VALID_AT.format(alias=alias, t="?")


def chunk_where(d: Dialect, f: EchoFilters) -> tuple[str, list[Any]]:
    """The WHERE clause over `echo_chunks` c joined with `echo_sessions` e: what `f` allows
    of the sessions this user may see (`Dialect.visible`)."""
    parts: list[str] = [d.visible]
    params: list[Any] = []
    if f.sessions:
        parts.append(d.within("e.session_key", f.sessions, params))
    if f.projects is not None:
        parts.append(_projects(d, f.projects, "c", params))
    if f.since:
        parts.append("c.started_at >= ?")
        params.append(f.since)
    if f.until:
        parts.append("c.started_at <= ?")
        params.append(f.until)
    if f.roles:
        role = "(',' || c.roles || ',') LIKE ?"
        parts.append("(" + " OR ".join(role for _ in f.roles) + ")")
        params.extend(f"%,{r},%" for r in f.roles)
    return " AND ".join(parts), params
