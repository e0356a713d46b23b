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

from hippo import brain
from hippo.errors import HippoError, NotFoundError, UsageError
from hippo.jobs import job
from hippo.maintain.common import OnEvent, failpoint
from hippo.records import dedup_key, to_record

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.store.sqlite.database import Database

ACTOR = "human"
JOB = "project"
# What one more sighting adds to confidence (as `brain.reinforce`).
REINFORCE_GAIN = 0.2

COUNTS = {
    "memories": "SELECT project, count(*), sum(status = 'active') FROM memories GROUP BY project",
    "sessions": "SELECT project, count(*) FROM echo_sessions GROUP BY project",
    "chunks": "SELECT project, count(*) FROM echo_chunks GROUP BY project",
    "dirs": "SELECT project, count(*) FROM project_dirs GROUP BY project",
}
EXISTS = (
    "SELECT 1 WHERE EXISTS (SELECT 1 FROM memories WHERE project = ?1) "
    "OR EXISTS (SELECT 1 FROM echo_sessions WHERE project = ?1) "
    "OR EXISTS (SELECT 1 FROM echo_chunks WHERE project = ?1) "
    "OR EXISTS (SELECT 1 FROM project_dirs WHERE project = ?1)"
)
MEMORIES = (f"SELECT {brain.COLUMNS}, dedup_key FROM memories WHERE project = ? "
            "ORDER BY id")
PURGED = "dedup_key = 'purged:' || id"  # a hard-forgotten row keeps its key as it is
HAS_ECHO_VEC = "SELECT 1 FROM sqlite_master WHERE name = 'echo_vec'"

# Rows that are not memories: table -> (its key, which of its rows). Names from code only.
MOVED_ROWS = {
    "echo_sessions": ("id", ""),
    "echo_chunks": ("id", ""),
    "project_dirs": ("path", ""),
    "memories": ("id", f" AND {PURGED}"),
}
# ?1 run, ?2 from, ?3 to: save each row's move, then make it.
SAVE_MOVES = {t: ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
                  f"SELECT ?1, '{t}', {key}, project, ?3 FROM {t} WHERE project = ?2{only}")
              for t, (key, only) in MOVED_ROWS.items()}
MAKE_MOVES = {t: f"UPDATE {t} SET project = ?3 WHERE project = ?2{only}"
              for t, (_, only) in MOVED_ROWS.items()}
ECHO_VEC_MOVE = "UPDATE echo_vec SET project = ?2 WHERE project = ?1"

# Undo: each saved move back, row by row. ?1 the row's key, ?2 the project to set.
MOVED = "SELECT tbl, row_key, before, after FROM project_moves WHERE run_id = ? ORDER BY tbl, row_key"
CURRENT = {
    "echo_sessions": "SELECT project FROM echo_sessions WHERE id = CAST(?1 AS INTEGER)",
    "echo_chunks": "SELECT project FROM echo_chunks WHERE id = CAST(?1 AS INTEGER)",
    "project_dirs": "SELECT project FROM project_dirs WHERE path = ?1",
    "memories": "SELECT project FROM memories WHERE id = CAST(?1 AS INTEGER)",
}
SET_BACK = {
    "echo_sessions": "UPDATE echo_sessions SET project = ?2 WHERE id = CAST(?1 AS INTEGER)",
    "echo_chunks": "UPDATE echo_chunks SET project = ?2 WHERE id = CAST(?1 AS INTEGER)",
    "project_dirs": "UPDATE project_dirs SET project = ?2 WHERE path = ?1",
    "memories": "UPDATE memories SET project = ?2 WHERE id = CAST(?1 AS INTEGER)",
}
ECHO_VEC_SET = "UPDATE echo_vec SET project = ?2 WHERE chunk_id = CAST(?1 AS INTEGER)"
SAVE_MOVE = ("INSERT INTO project_moves(run_id, tbl, row_key, before, after) "
             "VALUES (?, ?, ?, ?, ?)")


def listing(db: Database) -> list[dict[str, Any]]:
    """Every project name (None: global memories) with what it holds, by name."""
    out: dict[str | None, dict[str, Any]] = {}
    for what, sql in COUNTS.items():
        for row in db.execute(sql):
            rec = out.setdefault(row[0], {"project": row[0], "active": 0, "memories": 0,
                                          "sessions": 0, "chunks": 0, "dirs": 0})
            rec[what] = row[1]
            if what == "memories":
                rec["active"] = row[2] or 0
    return [out[k] for k in sorted(out, key=lambda k: (k is not None, k or ""))]


def exists(db: Database, name: str) -> bool:
    return bool(db.scalar(EXISTS, (name,)))


def _check(db: Database, src: str, dst: str, *, merge: bool) -> None:
    for name in (src, dst):
        if not name or not name.strip() or name != name.strip():
            raise UsageError(f"not a project name: {name!r}")
    if src == dst:
        raise UsageError(f"{src!r} and {dst!r} are the same project")
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


def _plan(db: Database, src: str, dst: str) -> tuple[list[dict[str, Any]],
                                                      list[tuple[dict[str, Any], dict[str, Any]]]]:
    """FROM's memories that move as they are, and (copy, INTO's memory) pairs that fold."""
    moves, folds = [], []
    for row in db.rows(MEMORIES, (src,)):
        if row["dedup_key"] == f"purged:{row['id']}":
            continue  # moved by MAKE_MOVES["memories"]: its text is gone, its key stays
        rec = to_record(row)
        same = None
        if rec["status"] in ("active", "done"):
            found = db.row(brain.FIND_SAME, (dedup_key(rec["type"], dst, rec["text"]),))
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
                for table in MOVED_ROWS:
                    db.execute(SAVE_MOVES[table], (current.id, src, dst))
                    db.execute(MAKE_MOVES[table], (current.id, src, dst))
                if db.scalar(HAS_ECHO_VEC):
                    db.execute(ECHO_VEC_MOVE, (src, dst))
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
def moved(db: Database, run_id: str) -> list[dict[str, Any]]:
    """The rows other than memories a run moved (empty for any other run)."""
    return db.rows(MOVED, (run_id,))


def conflicts(db: Database, rows: list[dict[str, Any]]) -> int:
    """How many moved rows are no longer where the run left them (a row since removed is
    not a conflict: there is nothing to put back)."""
    n = 0
    for r in rows:
        now = db.row(CURRENT[r["tbl"]], (r["row_key"],))
        if now is not None and now["project"] != r["after"]:
            n += 1
    return n


def put_back(db: Database, rows: list[dict[str, Any]], run_id: str) -> int:
    """Move each row back to its project before the run; saved under `run_id` (the undo's
    own run), so the undo can be undone in turn. Returns how many rows moved."""
    has_vec = bool(db.scalar(HAS_ECHO_VEC))
    n = 0
    for r in rows:
        now = db.row(CURRENT[r["tbl"]], (r["row_key"],))
        if now is None or now["project"] == r["before"]:
            continue
        db.execute(SET_BACK[r["tbl"]], (r["row_key"], r["before"]))
        if r["tbl"] == "echo_chunks" and has_vec:
            db.execute(ECHO_VEC_SET, (r["row_key"], r["before"] or ""))
        db.execute(SAVE_MOVE, (run_id, r["tbl"], r["row_key"], now["project"], r["before"]))
        n += 1
    return n
