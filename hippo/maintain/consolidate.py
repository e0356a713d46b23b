"""`hippo consolidate`: merge near-duplicate machine memories of one type and project.

Eligible: active, machine-authored, not pinned, not canonical, not superseded, and of a
type that is not frozen (rule, architecture, decision and user types declared frozen).
Compatible: the same type and the same project (global memories only with global ones).
Incremental by default: only memories changed since the last successful run (audit ids
above the recorded watermark) are compared against all; `--full` compares every pair.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo.maintain import literals, neighbors
from hippo.maintain.common import (
    OnEvent,
    batches,
    failpoint,
    fts_backstop,
)
from hippo.maintain.merge import Cluster, Veto, group, merged, restate, same_words
from hippo.memory import brain
from hippo.memory.records import to_record
from hippo.ops.jobs import job

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.maintain.llm_merge import LlmMerger
    from hippo.maintain.settings import MaintainParams
    from hippo.memory.memtypes import MemType
    from hippo.store import Store

ACTOR = "consolidate"
# Types whose repeats raise the survivor's confidence (SPEC: learned procedures).
CONFIDENCE_TYPES = frozenset({"procedure"})

WATERMARK = "consolidate.audit_watermark"
THRESHOLD = "consolidate.threshold"
GUARD = "consolidate.literal_guard"
FULL_PENDING = "consolidate.full_pending"


@dataclass(slots=True)
class Plan:
    mode: str  # "full" | "incremental"
    why: str
    strategy: str  # "scan" | "knn"
    candidates: int
    checked: int
    pairs: int
    watermark: int
    clusters: list[Cluster] = field(default_factory=list)
    vetoes: list[Veto] = field(default_factory=list)
    records: dict[int, dict[str, Any]] = field(default_factory=dict)


def load(db: Store, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for start in range(0, len(ids), 5000):
        out.update((r["id"], to_record(r))
                   for r in db.memories.get_many(ids[start:start + 5000]))
    return out


def _full_reason(db: Store, params: MaintainParams, full: bool) -> str | None:
    last_threshold = db.meta.get(THRESHOLD)
    if full:
        return "--full"
    if db.meta.get(WATERMARK) is None:
        return "first run"
    if db.meta.get(FULL_PENDING):
        return "an earlier full run did not finish"
    if last_threshold is not None and params.threshold < float(last_threshold):
        return f"threshold lowered from {last_threshold}"
    if db.meta.get(GUARD) == "1" and not params.literal_guard:
        return "literal guard turned off"
    return None


def plan(db: Store, types: Mapping[str, MemType], params: MaintainParams, *,
         full: bool = False) -> Plan:
    """Find what would merge, writing nothing."""
    watermark = db.consolidation.last_audit_id()
    frozen = {name for name, t in types.items() if t.frozen}
    eligible = {r[0]: (r[1], r[2]) for r in db.consolidation.candidates()
                if r[1] not in frozen}
    why = _full_reason(db, params, full)
    if why:
        changed: set[int] | None = None
    else:
        since = int(db.meta.get(WATERMARK) or 0)
        changed = {i for i in db.consolidation.changed_since(since, ACTOR) if i in eligible}
    n_checked = len(eligible) if changed is None else len(changed)
    strategy = "knn" if changed is not None and len(changed) <= params.knn_limit else "scan"
    p = Plan("full" if why else "incremental", why or "changes since the last run", strategy,
             len(eligible), n_checked, 0, watermark)
    if not n_checked or not db.vectors.has("brain"):
        return p
    if strategy == "knn":
        assert changed is not None
        pairs = neighbors.knn_pairs(db, changed, eligible, params.threshold, params.knn_k)
    else:
        pairs = neighbors.scan_pairs(db, changed, eligible, params.threshold)
    p.pairs = len(pairs)
    p.records = load(db, sorted({i for pair in pairs for i in pair}))
    apart = {(a, b): run_id for a, b, run_id in db.consolidation.kept_apart()}

    def conflict(x: int, y: int) -> str | None:
        undone = apart.get((min(x, y), max(x, y)))
        if undone:
            return f"kept apart since {undone} undid their merge"
        if params.literal_guard:
            return literals.conflict(p.records[x]["text"], p.records[y]["text"])
        return None

    groups, p.vetoes = group(pairs, conflict)
    where = {i: n for n, ids in enumerate(groups) for i in ids}
    inside: list[list[tuple[int, int, float]]] = [[] for _ in groups]
    for (a, b), sim in pairs.items():
        if a in where and where[a] == where.get(b):
            inside[where[a]].append((a, b, sim))
    for ids, links in zip(groups, inside):
        recs = [p.records[i] for i in ids]
        p.clusters.append(merged(recs, links,
                                 gains_confidence=recs[0]["type"] in CONFIDENCE_TYPES))
    p.clusters.sort(key=lambda c: c.survivor)
    return p


def merge_event(c: Cluster, records: Mapping[int, dict[str, Any]],
                how: Mapping[str, str]) -> dict[str, Any]:
    surv = records[c.survivor]
    return {"event": "merge", "survivor": c.survivor, "absorbed": c.absorbed,
            "type": surv["type"], "project": surv["project"],
            "pairs": [[a, b, s] for a, b, s in c.pairs], "text": c.text, "changes": c.updates,
            **how}


def restated(merger: LlmMerger, c: Cluster,
             records: Mapping[int, dict[str, Any]]) -> dict[str, str]:
    """Ask the `llm` merger for the cluster's statement; how the statement was chosen."""
    members = [records[i] for i in (c.survivor, *c.absorbed)]
    if same_words(members):
        return {"merger": "rules", "fallback": "the statements are the same"}
    text, why_not = merger.statement(members)
    if text is None:
        return {"merger": "rules", "fallback": why_not or "no statement"}
    restate(c, records[c.survivor], text)
    return {"merger": "llm"}


def _apply(db: Store, c: Cluster, vector: Any, planned: Mapping[int, dict[str, Any]],
           run_id: str) -> bool:
    """Write one merge; False (nothing written) when a member changed since planning."""
    ids = [c.survivor, *c.absorbed]
    now = load(db, ids)
    if any(i not in now or now[i]["status"] != "active"
           or now[i]["updated_at"] != planned[i]["updated_at"] for i in ids):
        return False
    brain.update(db, c.survivor, c.updates, actor=ACTOR, action="merge", run_id=run_id,
                 vector=vector)
    have = set(brain.chunk_ids(db, c.survivor))
    gained: set[int] = set()
    for absorbed in c.absorbed:
        brain.update(db, absorbed, {"status": "consolidated", "consolidated_into": c.survivor},
                     actor=ACTOR, action="consolidate", run_id=run_id)
        gained.update(brain.chunk_ids(db, absorbed))
    brain.link(db, c.survivor, sorted(gained - have), actor=ACTOR, run_id=run_id)
    return True


def _merge(h: Hippo, p: Plan, params: MaintainParams, merger: LlmMerger | None,
           rules: dict[str, str], run_id: str, *, dry_run: bool,
           on_event: OnEvent) -> tuple[int, int]:
    """Merge the plan's clusters in batches (one transaction each); (merged, skipped)."""
    merged_n = skipped = 0
    for batch in batches(p.clusters, params.batch):
        how = {c.survivor: restated(merger, c, p.records) if merger else rules
               for c in batch}
        if dry_run:
            for c in batch:
                on_event(merge_event(c, p.records, how[c.survivor]))
            merged_n += sum(len(c.absorbed) for c in batch)
            continue
        written = _write_batch(h, batch, p.records, run_id)
        skipped += len(batch) - len(written)
        for c in written:
            merged_n += len(c.absorbed)
            on_event(merge_event(c, p.records, how[c.survivor]))
        for c in batch:
            if c not in written:
                on_event({"event": "skip", "survivor": c.survivor, "absorbed": c.absorbed,
                          "reason": "changed while consolidating; next run retries"})
        failpoint("consolidate.batch")
    return merged_n, skipped


def _write_batch(h: Hippo, batch: Sequence[Cluster], records: Mapping[int, dict[str, Any]],
                 run_id: str) -> list[Cluster]:
    """Embed the batch's new statements, then write its merges in one transaction; the
    clusters written (the others changed since planning)."""
    db = h.db
    wanted = [c for c in batch if "text" in c.updates]
    vecs = dict(zip((c.survivor for c in wanted), h.embed([c.text for c in wanted])))
    written = []
    with db.transaction():
        for c in batch:
            if _apply(db, c, vecs.get(c.survivor), records, run_id):
                written.append(c)
        failpoint("consolidate.txn")
    return written


def run(h: Hippo, params: MaintainParams, *, full: bool = False, dry_run: bool = False,
        on_event: OnEvent) -> dict[str, Any]:
    """Plan, then merge in batches (one transaction each), then the FTS backstop."""
    db = h.db
    started = time.monotonic()
    merger = None
    if params.merger == "llm" and not dry_run:
        from hippo.maintain.llm_merge import LlmMerger

        merger = LlmMerger.for_run(h)  # no key: exit 78 before anything runs
    rules = {"merger": "rules"}
    if params.merger == "llm" and dry_run:
        rules["fallback"] = "a dry run does not ask the model"
    with job(db, "consolidate", dry_run=dry_run) as current:
        p = plan(db, h.types, params, full=full)
        if p.mode == "full" and not dry_run:
            with db.transaction():  # a killed full run is finished by the next run
                db.meta.set(FULL_PENDING, "1")
        for v in p.vetoes:
            on_event({"event": "veto", "a": v.a, "b": v.b, "similarity": v.similarity,
                      "reason": v.reason})
        merged_n, skipped = _merge(h, p, params, merger, rules, current.id,
                                   dry_run=dry_run, on_event=on_event)
        fts = fts_backstop(db, repair=not dry_run)
        if not dry_run:
            with db.transaction():
                db.meta.set(WATERMARK, str(p.watermark))
                db.meta.set(THRESHOLD, repr(params.threshold))
                db.meta.set(GUARD, "1" if params.literal_guard else "0")
                db.meta.set(FULL_PENDING, None)
        current.summary = {
            "mode": p.mode, "why": p.why, "strategy": p.strategy, "threshold": params.threshold,
            "candidates": p.candidates, "checked": p.checked, "pairs": p.pairs,
            "clusters": len(p.clusters) - skipped, "merged": merged_n, "vetoed": len(p.vetoes),
            "skipped": skipped, "fts": fts, "merger": params.merger,
            "seconds": round(time.monotonic() - started, 3),
        }
        if merger is not None:
            current.summary.update(llm_calls=merger.calls, llm_retries=merger.retries,
                                   llm_fallbacks=merger.fallbacks)
        summary = {"event": "summary", "job": "consolidate",
                   "run_id": None if dry_run else current.id,
                   "dry_run": dry_run, **current.summary}
    on_event(summary)
    return summary
