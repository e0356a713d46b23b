"""The Brain: curated memories, and the operations on them (over `store.memories`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.embed.cache import content_hash, from_blob
from hippo.errors import NotFoundError, UsageError
from hippo.memory import audit, validity
from hippo.memory.records import NewMemory, to_record
from hippo.timeutil import epoch, now_iso

if TYPE_CHECKING:
    import numpy as np

    from hippo.store import Store


def _json(value: Any) -> str | None:
    import orjson

    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def get(db: Store, memory_id: int) -> dict[str, Any]:
    row = db.memories.get(memory_id)
    if row is None:
        raise NotFoundError(f"no memory with id {memory_id}")
    return to_record(row)


def vec_put(db: Store, memory_id: int, rec: dict[str, Any], vector: np.ndarray) -> None:
    """(Re)place a memory's vector; only active memories are in vector matching."""
    db.vectors.put(memory_id, vector, project=rec["project"] or "", type=rec["type"],
                    tier=rec["tier"], created=epoch(rec["created_at"]))


def vec_drop(db: Store, memory_id: int) -> None:
    db.vectors.drop(memory_id)


def insert(db: Store, mem: NewMemory, vector: np.ndarray | None, *, actor: str,
           run_id: str | None = None, action: str = "add") -> dict[str, Any]:
    """Insert exactly as given (ids and timestamps kept); vector only when active."""
    stamp = now_iso()
    created = mem.created_at or stamp
    params = {
        "id": mem.id, "text": mem.text, "type": mem.type, "tier": mem.tier,
        "project": mem.project, "tags": _json(mem.tags) or "[]", "importance": mem.importance,
        "author": mem.author, "status": mem.status, "pinned": int(mem.pinned),
        "canonical": int(mem.canonical), "confidence": mem.confidence, "created_at": created,
        "updated_at": mem.updated_at or created, "confirmed_at": mem.confirmed_at,
        "verified_at": mem.verified_at,
        "consolidated_into": mem.consolidated_into, "superseded_by": mem.superseded_by,
        "source": _json(mem.source), "dedup_key": mem.dedup_key,
        "content_hash": content_hash(mem.text),
        "valid_from": validity.valid_from(db, mem, created), "valid_to": validity.valid_to(mem),
    }
    if mem.id is not None and db.memories.exists(mem.id):
        raise UsageError(f"a memory with id {mem.id} already exists")
    new_id = db.memories.insert(params)
    rec = get(db, new_id)
    if vector is not None and rec["status"] == "active":
        vec_put(db, new_id, rec, vector)
    audit.log(db, new_id, action, actor=actor, after=rec, run_id=run_id, at=rec["created_at"])
    return rec


def merge_source(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any] | None:
    """Union two provenance objects: lists are concatenated without repeats."""
    if not new:
        return old
    if not old:
        return new
    out = dict(old)
    for key, value in new.items():
        prev = out.get(key)
        if isinstance(prev, list) or isinstance(value, list):
            items = (prev if isinstance(prev, list) else [prev] if prev is not None else [])
            for v in value if isinstance(value, list) else [value]:
                if v not in items:
                    items = [*items, v]
            out[key] = items
        elif prev is None:
            out[key] = value
        elif prev != value:
            out[key] = [prev, value]
    return out


def reinforce(db: Store, existing: dict[str, Any], mem: NewMemory, *, actor: str,
              run_id: str | None = None) -> dict[str, Any]:
    """The same statement seen again: confirm it, raise confidence, keep the richer fields."""
    stamp = now_iso()
    tags = sorted(set(existing["tags"]) | set(mem.tags))
    confidence = round(existing["confidence"] + (1.0 - existing["confidence"]) * 0.2, 6)
    db.memories.reinforce(existing["id"], stamp=stamp, confidence=confidence,
                          importance=max(existing["importance"], mem.importance),
                          tags=_json(tags) or "[]",
                          source=_json(merge_source(existing["source"], mem.source)))
    after = get(db, existing["id"])
    audit.log(db, existing["id"], "reinforce", actor=actor, before=existing, after=after,
              run_id=run_id, at=stamp)
    return after


def find_same(db: Store, mem: NewMemory) -> dict[str, Any] | None:
    row = db.memories.find_same(mem.dedup_key)
    return to_record(row) if row else None


@dataclass(slots=True)
class Change:
    """Outcome of writing one input record."""

    action: str  # "added" | "reinforced"
    record: dict[str, Any]


def add_many(db: Store, mems: Sequence[NewMemory], vectors: np.ndarray, *, actor: str,
             run_id: str | None = None) -> list[Change]:
    """Store or reinforce each memory, all in the caller's transaction."""
    out: list[Change] = []
    for mem, vec in zip(mems, vectors):
        same = find_same(db, mem)
        if same is not None and (mem.id is None or mem.id == same["id"]):
            out.append(Change("reinforced", reinforce(db, same, mem, actor=actor, run_id=run_id)))
        else:
            out.append(Change("added", insert(db, mem, vec, actor=actor, run_id=run_id)))
    return out


def _redacted(db: Store, text: str) -> str:
    """The redaction choke point for changed text (`edit --text`, merges, undo): `text` with
    its secrets masked. Callers mask before they embed; if one did not, the cache rows of
    the raw text (whose token ids spell it out) are dropped here."""
    from hippo.redact import redact_text

    clean = redact_text(text)
    if clean != text:
        drop_cached(db, [text])
    return clean


def drop_cached(db: Store, texts: Sequence[str]) -> int:
    """Erase the embed cache rows (sentence vectors and token matrices) of `texts` that no
    memory and no Echo chunk still holds; returns how many rows went."""
    hashes = sorted({content_hash(t) for t in texts if t})
    if not hashes:
        return 0
    return db.memories.drop_unused_cache(hashes)


# The columns a change may set.
CHANGEABLE = frozenset({
    "text", "type", "tier", "project", "tags", "importance", "status", "pinned", "canonical",
    "confidence", "confirmed_at", "verified_at", "consolidated_into", "superseded_by",
    "source", "author", "valid_from", "valid_to"})


def _column_values(changes: dict[str, Any]) -> dict[str, Any]:
    """Changed fields as stored: tags and source as JSON, flags as 0/1."""
    values = dict(changes)
    for key in ("tags", "source"):
        if key in values:
            values[key] = _json(values[key]) if values[key] is not None else (
                "[]" if key == "tags" else None)
    for key in ("pinned", "canonical"):
        if key in values:
            values[key] = int(bool(values[key]))
    return values


def _follow_vector(db: Store, memory_id: int, after: dict[str, Any],
                   vector: np.ndarray | None, moved: bool) -> None:
    """Keep vector matching in step: only active memories are in it, under their current
    project, type and tier (`moved`: one of those, or the status, changed)."""
    if after["status"] != "active":
        vec_drop(db, memory_id)
    elif vector is not None:
        vec_put(db, memory_id, after, vector)
    elif moved:
        stored = db.vectors.embeddings([memory_id]).get(memory_id)
        if stored is not None:
            vec_put(db, memory_id, after, from_blob(stored))


def update(db: Store, memory_id: int, changes: dict[str, Any], *, actor: str, action: str,
           run_id: str | None = None, vector: np.ndarray | None = None) -> dict[str, Any]:
    """Change columns of one memory, keep vec0 in step with its status, and audit it."""
    before = get(db, memory_id)
    if not changes:
        return before
    bad = set(changes) - CHANGEABLE
    if bad:
        raise UsageError(f"cannot change {min(bad)}")
    if "text" in changes:
        changes = {**changes, "text": _redacted(db, changes["text"])}
    if {"project", "tags", "source"} & set(changes):  # every stored string, not only text
        from hippo.memory.records import masked

        changes = {k: masked(v) if k in ("project", "tags", "source") else v
                   for k, v in changes.items()}
    stamp = now_iso()
    changes = validity.follow_supersede(before, changes, stamp)  # replaced now: valid_to
    values = _column_values(changes)
    if "text" in changes or "type" in changes or "project" in changes:
        after_text = changes.get("text", before["text"])
        from hippo.memory.records import dedup_key

        values["dedup_key"] = dedup_key(changes.get("type", before["type"]),
                                        changes.get("project", before["project"]), after_text)
        values["content_hash"] = content_hash(after_text)
    values["updated_at"] = stamp
    db.memories.update(memory_id, values)
    after = get(db, memory_id)
    _follow_vector(db, memory_id, after, vector,
                   any(k in changes for k in ("project", "type", "tier", "status")))
    audit.log(db, memory_id, action, actor=actor, before=before, after=after, run_id=run_id,
              at=stamp)
    return after


def purge(db: Store, memory_id: int, *, actor: str) -> dict[str, Any]:
    """Hard forget: the text, tags, provenance, vector and audit text are erased, and so is
    every cache row of every text the memory ever had (its audit holds the texts before an
    `edit --text`): sentence vectors and token matrices, whose ids spell the text out.

    Freed pages are zeroed (`secure_delete`), the FTS index drops the terms at once (its
    'secure-delete' option, migration 0006) and is merged; the caller checkpoints the WAL
    after committing (`Store.checkpoint`), so no old page stays in `-wal` either.
    """
    before = get(db, memory_id)
    texts = [before["text"], *_audited_texts(db, memory_id)]
    db.memories.erase(memory_id, now_iso())
    vec_drop(db, memory_id)  # after erase: its pages are zeroed too
    db.audit.erase_texts(memory_id)
    drop_cached(db, texts)
    db.lexical.compact("brain")
    audit.log(db, memory_id, "purge", actor=actor)
    return get(db, memory_id)


def _audited_texts(db: Store, memory_id: int) -> set[str]:
    """Every text the audit records for this memory (before and after each change)."""
    texts: set[str] = set()
    for entry in audit.history(db, memory_id):
        for rec in (entry["before"], entry["after"]):
            if isinstance(rec, dict) and isinstance(rec.get("text"), str):
                texts.add(rec["text"])
    return texts


def active_elsewhere(db: Store, project: str | None) -> int:
    """Active memories outside the default scope of `project` (it and the global ones): the
    "they are in other projects" hint of a search that found nothing (CLI and MCP)."""
    return db.memories.active_elsewhere(project)


def sources(db: Store, memory_id: int) -> list[dict[str, Any]]:
    return db.memories.sources(memory_id)


def listing(db: Store, *, types: Sequence[str] = (), tiers: Sequence[str] = (),
            projects: Sequence[str | None] | None = None, statuses: Sequence[str] = ("active",),
            since: str | None = None, tags: Sequence[str] = (), limit: int = 0,
            unverified: bool = False, as_of: str | None = None) -> list[dict[str, Any]]:
    """Memories matching the filters, newest first.

    unverified: only current machine-written rules and preferences no person has verified
    or pinned, the ones the rule floor holds back. as_of: only those valid then.
    """
    from hippo.store.filters import MemoryFilter

    where = MemoryFilter(statuses=tuple(statuses), types=tuple(types), tiers=tuple(tiers),
                         projects=None if projects is None else tuple(projects), since=since,
                         tags=tuple(tags), current=unverified, unverified=unverified,
                         as_of=as_of)
    return [to_record(r) for r in db.memories.listing(where, limit)]


def export_rows(db: Store) -> Iterator[dict[str, Any]]:
    for row in db.memories.export_rows():
        yield to_record(row)


# -- exact restores and provenance links (used by `hippo undo` and consolidation) -------
def restore(db: Store, rec: dict[str, Any], vector: np.ndarray | None, *, actor: str,
            action: str, run_id: str | None = None) -> dict[str, Any]:
    """Write a SPEC record back exactly (timestamps included); vec0 follows its status."""
    from hippo.memory.records import dedup_key

    before = get(db, rec["id"])
    rec = {**rec, "text": _redacted(db, rec["text"])}
    params = {k: rec[k] for k in ("id", "text", "type", "tier", "project", "importance",
                                  "author", "status", "confidence", "created_at", "updated_at",
                                  "confirmed_at", "consolidated_into", "superseded_by")}
    # An audit record written before `verified_at` existed does not carry it: keep the
    # current value (a verification is a person's, no run's to undo).
    params["verified_at"] = rec.get("verified_at", before["verified_at"])
    # Nor, before 0009, `valid_from` (keep it) or `valid_to` (it goes with `superseded_by`).
    params["valid_from"] = rec.get("valid_from", before["valid_from"])
    params["valid_to"] = rec["valid_to"] if "valid_to" in rec else (
        before["valid_to"] if rec["superseded_by"] is not None else None)
    params.update(tags=_json(rec["tags"]) or "[]", source=_json(rec["source"]),
                  pinned=int(rec["pinned"]), canonical=int(rec["canonical"]),
                  dedup_key=dedup_key(rec["type"], rec["project"], rec["text"]),
                  content_hash=content_hash(rec["text"]))
    db.memories.restore(params)
    after = get(db, rec["id"])
    _follow_vector(db, rec["id"], after, vector, True)
    audit.log(db, rec["id"], action, actor=actor, before=before, after=after, run_id=run_id)
    return after


def delete_row(db: Store, memory_id: int, *, actor: str, action: str,
               run_id: str | None = None) -> None:
    """Remove a row entirely (undoing its creation); the audit keeps what it was."""
    before = get(db, memory_id)
    vec_drop(db, memory_id)
    db.memories.delete(memory_id)
    audit.log(db, memory_id, action, actor=actor, before=before, run_id=run_id)


def chunk_ids(db: Store, memory_id: int) -> list[int]:
    return db.memories.chunk_ids(memory_id)


def link(db: Store, memory_id: int, chunks: Sequence[int], *, actor: str,
         run_id: str | None = None, add: bool = True) -> None:
    """Add (or with add=False remove) provenance links, audited as `link`/`unlink`."""
    if not chunks:
        return
    stamp = now_iso()
    for chunk in chunks:
        if add:
            db.memories.link(memory_id, chunk, stamp)
        else:
            db.memories.unlink(memory_id, chunk)
    audit.log(db, memory_id, "link" if add else "unlink", actor=actor, run_id=run_id, at=stamp,
              **({"after": {"chunks": list(chunks)}} if add
                 else {"before": {"chunks": list(chunks)}}))


# -- provenance whose transcript is gone (`echo --forget-session`, a re-read file) ------
def detach_chunks(db: Store, chunks: Sequence[int], *, forgotten_session: str | None = None,
                  actor: str = "human", run_id: str | None = None) -> list[int]:
    """Before Echo chunks are deleted: remove the provenance links to them (audited) and
    drop their ids from each citing memory's `source`. With `forgotten_session`, every
    memory whose `source` names that session also records it in `source.forgotten` (the
    memory stays: Brain is curated apart from Echo; `hippo forget ID` erases it). Returns
    the ids of the memories changed, in order."""
    gone = set(chunks)
    ids = set(db.memories.linked_to(gone))
    if forgotten_session is not None:
        ids |= set(db.memories.citing_session(forgotten_session))
    for mid in sorted(ids):
        link(db, mid, sorted(set(chunk_ids(db, mid)) & gone), actor=actor, run_id=run_id,
             add=False)
        rec = get(db, mid)
        source = dict(rec["source"] or {})
        if isinstance(source.get("chunks"), list):
            source["chunks"] = [c for c in source["chunks"] if c not in gone]
        if forgotten_session is not None:
            before = source.get("forgotten")
            keys = before if isinstance(before, list) else [before] if before else []
            source["forgotten"] = sorted({*keys, forgotten_session})
        if source != (rec["source"] or {}):
            update(db, mid, {"source": source}, actor=actor, action="provenance",
                   run_id=run_id)
    return sorted(ids)
