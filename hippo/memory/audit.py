"""Append-only audit log: who changed which memory, when, and the record before and after."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.timeutil import now_iso

if TYPE_CHECKING:
    from hippo.store import Store


def _dump(record: dict[str, Any] | None) -> str | None:
    if record is None:
        return None
    import orjson

    return orjson.dumps(record).decode()


def log(db: Store, memory_id: int, action: str, *, actor: str,
        before: dict[str, Any] | None = None, after: dict[str, Any] | None = None,
        run_id: str | None = None, at: str | None = None) -> None:
    db.audit.log(memory_id, action, actor=actor, at=at or now_iso(), before=_dump(before),
                 after=_dump(after), run_id=run_id)


def history(db: Store, memory_id: int) -> list[dict[str, Any]]:
    import orjson

    out = []
    for row in db.audit.history(memory_id):
        for key in ("before", "after"):
            row[key] = orjson.loads(row[key]) if row[key] else None
        out.append(row)
    return out
