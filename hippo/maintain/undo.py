"""`hippo undo RUN_ID`: put every memory a run touched back exactly as it was before it.

The audit log holds each change's record before and after. Undo restores, per memory, the
record from before the run's first change (text, tags, status, consolidated_into,
timestamps...), its vector (from the embed cache, or re-embedded), its FTS entry (through
the triggers) and its provenance links; a memory the run created is removed. Memories
changed again after the run are refused unless --force. Echo sessions, chunks and recorded
worktrees a `hippo project` run moved go back too (`project_moves`). The undo is itself a
run, audited, so it can be undone in turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo.errors import HippoError, NotFoundError, UsageError
from hippo.maintain.common import OnEvent, failpoint
from hippo.memory import brain
from hippo.memory.records import FIELDS, NewMemory
from hippo.ops.jobs import job
from hippo.timeutil import now_iso

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.store import Store

ACTOR = "human"
LINKS = ("link", "unlink")


def undone_by(db: Store, run_id: str, depth: int = 0) -> str | None:
    """The undo run whose effect still stands on `run_id` (one not itself undone), if any."""
    if depth > 50:  # an undo of an undo of ...: far past any real history
        return None
    for undo_id in db.jobs.undoes_of(run_id):
        if undone_by(db, undo_id, depth + 1) is None:
            return str(undo_id)
    return None


@dataclass(slots=True)
class Step:
    memory_id: int
    target: dict[str, Any] | None  # the record before the run (None: the run created it)
    left: dict[str, Any] | None  # the record the run left (None: the run removed it)
    current: dict[str, Any] | None


@dataclass(slots=True)
class UndoPlan:
    run_id: str
    job: str | None
    steps: list[Step] = field(default_factory=list)
    links: list[tuple[int, list[int], bool]] = field(default_factory=list)  # (id, chunks, added)
    purged: list[int] = field(default_factory=list)

    @property
    def conflicts(self) -> list[int]:
        return [s.memory_id for s in self.steps if not _same(s.current, s.left)]

    @property
    def apart(self) -> list[tuple[int, int]]:
        """Every pair within each cluster the run merged (survivor and what it absorbed)."""
        clusters: dict[int, set[int]] = {}
        for s in self.steps:
            into = s.left["consolidated_into"] if s.left else None
            if into is not None and s.left and s.left["status"] == "consolidated" and (
                    s.target is None or s.target["consolidated_into"] != into):
                clusters.setdefault(into, {into}).add(s.memory_id)
        return sorted((a, b) for ids in clusters.values() for a in ids for b in ids if a < b)


# Fields a later schema step added: a record audited before it does not carry them.
LATER_FIELDS = ("verified_at", "valid_from", "valid_to")


def _same(current: dict[str, Any] | None, left: dict[str, Any] | None) -> bool:
    """The memory is as the run left it (a field its audit record predates not compared)."""
    if current is None or left is None:
        return current == left
    return {k: v for k, v in current.items() if k in left or k not in LATER_FIELDS} == left


def _current(db: Store, memory_id: int) -> dict[str, Any] | None:
    try:
        return brain.get(db, memory_id)
    except NotFoundError:
        return None


def plan(db: Store, run_id: str) -> UndoPlan:
    import orjson

    run = db.jobs.get_run(run_id)
    rows = db.consolidation.run_changes(run_id)
    if run is None and not rows:
        raise NotFoundError(f"no run with id {run_id!r}; `hippo stats` shows each job's last run")
    if run is not None and run["job"] == "reindex":
        raise UsageError("a reindex changes vectors, not memories; to go back, run "
                         "`hippo reindex --embedder PREVIOUS`")
    p = UndoPlan(run_id, run["job"] if run else None)
    first: dict[int, dict[str, Any] | None] = {}
    last: dict[int, dict[str, Any] | None] = {}
    for r in rows:
        before = orjson.loads(r["before"]) if r["before"] else None
        after = orjson.loads(r["after"]) if r["after"] else None
        mid = r["memory_id"]
        if r["action"] in LINKS:
            chunks = (after if r["action"] == "link" else before) or {"chunks": []}
            p.links.append((mid, list(chunks["chunks"]), r["action"] == "link"))
        elif before is None and after is None:  # text purged since (forget --hard)
            if mid not in p.purged:
                p.purged.append(mid)
        else:
            first.setdefault(mid, before)
            last[mid] = after
    p.steps = [Step(mid, target, last[mid], _current(db, mid))
               for mid, target in first.items() if mid not in p.purged]
    ours = {s.memory_id for s in p.steps}
    for s in p.steps:  # a memory this run created that others now point at cannot go
        if s.target is None:
            others = [i for i in db.consolidation.pointing_at(s.memory_id) if i not in ours]
            if others:
                raise HippoError(f"memory {s.memory_id}, created by run {run_id}, is now "
                                 f"referenced by memory {others[0]}; undo the later runs first")
    return p


def _event(step: Step) -> dict[str, Any]:
    if step.target is None:
        action = "remove"
    elif step.current is None:
        action = "recreate"
    else:
        action = "restore"
    shown = step.target or step.current or {}
    return {"event": "restore", "id": step.memory_id, "action": action,
            "status": step.target["status"] if step.target else None,
            "from_status": step.current["status"] if step.current else None,
            "text": shown.get("text")}


def run(h: Hippo, run_id: str, *, force: bool = False, dry_run: bool = False,
        on_event: OnEvent) -> dict[str, Any]:
    from hippo.maintain import projects

    db = h.db
    p = plan(db, run_id)
    moves = projects.moved(db, run_id)  # sessions, chunks, dirs a project rename/merge moved
    moved_since = _refuse(db, p, moves, force)
    live = [s for s in p.steps if s.target is not None and s.target["status"] == "active"]
    vectors: dict[int, Any] = {}
    if live and not dry_run:  # outside the write lock; cached texts cost nothing
        vectors = dict(zip((s.memory_id for s in live),
                           h.embed([s.target["text"] for s in live if s.target])))
    moved_back = 0
    # A project merge folds copies of one statement: undone, the two are in different
    # projects again, which consolidation never joins; nothing to keep apart.
    apart = [] if p.job == projects.JOB else p.apart
    with job(db, "undo", dry_run=dry_run) as current:
        if not dry_run:
            moved_back = _write(db, p, moves, apart, vectors, current.id, force=force)
        for step in p.steps:
            on_event(_event(step))
        for mid in p.purged:
            on_event({"event": "skip", "id": mid, "reason": "purged; nothing to restore"})
        current.summary = {"undid": run_id, "undid_job": p.job, "restored": len(p.steps),
                           "links": len(p.links), "kept_apart": len(apart),
                           "forced": bool(p.conflicts or moved_since)}
        if moves:
            current.summary["moved_back"] = len(moves) if dry_run else moved_back
    summary = {"event": "summary", "job": "undo", "run_id": None if dry_run else current.id,
               "dry_run": dry_run, **current.summary}
    on_event(summary)
    return summary


def _refuse(db: Store, p: UndoPlan, moves: list[dict[str, Any]], force: bool) -> int:
    """Refuse (unless `force`) an undo already undone or of changes changed since; how
    many moved rows changed project since the run."""
    from hippo.maintain import projects

    run_id = p.run_id
    if not force:
        by = undone_by(db, run_id)
        if by is not None:
            raise HippoError(f"run {run_id} was already undone by run {by}; to bring its "
                             f"changes back, `hippo undo {by}`")
    if p.conflicts and not force:
        ids = ", ".join(map(str, p.conflicts[:10]))
        raise HippoError(f"{len(p.conflicts)} memories changed after run {run_id} (ids {ids}); "
                         "undo the later runs first, or --force to overwrite those changes")
    moved_since = projects.conflicts(db, moves)
    if moved_since and not force:
        raise HippoError(f"{moved_since} sessions, chunks or directories changed project after "
                         f"run {run_id}; undo the later runs first, or --force to overwrite "
                         "those changes")
    return moved_since


def _write(db: Store, p: UndoPlan, moves: list[dict[str, Any]], apart: list[tuple[int, int]],
           vectors: dict[int, Any], undo_id: str, *, force: bool) -> int:
    """The undo itself, in one transaction; how many moved rows went back."""
    from hippo.maintain import projects

    run_id = p.run_id
    with db.transaction():
        if not force and plan(db, run_id).conflicts:  # changed since we looked
            raise HippoError(f"memories changed while preparing to undo {run_id}; "
                             "try again")
        db.memories.defer_references()  # rows point at each other
        for mid, chunks, added in reversed(p.links):
            if _current(db, mid) is not None:
                brain.link(db, mid, chunks, actor=ACTOR, run_id=undo_id, add=not added)
        for step in reversed(p.steps):
            _apply(db, step, vectors.get(step.memory_id), undo_id)
        moved_back = projects.put_back(db, moves, undo_id)
        # Undoing an undo lets those memories merge again; undoing a merge keeps
        # them apart, or the next nightly consolidate would merge them right back.
        db.consolidation.drop_kept_apart(run_id)
        stamp = now_iso()
        for a, b in apart:
            db.consolidation.keep_apart(a, b, undo_id, stamp)
        failpoint("undo.txn")
    return moved_back


def _apply(db: Store, step: Step, vector: Any, run_id: str) -> None:
    now = _current(db, step.memory_id)
    if step.target is None:
        if now is not None:
            brain.delete_row(db, step.memory_id, actor=ACTOR, action="undo", run_id=run_id)
    elif now is None:
        # audited before 0004 (0009): no verified_at (valid_from, valid_to)
        target = {"verified_at": None, "valid_from": None, "valid_to": None, **step.target}
        mem = NewMemory(**{k: target[k] for k in FIELDS})
        brain.insert(db, mem, vector, actor=ACTOR, run_id=run_id, action="undo")
    else:
        brain.restore(db, step.target, vector, actor=ACTOR, action="undo", run_id=run_id)
