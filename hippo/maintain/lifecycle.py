"""Corrections by a person: done, verify, edit, supersede. Every change is audited (actor
"human"); an edit of the text re-embeds it and makes the memory human-authored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.errors import UsageError
from hippo.memory import brain
from hippo.memory.memtypes import TIERS, resolve
from hippo.memory.records import check_text, clean_tags, require_utf8
from hippo.timeutil import now_iso

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.memory.memtypes import MemType
    from hippo.store import Store

ACTOR = "human"
LIVE = ("active", "done")


def done(h: Hippo, ids: Sequence[int], *, actor: str = ACTOR,
         run_id: str | None = None) -> list[dict[str, Any]]:
    """Mark episodic memories (task, todo, ...) done: out of default search, kept until retired."""
    out = []
    with h.db.transaction():
        for memory_id in ids:
            rec = brain.get(h.db, memory_id)
            tier = h.types[rec["type"]].tier if rec["type"] in h.types else rec["tier"]
            if tier != "episodic":
                episodic = sorted(n for n, t in h.types.items() if t.tier == "episodic")
                raise UsageError(f"memory {memory_id} is a {rec['type']}; only "
                                 f"{', '.join(episodic)} can be done")
            if rec["status"] not in LIVE:
                raise UsageError(f"memory {memory_id} is {rec['status']}; only active ones "
                                 "can be done")
            out.append(brain.update(h.db, memory_id, {"status": "done"}, actor=actor,
                                    action="done", run_id=run_id)
                       if rec["status"] == "active" else rec)
    return out


def verify(db: Store, ids: Sequence[int], *, actor: str = ACTOR,
           run_id: str | None = None) -> list[dict[str, Any]]:
    """A person confirms memories are still true: `confirmed_at` = now, freshness restarts;
    `verified_at` = now records that a person did (a machine-written rule or preference
    enters the rule floor only then)."""
    out = []
    with db.transaction():
        stamp = now_iso()
        for memory_id in ids:
            rec = brain.get(db, memory_id)
            if rec["status"] not in LIVE:
                raise UsageError(f"memory {memory_id} is {rec['status']}; only active or done "
                                 "memories can be verified")
            out.append(brain.update(db, memory_id, {"confirmed_at": stamp,
                                                    "verified_at": stamp},
                                    actor=actor, action="verify", run_id=run_id))
    return out


def edit(h: Hippo, memory_id: int, *, text: str | None = None, type_: str | None = None,
         tier: str | None = None, importance: float | None = None,
         add_tags: Sequence[str] = (), remove_tags: Sequence[str] = (),
         project: str | None = None, global_: bool = False) -> dict[str, Any]:
    """Change fields of one memory; a new text is re-embedded (the vector follows).

    The memory is read inside the write transaction, so parallel edits (`--tag a` and
    `--tag b`) each apply to what the other wrote. The new text's vector is computed
    before the lock is taken: it does not depend on the stored record.
    """
    if text is not None:
        text = _new_text(text)
    _check_fields(tier, importance, project, global_)
    new_type = resolve(type_, h.types) if type_ is not None else None
    added = {require_utf8(t, "tag") for t in clean_tags(list(add_tags))}
    removed = set(clean_tags(list(remove_tags)))
    vector = None
    if text is not None and text != brain.get(h.db, memory_id)["text"]:
        vector = h.embed([text])[0]
    with h.db.transaction():
        rec = brain.get(h.db, memory_id)
        changes = _type_changes(h, rec, text, new_type, tier)
        if importance is not None:
            changes["importance"] = importance
        if added or removed:
            changes["tags"] = sorted((set(rec["tags"]) | added) - removed)
        if global_:
            changes["project"] = None
        elif project is not None:
            changes["project"] = require_utf8(project.strip(), "project")
        changes = {k: v for k, v in changes.items() if v != rec[k]}
        if not changes:
            return rec
        if "text" in changes and vector is None:  # changed back since we looked
            vector = h.embed([changes["text"]])[0]
        if {"text", "type", "project"} & set(changes):
            _refuse_copy(h.db, rec, changes)
        return brain.update(h.db, memory_id, changes, actor=ACTOR, action="edit",
                            vector=vector)


def _new_text(text: str) -> str:
    """An edit's new text: stripped, not empty, checked and redacted."""
    text = text.strip()
    if not text:
        raise UsageError("--text must not be empty")
    from hippo.redact import redact_text

    return redact_text(check_text(text))  # before it is embedded (the cache keeps tokens)


def _check_fields(tier: str | None, importance: float | None, project: str | None,
                  global_: bool) -> None:
    if tier is not None and tier not in TIERS:
        raise UsageError(f"unknown tier {tier!r}; known tiers: {', '.join(TIERS)}")
    if importance is not None and not 0.0 <= importance <= 1.0:
        raise UsageError(f"importance must be between 0 and 1, got {importance}")
    if global_ and project is not None:
        raise UsageError("give --project NAME or --global, not both")
    if project is not None and not project.strip():
        raise UsageError("--project must not be empty (use --global for none)")


def _type_changes(h: Hippo, rec: dict[str, Any], text: str | None, new_type: MemType | None,
                  tier: str | None) -> dict[str, Any]:
    """An edit's changes of text, type and tier (the tier follows a type by default)."""
    changes: dict[str, Any] = {}
    if text is not None and text != rec["text"]:
        changes.update(text=text, author="human")  # a person wrote this statement now
    if new_type is not None and new_type.name != rec["type"]:
        changes["type"] = new_type.name
        old = h.types.get(rec["type"])
        if tier is None and old is not None and rec["tier"] == old.tier:
            changes["tier"] = new_type.tier  # the tier followed the type's default
    if tier is not None:
        changes["tier"] = tier
    return changes


def _refuse_copy(db: Store, rec: dict[str, Any], changes: dict[str, Any]) -> None:
    """An edit must not make a memory an exact copy of another live one: `add` would have
    reinforced that one instead of storing a copy, so say which one it is."""
    from hippo.memory.records import dedup_key

    key = dedup_key(changes.get("type", rec["type"]), changes.get("project", rec["project"]),
                    changes.get("text", rec["text"]))
    other = db.consolidation.same_statement(key, rec["id"])
    if other is not None:
        raise UsageError(f"memory {other} already says this (same type and project); keep "
                         f"one: `hippo verify {other}` and `hippo forget {rec['id']}`, or "
                         f"`hippo supersede {rec['id']} --by {other}`")


def supersede(db: Store, old: int, new: int | None, *, actor: str = ACTOR,
              run_id: str | None = None) -> dict[str, Any]:
    """OLD is replaced by NEW (OLD stays active, out of default search); None clears it."""
    with db.transaction():
        rec = brain.get(db, old)
        if new is None:
            return brain.update(db, old, {"superseded_by": None}, actor=actor,
                                action="unsupersede", run_id=run_id) \
                if rec["superseded_by"] else rec
        if new == old:
            raise UsageError("a memory cannot supersede itself")
        repl = brain.get(db, new)
        if repl["status"] not in LIVE:
            raise UsageError(f"memory {new} is {repl['status']}; supersede with an active one")
        seen, cur = {new}, repl
        while cur["superseded_by"] is not None:  # refuse cycles: NEW must not lead to OLD
            if cur["superseded_by"] == old:
                raise UsageError(f"memory {new} is itself superseded by {old} (directly or "
                                 "through others); that would be a cycle")
            if cur["superseded_by"] in seen:
                break
            seen.add(cur["superseded_by"])
            cur = brain.get(db, cur["superseded_by"])
        if rec["superseded_by"] == new:
            return rec
        return brain.update(db, old, {"superseded_by": new}, actor=actor, action="supersede",
                            run_id=run_id)
