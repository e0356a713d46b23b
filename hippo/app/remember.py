"""Store a memory: `remember` (`hippo add TEXT`, the MCP `remember` tool), and `replace`,
an agent's new text for an outdated memory (the MCP `supersede` tool): stored, and the old
one superseded; or, when a person wrote the old one, stored beside it as a conflict for
them to settle.

Secrets are masked on the way in (`hippo.memory.records.NewMemory`); `redacted` counts what an
agent's text had masked, for its reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.app.memory import HUMAN, Run
from hippo.errors import UsageError

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.memory.brain import Change


@dataclass(slots=True)
class Remembered:
    """What storing one memory did: `change` (its action, "added" or "reinforced", and
    the record), the run it belongs to, and how many secrets were masked."""

    change: Change
    run: str | None = None
    redacted: int = 0

    @property
    def unreviewed(self) -> bool:
        """A machine-written rule or preference: search finds it now, the rule floor
        loads it once a person verifies it."""
        from hippo.memory.records import unreviewed

        return unreviewed(self.change.record)


def remember(h: Hippo, text: Any, *, type_: str | None = None, tier: str | None = None,
             tags: Sequence[str] | None = None, importance: float | None = None,
             author: str | None = None, pinned: bool = False, project: str | None = None,
             global_: bool = False, source: dict[str, Any] | None = None,
             actor: str = HUMAN, run: Run | None = None) -> Remembered:
    """Store one memory, or reinforce the same statement stored before. `project`: under
    that project instead of the current one; `global_`: for every project. An agent's
    memory (`actor` not "human") is written by the machine, counts its masked secrets
    and belongs to its session's `run`."""
    from hippo.memory.records import from_input

    agent = actor != HUMAN
    masked = 0
    if agent:
        text, masked = _masked(text, project, tags)
    fields: dict[str, Any] = {"text": text}
    for key, value in (("type", type_), ("tier", tier), ("tags", tags),
                       ("importance", importance), ("author", author), ("source", source),
                       ("project", project)):
        if value is not None:
            fields[key] = value
    if pinned:
        fields["pinned"] = True
    if global_:
        fields["project"] = None
    mem = from_input(fields, h.types, default_project=h.project,
                     default_author="machine" if agent else HUMAN)
    run_id = run() if run is not None else None
    (change,) = h.add([mem], actor=actor, run_id=run_id)
    return Remembered(change, run_id, masked)


def _masked(text: Any, project: str | None, tags: Sequence[str] | None) -> tuple[Any, int]:
    """`text` with its secrets masked, and how many were in it, its project and tags
    (`NewMemory` masks them too; this pass counts them for the agent's reply)."""
    from hippo.redact import redact

    clean, masked = redact(text) if isinstance(text, str) else (text, 0)
    masked += sum(redact(s)[1] for s in (project, *(tags or ())) if isinstance(s, str))
    return clean, masked


@dataclass(slots=True)
class Replaced:
    """An agent's replacement of memory `old` by `new`: `action` "added" or "reinforced"
    (the new one stored, the old superseded), or "conflict" (a person's memory left as it
    was, the new text stored beside it for them to settle)."""

    old: int
    new: int
    action: str
    run: str
    redacted: int = 0


def replace(h: Hippo, old_id: int, text: str, *, actor: str, run: Run,
            source: dict[str, Any]) -> Replaced:
    """Store `text` as the memory that replaces `old_id` (same type, tier, project, tags
    and importance, written by the machine) and supersede the old one. `source` is the
    new memory's provenance (`via`); what a person wrote stays as it is and the new text
    is stored as a conflict with it (`hippo list --conflicts`)."""
    from hippo.maintain import lifecycle
    from hippo.memory import brain
    from hippo.redact import redact  # NewMemory masks too; this pass counts for the reply

    clean, masked = redact(text)
    old = brain.get(h.db, old_id)
    if old.get("author") == "human":
        return _contradict(h, old, clean, masked, actor=actor, run=run, source=source)
    if old["status"] not in lifecycle.LIVE:
        raise UsageError(f"memory {old_id} is {old['status']}; only an active or done "
                         "memory can be superseded")
    mem = _like(h, old, clean, {**source, "supersedes": old_id}, old["tags"])
    h.embed([mem.text])  # outside the transaction: the write lock is held briefly
    run_id = run()
    with h.db.transaction():
        (change,) = h.add([mem], actor=actor, run_id=run_id)
        new_id = change.record["id"]
        if new_id == old_id:
            raise UsageError("the new text says the same as the old one")
        lifecycle.supersede(h.db, old_id, new_id, actor=actor, run_id=run_id)
    return Replaced(old_id, new_id, change.action, run_id, masked)


def _like(h: Hippo, old: dict[str, Any], text: str, source: dict[str, Any],
          tags: Any) -> Any:
    """A machine memory of `text` shaped like `old`."""
    from hippo.memory.records import from_input

    return from_input({"text": text, "type": old["type"], "tier": old["tier"],
                       "project": old["project"], "tags": tags,
                       "importance": old["importance"], "author": "machine",
                       "source": source}, h.types, default_project=h.project)


def _contradict(h: Hippo, old: dict[str, Any], text: str, masked: int, *, actor: str,
                run: Run, source: dict[str, Any]) -> Replaced:
    """An agent's supersede of what a person wrote: theirs is left as it is, and the new
    text is stored as a machine memory in conflict with it, for the person to settle."""
    from hippo.memory import conflicts

    mem = _like(h, old, text, {**source, "contradicts": old["id"]},
                conflicts.tags_for(old["tags"], old["id"]))
    h.embed([mem.text])
    run_id = run()
    with h.db.transaction():
        (change,) = h.add([mem], actor=actor, run_id=run_id)
        same = change.record["id"]
        if same == old["id"] or change.record.get("author") == "human":
            # deduplicated into a person's memory: nothing to settle, nothing of theirs
            # changes (the raise rolls the write back)
            raise UsageError(f"the new text says the same as memory {same}, which a "
                             "person wrote; nothing changed")
    return Replaced(old["id"], change.record["id"], "conflict", run_id, masked)
