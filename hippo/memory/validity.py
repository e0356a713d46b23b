"""Validity in time (SPEC: `valid_from`, `valid_to`): when a new memory's source said it,
and the `valid_to` a change of `superseded_by` brings (the chain `hippo show` prints is
`hippo.memory.chain`'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.memory.records import NewMemory
    from hippo.store import Store


def valid_from(db: Store, mem: NewMemory, created: str) -> str:
    """The time given, else the earliest start of the Echo chunks its source names, else
    `created`: a memory learnt from a transcript holds from when it was said."""
    if mem.valid_from:
        return mem.valid_from
    chunks = (mem.source or {}).get("chunks")
    ids = [c for c in chunks if isinstance(c, int) and not isinstance(c, bool)] \
        if isinstance(chunks, list) else []
    times = [canonical(r["started_at"]) for r in db.chunks.get(ids).values()] if ids else []
    return min((t for t in times if t), default=created)


def canonical(value: str | None) -> str | None:
    """A chunk's time as hippo stores its own (a transcript's may lack the milliseconds)."""
    from hippo.errors import UsageError
    from hippo.timeutil import normalise

    try:
        return normalise(value) if value else None
    except UsageError:
        return None


def valid_to(mem: NewMemory) -> str | None:
    """A new row's end of validity: as given; a superseded one without it (an older
    export) ends when it was last updated."""
    if mem.valid_to or mem.superseded_by is None:
        return mem.valid_to
    return mem.updated_at or mem.created_at


def follow_supersede(before: dict[str, Any], changes: dict[str, Any],
                     stamp: str) -> dict[str, Any]:
    """`changes` with the `valid_to` a change of `superseded_by` implies: set now when a
    memory is first replaced (kept when only the replacement changes), cleared when it is
    no longer replaced. A `valid_to` the caller gives is kept."""
    if "superseded_by" not in changes or "valid_to" in changes:
        return changes
    if changes["superseded_by"] is None:
        return {**changes, "valid_to": None}
    kept = before["valid_to"] if before["superseded_by"] is not None else None
    return {**changes, "valid_to": kept or stamp}
