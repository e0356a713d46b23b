"""`hippo retire`: tasks, todos and observations past their useful window, and memories
marked done, become `retired` — unless pinned or canonical. Frozen types never retire.

Age counts from `confirmed_at` when set, else `created_at`; `now` is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hippo.errors import ConfigError
from hippo.maintain.common import OnEvent, batches, failpoint
from hippo.memory import brain
from hippo.memory.records import to_record
from hippo.ops.jobs import job
from hippo.timeutil import parse

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.maintain.settings import MaintainParams
    from hippo.memory.memtypes import MemType

ACTOR = "retire"


def windows(retire_days: Mapping[str, float], types: Mapping[str, MemType]) -> dict[str, float]:
    """Per-type windows in days, checked against the known types (frozen ones refused)."""
    for name in retire_days:
        if name not in types:
            raise ConfigError(f"[maintain.retire_days] names unknown type {name!r}; known: "
                              f"{', '.join(sorted(types))}")
        if types[name].frozen:
            raise ConfigError(f"[maintain.retire_days] {name!r} is a frozen type; "
                              "frozen memories are never retired automatically")
    return dict(retire_days)


def age_days(rec: Mapping[str, Any], now: datetime) -> float:
    return (now - parse(rec["confirmed_at"] or rec["created_at"])).total_seconds() / 86400.0


def reason(rec: Mapping[str, Any], now: datetime, windows: Mapping[str, float],
           types: Mapping[str, MemType]) -> str | None:
    """Why this memory retires now ("done" or "age"), or None. Pure."""
    if rec["pinned"] or rec["canonical"]:
        return None
    mtype = types.get(rec["type"])
    if mtype is not None and mtype.frozen:
        return None
    if rec["status"] == "done":
        return "done"
    window = windows.get(rec["type"])
    if rec["status"] == "active" and window is not None and age_days(rec, now) >= window:
        return "age"
    return None


def run(h: Hippo, params: MaintainParams, *, now: datetime, dry_run: bool = False,
        on_event: OnEvent) -> dict[str, Any]:
    db = h.db
    wins = windows(params.retire_days, h.types)
    with job(db, "retire", dry_run=dry_run) as current:
        rows = db.consolidation.retire_candidates(sorted(wins))
        due = []
        for rec in map(to_record, rows):
            why = reason(rec, now, wins, h.types)
            if why:
                due.append((rec, why))
        counts = {"done": 0, "age": 0}
        for batch in batches(due, params.batch):
            if not dry_run:
                with db.transaction():
                    for rec, _ in batch:
                        brain.update(db, rec["id"], {"status": "retired"}, actor=ACTOR,
                                     action="retire", run_id=current.id)
            for rec, why in batch:
                counts[why] += 1
                on_event({"event": "retire", "id": rec["id"], "type": rec["type"],
                          "project": rec["project"], "status": rec["status"], "reason": why,
                          "age_days": round(age_days(rec, now), 1),
                          "window_days": wins.get(rec["type"]), "text": rec["text"]})
            failpoint("retire.batch")
        current.summary = {"retired": len(due), "done": counts["done"], "aged": counts["age"],
                           "windows": wins}
    summary = {"event": "summary", "job": "retire", "run_id": None if dry_run else current.id,
               "dry_run": dry_run, **current.summary}
    on_event(summary)
    return summary
