"""Write-time dedup: store an extracted memory, or strengthen the one it repeats.

A candidate that repeats a memory (same dedup key, or an ACTIVE memory of the same type and
project with cosine >= the threshold, found by vec0 KNN) does not become a copy. A state (a
test run's counts, a work tree) and a statement of change ("the port is now 9090") repeat
only word for word: near them in meaning is another branch's state, or the value they replace.
Otherwise:
- a human-authored match is never touched: the candidate is skipped ("covered by human
  memory N");
- a machine match seen in ANOTHER session is reinforced (confidence up, confirmed_at set,
  provenance and memory_sources rows appended);
- a machine match from the SAME session only gains the new provenance links (`link`): a
  session repeating itself is not independent evidence;
- chunks already linked to the match make the candidate a no-op (`skip`).
Every change is audited under the run id (so `hippo undo RUN` reverts an extraction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.embed.cache import to_blob
from hippo.memory import brain
from hippo.memory.records import to_record

if TYPE_CHECKING:
    import numpy as np

    from hippo.memory.records import NewMemory
    from hippo.store import Store

ACTOR = "extract"
NEIGHBOURS = 5


@dataclass(slots=True)
class Outcome:
    """What happened to one candidate."""

    action: str  # add | reinforce | link | skip
    memory_id: int | None = None
    match: int | None = None
    similarity: float | None = None
    reason: str | None = None

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "id": self.memory_id}
        if self.match is not None:
            out["match"] = self.match
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        if self.reason:
            out["reason"] = self.reason
        return out


def nearest(db: Store, mem: NewMemory, vector: np.ndarray,
            threshold: float) -> tuple[dict[str, Any], float] | None:
    """The most similar active memory of the same type and project at or above `threshold`."""
    if not db.vectors.has("brain"):
        return None
    for memory_id, distance in db.vectors.nearest(to_blob(vector), NEIGHBOURS, type=mem.type,
                                                  project=mem.project or ""):
        similarity = 1.0 - distance
        if similarity < threshold:
            break
        row = db.memories.current_active(memory_id)
        if row is not None:
            return to_record(row), similarity
    return None


def exact_only(mem: NewMemory) -> bool:
    """A state, a fix, a gate or a statement of change: a repeat only when word for word the
    same (a fix says its problem again: it is not that problem's repeat; a gate with one
    check more is the project's new gate)."""
    from hippo.extract.conversation import GATE_TAG
    from hippo.extract.evidence import STATE_TAG
    from hippo.extract.fixes import FIX_TAG
    from hippo.extract.values import change

    return bool({STATE_TAG, FIX_TAG, GATE_TAG} & set(mem.tags)) or change(mem.text) is not None


def _sessions(source: dict[str, Any] | None) -> list[Any]:
    value = (source or {}).get("session")
    return value if isinstance(value, list) else [value] if value is not None else []


def write(db: Store, mem: NewMemory, vector: np.ndarray, chunks: list[int], *,
          threshold: float, run_id: str | None) -> Outcome:
    """Store `mem` (with provenance links to `chunks`) or strengthen what it repeats."""
    match, similarity = brain.find_same(db, mem), 1.0
    if match is None and not exact_only(mem):
        near = nearest(db, mem, vector, threshold)
        if near is not None:
            match, similarity = near
    if match is None:
        rec = brain.insert(db, mem, vector, actor=ACTOR, run_id=run_id)
        brain.link(db, rec["id"], chunks, actor=ACTOR, run_id=run_id)
        return Outcome("add", rec["id"])
    mid = match["id"]
    if match["author"] == "human":
        return Outcome("skip", None, mid, similarity, f"covered by human memory {mid}")
    linked = set(brain.chunk_ids(db, mid))
    fresh = [c for c in chunks if c not in linked]
    if not fresh:
        return Outcome("skip", None, mid, similarity, f"already linked to memory {mid}")
    session = (mem.source or {}).get("session")
    if session is not None and session in _sessions(match["source"]):
        brain.update(db, mid, {"source": brain.merge_source(match["source"], mem.source)},
                     actor=ACTOR, action="provenance", run_id=run_id)
        brain.link(db, mid, fresh, actor=ACTOR, run_id=run_id)
        return Outcome("link", mid, mid, similarity)
    brain.reinforce(db, match, mem, actor=ACTOR, run_id=run_id)
    brain.link(db, mid, fresh, actor=ACTOR, run_id=run_id)
    return Outcome("reinforce", mid, mid, similarity)
