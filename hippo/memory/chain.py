"""The chain `hippo show` prints: what a memory replaced, what replaced it, when, and on
what evidence (the audit entry's run, the replacing memory's source chunks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.store import Store


def _supersede_entry(db: Store, memory_id: int) -> dict[str, Any] | None:
    """The newest audit entry that set this memory's `superseded_by`."""
    from hippo.memory import audit

    found = None
    for entry in audit.history(db, memory_id):
        after = entry.get("after")
        if isinstance(after, dict) and after.get("superseded_by") is not None and (
                not isinstance(entry.get("before"), dict)
                or entry["before"].get("superseded_by") != after["superseded_by"]):
            found = entry
    return found


def chain(db: Store, rec: dict[str, Any]) -> dict[str, Any]:
    """What `rec` replaced (`replaces`: id, text, valid_to, run_id) and what replaced it
    (`replaced_by`: id, text, at, by, run_id, and the replacing memory's source chunks)."""
    from hippo.errors import NotFoundError
    from hippo.memory import brain
    from hippo.memory.records import to_record

    replaces = []
    for row in db.memories.replaced(rec["id"]):
        old = to_record(row)
        entry = _supersede_entry(db, old["id"])
        replaces.append({"id": old["id"], "text": old["text"], "valid_to": old["valid_to"],
                         "run_id": entry["run_id"] if entry else None})
    out: dict[str, Any] = {"replaces": replaces, "replaced_by": None}
    new_id = rec["superseded_by"]
    if new_id is None:
        return out
    try:
        new = brain.get(db, new_id)
    except NotFoundError:
        new = None
    entry = _supersede_entry(db, rec["id"])
    out["replaced_by"] = {
        "id": new_id, "text": new["text"] if new else None, "at": rec["valid_to"],
        "by": entry["actor"] if entry else None, "run_id": entry["run_id"] if entry else None,
        "chunks": brain.chunk_ids(db, new_id) if new else []}
    return out
