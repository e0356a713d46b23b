"""One memory's record, and the changes of its status: get (`hippo show`, the MCP `get`
tool), forget (soft, or purged for good), pin, done, verify, and supersede by another.

Every change is audited under its `actor` ("human" from the command line, "mcp" from an
agent). An agent's change also names its `run`: a callable that gives the run id when the
change is about to be written (after the ids were found: a missing id opens no run), so
`hippo undo RUN` reverts a session; and what a person wrote an agent may not forget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo.errors import UsageError

if TYPE_CHECKING:
    from hippo.core import Hippo

HUMAN = "human"
Run = Callable[[], str]  # the run id of an agent's session, opened on its first write


@dataclass(slots=True)
class Shown:
    """A memory whole: its record, the source chunks it was learnt from, what it replaced
    and what replaced it (`chain`: `replaces`, `replaced_by`), and its audit history."""

    record: dict[str, Any]
    sources: list[dict[str, Any]]
    chain: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] | None = None


def get(h: Hippo, memory_id: int, *, chain: bool = True, history: bool = True) -> Shown:
    """Memory `memory_id` (UsageError when there is none), with its sources, chain and
    history."""
    from hippo.memory import audit, brain

    rec = brain.get(h.db, memory_id)
    sources = brain.sources(h.db, memory_id)
    links: dict[str, Any] = {}
    if chain:
        from hippo.memory.chain import chain as chain_of

        links = chain_of(h.db, rec)
    return Shown(rec, sources, links, audit.history(h.db, memory_id) if history else None)


def _run_id(h: Hippo, ids: Sequence[int], run: Run | None) -> str | None:
    """An agent's run id, once every id is known to exist (a missing id opens no run)."""
    if run is None:
        return None
    from hippo.memory import brain

    for memory_id in ids:
        brain.get(h.db, memory_id)
    return run()


def persons(rec: dict[str, Any], verb: str, command: str) -> None:
    """Refuse an agent's `verb` of what a person wrote: the rule floor is theirs to empty
    (docs/agents.md). The error names the command the person runs instead."""
    if rec.get("author") == "human":
        raise UsageError(f"memory {rec['id']} was written by a person; an agent may not "
                         f"{verb} it. Ask the user to run `{command}` themselves")


def change(h: Hippo, ids: Sequence[int], changes: dict[str, Any], *, action: str,
           actor: str = HUMAN, run: Run | None = None) -> list[dict[str, Any]]:
    """Set `changes` (status, pinned) on every memory of `ids` in one transaction, audited
    as `action`; the records after it."""
    from hippo.memory import brain

    run_id = _run_id(h, ids, run)
    with h.db.transaction():
        return [brain.update(h.db, memory_id, changes, actor=actor, action=action,
                             run_id=run_id) for memory_id in ids]


def forget(h: Hippo, ids: Sequence[int], *, actor: str = HUMAN,
           run: Run | None = None) -> list[dict[str, Any]]:
    """Forget memories: a soft delete, audited and restorable. An agent (`actor` not
    "human") may not forget what a person wrote."""
    from hippo.memory import brain

    if actor != HUMAN:
        for memory_id in ids:  # a missing id opens no run
            persons(brain.get(h.db, memory_id), "forget", f"hippo forget {memory_id}")
    return change(h, ids, {"status": "deleted"}, action="forget", actor=actor, run=run)


@dataclass(slots=True)
class Purged:
    """Memories purged for good, and whether the store could rewrite its files at once
    (`checkpointed`; else the old text stays in free space for a while: `label` names
    the store, `server` says whether it is a PostgreSQL one)."""

    records: list[dict[str, Any]]
    checkpointed: bool
    label: str
    server: bool


def purge(h: Hippo, ids: Sequence[int]) -> Purged:
    """Purge memories: their text, vectors and audit text, for good (a person's only)."""
    from hippo.memory import brain

    with h.db.transaction():
        out = [brain.purge(h.db, memory_id, actor=HUMAN) for memory_id in ids]
    return Purged(out, h.db.checkpoint(), h.db.label, h.db.path is None)


def done(h: Hippo, ids: Sequence[int], *, actor: str = HUMAN,
         run: Run | None = None) -> list[dict[str, Any]]:
    """Mark tasks and todos done: out of default search, kept until retired."""
    from hippo.maintain import lifecycle

    return lifecycle.done(h, ids, actor=actor, run_id=_run_id(h, ids, run))


def verify(h: Hippo, ids: Sequence[int], *, actor: str = HUMAN,
           run: Run | None = None) -> list[dict[str, Any]]:
    """A review: the memories are still true (their freshness restarts), and a rule a
    machine wrote may load in the rule floor from now on."""
    from hippo.maintain import lifecycle

    return lifecycle.verify(h.db, ids, actor=actor, run_id=_run_id(h, ids, run))


def supersede(h: Hippo, old: int, new: int | None) -> dict[str, Any]:
    """Memory `old` is replaced by memory `new` (it leaves default search); None: it is
    current again."""
    from hippo.maintain import lifecycle

    return lifecycle.supersede(h.db, old, new)
