"""Conflicts: a machine-written memory that contradicts a person's.

Extraction never changes what a person wrote. When a new machine memory overturns a person's
memory (`hippo.extract.values`: a named thing given a new value), the machine memory is
written with the tags `conflict` and `conflicts:ID` (ID the person's memory), in the same
audited run, and waits for a person: `hippo list --conflicts` shows each with the memory it
contradicts, `hippo stats` counts them, and the session-start hook says how many wait.

A person settles one by `hippo supersede PERSON_ID --by MACHINE_ID` (what the machine
learned replaces it), by `hippo forget` of either side, or, when both hold, by `hippo edit MACHINE_ID --untag conflict`. A conflict is open while both memories are active and current.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.store import Store

TAG = "conflict"
PREFIX = "conflicts:"


def tags_for(tags: Sequence[str], person_memory: int) -> list[str]:
    """`tags` with the two tags that mark a conflict with memory `person_memory`."""
    return list(dict.fromkeys([*tags, TAG, f"{PREFIX}{person_memory}"]))


def targets(tags: Sequence[str]) -> list[int]:
    """The memories a machine memory's tags say it contradicts."""
    out = []
    for t in tags:
        if t.startswith(PREFIX) and t[len(PREFIX):].isdigit():
            out.append(int(t[len(PREFIX):]))
    return out


def note(rec: dict[str, Any]) -> str:
    """What a search result says of a memory that contradicts a person's: `, contradicts a
    person's #4 (unsettled)`, or nothing (also once the person settled it: `contradicts`,
    set by `mark_open`, lists the person's memories that still hold)."""
    tags = rec.get("tags") or ()
    ids = targets(tags) if TAG in tags else []
    if "contradicts" in rec:
        ids = [i for i in ids if i in rec["contradicts"]]
    if not ids:
        return ""
    return f", contradicts a person's {', '.join(f'#{i}' for i in ids)} (unsettled)"


def _current(rec: dict[str, Any] | None) -> bool:
    return (rec is not None and rec["status"] == "active" and rec.get("superseded_by") is None
            and not rec.get("valid_to"))


def open_conflicts(db: Store, projects: Sequence[str | None] | None) -> list[dict[str, Any]]:
    """The open conflicts in `projects` (None: every project), newest first: each the machine
    memory's record with `conflicts_with`, the records of the person's memories it
    contradicts that are still current."""
    from hippo.memory import brain
    from hippo.memory.records import to_record

    out = []
    for rec in brain.listing(db, projects=projects, tags=[TAG]):
        if not _current(rec):
            continue
        ids = targets(rec.get("tags") or ())
        if not ids:
            continue
        held = [r for r in (to_record(row) for row in db.memories.get_many(ids)) if _current(r)]
        if held:
            out.append({**rec, "conflicts_with": held})
    return out


def mark_open(db: Store, recs: Sequence[dict[str, Any]]) -> None:
    """Set `contradicts` on each record tagged as a conflict: the ids of the person's
    memories it contradicts that are still current (empty once the person settled it)."""
    from hippo.memory.records import to_record

    marked = [r for r in recs if TAG in (r.get("tags") or ())]
    ids = sorted({i for r in marked for i in targets(r["tags"])})
    if not ids:
        return
    held = {r["id"] for r in (to_record(row) for row in db.memories.get_many(ids))
            if _current(r)}
    for r in marked:
        r["contradicts"] = [i for i in targets(r["tags"]) if i in held]


def count(db: Store, projects: Sequence[str | None] | None = None) -> int:
    return len(open_conflicts(db, projects))


def waiting_line(db: Store, project: str | None) -> str | None:
    """One line for the session-start hook while conflicts wait in this project."""
    n = count(db, [project, None])
    if not n:
        return None
    what = "memory contradicts" if n == 1 else "memories contradict"
    return (f"hippo: {n} machine-written {what} a person's; a person settles them "
            f"(`hippo list --conflicts`).")
