"""`hippo project`: list projects; rename one, or merge one into another (audited, undoable).

Everything keyed by project moves in one transaction: memories of every status (through
`brain.update`, so the audit log, dedup key and vector metadata follow), Echo sessions and
chunks (and `echo_vec`'s metadata) and the record of worktrees (`project_dirs`). What is not
a memory is kept in `project_moves` under the run id, so `hippo undo RUN` puts it back.

A merge keeps write-time dedup: a memory of FROM (active or done) whose statement INTO
already holds (same type and normalised text, active or done) is folded into INTO's memory,
as adding it there would have reinforced it: the survivor keeps its text, gains the higher
importance, the union of tags and provenance, one reinforcement of confidence, the later
confirmation, and pinned/canonical/human authorship if either had them; the other becomes
`consolidated` into it (inspectable, out of search). docs/projects.md has the details.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.errors import HippoError, NotFoundError, UsageError
from hippo.maintain.common import OnEvent, failpoint
from hippo.memory import brain
from hippo.memory.records import dedup_key, to_record
from hippo.ops.jobs import job

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.store import Store

ACTOR = "human"
JOB = "project"
# What one more sighting adds to confidence (as `brain.reinforce`).
REINFORCE_GAIN = 0.2


def listing(db: Store) -> list[dict[str, Any]]:
    """Every project name (None: global memories) with what it holds, by name."""
    out: dict[str | None, dict[str, Any]] = {}
    for what, project, n, active in db.projects.counts():
        rec = out.setdefault(project, {"project": project, "active": 0, "memories": 0,
                                       "sessions": 0, "chunks": 0, "dirs": 0})
        rec[what] = n
        if what == "memories":
            rec["active"] = active or 0
    return [out[k] for k in sorted(out, key=lambda k: (k is not None, k or ""))]


def exists(db: Store, name: str) -> bool:
    return db.projects.exists(name)


def _check(db: Store, src: str, dst: str, *, merge: bool) -> None:
    for name in (src, dst):
        if not name or not name.strip() or name != name.strip():
            raise UsageError(f"not a project name: {name!r}")
    if src == dst:
        raise UsageError(f"{src!r} and {dst!r} are the same project")
    from hippo.redact import redact_text

    if redact_text(dst) != dst:  # stored in every row it names: a secret is never one
        raise UsageError("the new project name looks like a secret (hippo would store it "
                         "masked); choose another")
    if not exists(db, src):
        raise NotFoundError(f"no project {src!r}; `hippo project list` shows them")
    there = exists(db, dst)
    if merge and not there:
        raise NotFoundError(f"no project {dst!r} to merge into; to give {src!r} a new name, "
                            f"`hippo project rename {src} {dst}`")
    if not merge and there:
        raise HippoError(f"project {dst!r} already exists; `hippo project merge {src} {dst}` "
                         "moves everything of one into the other")


def _seen(rec: dict[str, Any]) -> str:
    return str(rec["confirmed_at"] or rec["created_at"])


def folded(survivor: dict[str, Any], dup: dict[str, Any]) -> dict[str, Any]:
    """What INTO's memory becomes when FROM's copy of its statement joins it (changes only)."""
    c = max(survivor["confidence"], dup["confidence"])
    target = {
        "importance": max(survivor["importance"], dup["importance"]),
        "tags": sorted(set(survivor["tags"]) | set(dup["tags"])),
        "source": brain.merge_source(survivor["source"], dup["source"]),
        "confidence": round(c + (1.0 - c) * REINFORCE_GAIN, 6),
        "confirmed_at": _seen(dup) if _seen(dup) > _seen(survivor) else survivor["confirmed_at"],
        "pinned": survivor["pinned"] or dup["pinned"],
        "canonical": survivor["canonical"] or dup["canonical"],
        "author": "human" if "human" in (survivor["author"], dup["author"]) else "machine",
    }
    return {k: v for k, v in target.items() if v != survivor[k]}


def _plan(db: Store, src: str, dst: str) -> tuple[list[dict[str, Any]],
                                                      list[tuple[dict[str, Any], dict[str, Any]]]]:
    """FROM's memories that move as they are, and (copy, INTO's memory) pairs that fold."""
    moves, folds = [], []
    for row in db.projects.memories(src):
        if row["dedup_key"] == f"purged:{row['id']}":
            continue  # moved by `projects.move`: its text is gone, its key stays
        rec = to_record(row)
        same = None
        if rec["status"] in ("active", "done"):
            found = db.memories.find_same(dedup_key(rec["type"], dst, rec["text"]))
            same = to_record(found) if found else None
        if same is not None:
            folds.append((rec, same))
        else:
            moves.append(rec)
    return moves, folds


def run(h: Hippo, src: str, dst: str, *, merge: bool, dry_run: bool = False,
        on_event: OnEvent) -> dict[str, Any]:
    """Rename SRC to DST (DST must be new), or merge SRC into DST (DST must exist)."""
    db = h.db
    _check(db, src, dst, merge=merge)
    counts = {k: r for k, r in next(iter(
        [x for x in listing(db) if x["project"] == src]), {}).items() if k != "project"}
    with job(db, JOB, dry_run=dry_run) as current:
        moves, folds = _plan(db, src, dst)
        if not dry_run:
            with db.transaction():
                _check(db, src, dst, merge=merge)  # nothing changed since we looked
                moves, folds = _plan(db, src, dst)
                for rec in moves:
                    brain.update(db, rec["id"], {"project": dst}, actor=ACTOR, action=JOB,
                                 run_id=current.id)
                for dup, survivor in folds:
                    brain.update(db, survivor["id"], folded(survivor, dup), actor=ACTOR,
                                 action="merge", run_id=current.id)
                    brain.update(db, dup["id"], {"project": dst, "status": "consolidated",
                                                 "consolidated_into": survivor["id"]},
                                 actor=ACTOR, action="merge", run_id=current.id)
                    gained = set(brain.chunk_ids(db, dup["id"])) - set(
                        brain.chunk_ids(db, survivor["id"]))
                    brain.link(db, survivor["id"], sorted(gained), actor=ACTOR,
                               run_id=current.id)
                db.projects.move(current.id, src, dst)
                db.reindex.move_chunk_vectors(src, dst)
                failpoint("project.txn")
        for dup, survivor in folds:
            on_event({"event": "fold", "id": dup["id"], "into": survivor["id"],
                      "text": survivor["text"]})
        current.summary = {"action": "merge" if merge else "rename", "from": src, "to": dst,
                           "memories": counts.get("memories", 0), "folded": len(folds),
                           "sessions": counts.get("sessions", 0),
                           "chunks": counts.get("chunks", 0), "dirs": counts.get("dirs", 0)}
    summary = {"event": "summary", "job": JOB, "run_id": None if dry_run else current.id,
               "dry_run": dry_run, **current.summary}
    on_event(summary)
    return summary


# -- undo ----------------------------------------------------------------------------------
def moved(db: Store, run_id: str) -> list[dict[str, Any]]:
    """The rows other than memories a run moved (empty for any other run)."""
    return db.projects.moves(run_id)


def conflicts(db: Store, rows: list[dict[str, Any]]) -> int:
    """How many moved rows are no longer where the run left them (a row since removed is
    not a conflict: there is nothing to put back)."""
    n = 0
    for r in rows:
        now = db.projects.moved_row(r["tbl"], r["row_key"])
        if now is not None and now["project"] != r["after"]:
            n += 1
    return n


def put_back(db: Store, rows: list[dict[str, Any]], run_id: str) -> int:
    """Move each row back to its project before the run; saved under `run_id` (the undo's
    own run), so the undo can be undone in turn. Returns how many rows moved."""
    has_vec = db.vectors.has("echo")
    n = 0
    for r in rows:
        now = db.projects.moved_row(r["tbl"], r["row_key"])
        if now is None or now["project"] == r["before"]:
            continue
        db.projects.set_row_project(r["tbl"], r["row_key"], r["before"])
        if r["tbl"] == "echo_chunks" and has_vec:  # a vector carrying its chunk's project
            db.reindex.set_chunk_vector_project(int(r["row_key"]), r["before"] or "")
        db.projects.save_move(run_id, r["tbl"], r["row_key"], now["project"], r["before"])
        n += 1
    return n
