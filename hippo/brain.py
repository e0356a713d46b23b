"""The Brain store: curated memories. Its SQL as named constants, and the operations on it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo import audit
from hippo.errors import NotFoundError, UsageError
from hippo.records import NewMemory, to_record
from hippo.timeutil import epoch, now_iso
from hippo.vectors import content_hash, to_blob

if TYPE_CHECKING:
    import numpy as np

    from hippo.store.sqlite.database import Database

COLUMNS = (
    "id, text, type, tier, project, tags, importance, author, status, pinned, canonical, "
    "confidence, created_at, updated_at, confirmed_at, verified_at, consolidated_into, "
    "superseded_by, source"
)
GET = f"SELECT {COLUMNS} FROM memories WHERE id = ?"
FIND_SAME = (
    f"SELECT {COLUMNS} FROM memories WHERE dedup_key = ? AND status IN ('active', 'done') "
    "ORDER BY id LIMIT 1"
)
INSERT = (
    "INSERT INTO memories(id, text, type, tier, project, tags, importance, author, status, "
    "pinned, canonical, confidence, created_at, updated_at, confirmed_at, verified_at, "
    "consolidated_into, superseded_by, source, dedup_key, content_hash) "
    "VALUES (:id, :text, :type, :tier, :project, :tags, :importance, :author, :status, "
    ":pinned, :canonical, :confidence, :created_at, :updated_at, :confirmed_at, :verified_at, "
    ":consolidated_into, :superseded_by, :source, :dedup_key, :content_hash)"
)
VEC_UPSERT_DEL = "DELETE FROM memories_vec WHERE memory_id = ?"
VEC_INSERT = (
    "INSERT INTO memories_vec(memory_id, embedding, project, type, tier, created) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
EXPORT = f"SELECT {COLUMNS} FROM memories ORDER BY id"
# Cache rows of these hashes (a JSON list, three times) that no stored text still has.
DROP_CACHED = (
    "DELETE FROM embed_cache WHERE content_hash IN (SELECT value FROM json_each(?)) "
    "AND content_hash NOT IN (SELECT content_hash FROM memories WHERE content_hash IN "
    "(SELECT value FROM json_each(?))) AND content_hash NOT IN (SELECT content_hash FROM "
    "echo_chunks WHERE content_hash IN (SELECT value FROM json_each(?)))"
)
SOURCES = (
    "SELECT s.chunk_id, c.session_id, e.session_key, c.source_path, c.line_start, c.line_end, "
    "c.started_at, c.text FROM memory_sources s LEFT JOIN echo_chunks c ON c.id = s.chunk_id "
    "LEFT JOIN echo_sessions e ON e.id = c.session_id WHERE s.memory_id = ? ORDER BY s.chunk_id"
)


def _json(value: Any) -> str | None:
    import orjson

    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def get(db: Database, memory_id: int) -> dict[str, Any]:
    row = db.row(GET, (memory_id,))
    if row is None:
        raise NotFoundError(f"no memory with id {memory_id}")
    return to_record(row)


def vec_put(db: Database, memory_id: int, rec: dict[str, Any], vector: np.ndarray) -> None:
    """(Re)place a memory's vector; only active memories are in vector matching."""
    db.execute(VEC_UPSERT_DEL, (memory_id,))
    db.execute(VEC_INSERT, (memory_id, to_blob(vector), rec["project"] or "", rec["type"],
                            rec["tier"], epoch(rec["created_at"])))


def vec_drop(db: Database, memory_id: int) -> None:
    db.execute(VEC_UPSERT_DEL, (memory_id,))


def insert(db: Database, mem: NewMemory, vector: np.ndarray | None, *, actor: str,
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
    }
    if mem.id is not None and db.scalar("SELECT 1 FROM memories WHERE id = ?", (mem.id,)):
        raise UsageError(f"a memory with id {mem.id} already exists")
    db.execute(INSERT, params)
    new_id = mem.id if mem.id is not None else db.conn.last_insert_rowid()
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


def reinforce(db: Database, existing: dict[str, Any], mem: NewMemory, *, actor: str,
              run_id: str | None = None) -> dict[str, Any]:
    """The same statement seen again: confirm it, raise confidence, keep the richer fields."""
    stamp = now_iso()
    tags = sorted(set(existing["tags"]) | set(mem.tags))
    confidence = round(existing["confidence"] + (1.0 - existing["confidence"]) * 0.2, 6)
    db.execute(
        "UPDATE memories SET confirmed_at = ?, updated_at = ?, confidence = ?, importance = ?, "
        "tags = ?, source = ? WHERE id = ?",
        (stamp, stamp, confidence, max(existing["importance"], mem.importance), _json(tags),
         _json(merge_source(existing["source"], mem.source)), existing["id"]),
    )
    after = get(db, existing["id"])
    audit.log(db, existing["id"], "reinforce", actor=actor, before=existing, after=after,
              run_id=run_id, at=stamp)
    return after


def find_same(db: Database, mem: NewMemory) -> dict[str, Any] | None:
    row = db.row(FIND_SAME, (mem.dedup_key,))
    return to_record(row) if row else None


@dataclass(slots=True)
class Change:
    """Outcome of writing one input record."""

    action: str  # "added" | "reinforced"
    record: dict[str, Any]


def add_many(db: Database, mems: Sequence[NewMemory], vectors: np.ndarray, *, actor: str,
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


def _redacted(db: Database, text: str) -> str:
    """The redaction choke point for changed text (`edit --text`, merges, undo): `text` with
    its secrets masked. Callers mask before they embed; if one did not, the cache rows of
    the raw text (whose token ids spell it out) are dropped here."""
    from hippo.redact import redact_text

    clean = redact_text(text)
    if clean != text:
        drop_cached(db, [text])
    return clean


def drop_cached(db: Database, texts: Sequence[str]) -> int:
    """Erase the embed cache rows (sentence vectors and token matrices) of `texts` that no
    memory and no Echo chunk still holds; returns how many rows went."""
    import orjson

    hashes = orjson.dumps(sorted({content_hash(t) for t in texts if t})).decode()
    if hashes == "[]":
        return 0
    db.execute(DROP_CACHED, (hashes, hashes, hashes))
    return int(db.conn.changes())


def update(db: Database, memory_id: int, changes: dict[str, Any], *, actor: str, action: str,
           run_id: str | None = None, vector: np.ndarray | None = None) -> dict[str, Any]:
    """Change columns of one memory, keep vec0 in step with its status, and audit it."""
    before = get(db, memory_id)
    if not changes:
        return before
    allowed = {"text", "type", "tier", "project", "tags", "importance", "status", "pinned",
               "canonical", "confidence", "confirmed_at", "verified_at", "consolidated_into",
               "superseded_by", "source", "author"}
    bad = set(changes) - allowed
    if bad:
        raise UsageError(f"cannot change {min(bad)}")
    if "text" in changes:
        changes = {**changes, "text": _redacted(db, changes["text"])}
    stamp = now_iso()
    values = dict(changes)
    for key in ("tags", "source"):
        if key in values:
            values[key] = _json(values[key]) if values[key] is not None else (
                "[]" if key == "tags" else None)
    for key in ("pinned", "canonical"):
        if key in values:
            values[key] = int(bool(values[key]))
    sets = ", ".join(f"{k} = :{k}" for k in values)  # keys come from `allowed`, never input
    values.update(id=memory_id, updated_at=stamp)
    if "text" in changes or "type" in changes or "project" in changes:
        after_text = changes.get("text", before["text"])
        from hippo.records import dedup_key

        values["dedup_key"] = dedup_key(changes.get("type", before["type"]),
                                        changes.get("project", before["project"]), after_text)
        values["content_hash"] = content_hash(after_text)
        sets += ", dedup_key = :dedup_key, content_hash = :content_hash"
    db.execute(f"UPDATE memories SET {sets}, updated_at = :updated_at WHERE id = :id", values)
    after = get(db, memory_id)
    if after["status"] != "active":
        vec_drop(db, memory_id)
    elif vector is not None:
        vec_put(db, memory_id, after, vector)
    elif any(k in changes for k in ("project", "type", "tier", "status")):
        blob = db.scalar("SELECT embedding FROM memories_vec WHERE memory_id = ?", (memory_id,))
        if blob is not None:
            from hippo.vectors import from_blob

            vec_put(db, memory_id, after, from_blob(blob))
    audit.log(db, memory_id, action, actor=actor, before=before, after=after, run_id=run_id,
              at=stamp)
    return after


def purge(db: Database, memory_id: int, *, actor: str) -> dict[str, Any]:
    """Hard forget: the text, tags, provenance, vector and audit text are erased, and so is
    every cache row of every text the memory ever had (its audit holds the texts before an
    `edit --text`): sentence vectors and token matrices, whose ids spell the text out.

    Freed pages are zeroed (`secure_delete`), the FTS index drops the terms at once (its
    'secure-delete' option, migration 0006) and is merged; the caller checkpoints the WAL
    after committing (`Database.checkpoint`), so no old page stays in `-wal` either.
    """
    before = get(db, memory_id)
    texts = [before["text"], *_audited_texts(db, memory_id)]
    db.execute("PRAGMA secure_delete = ON")
    vec_drop(db, memory_id)
    db.execute(
        "UPDATE memories SET text = '', tags = '[]', source = NULL, status = 'deleted', "
        "dedup_key = ?, content_hash = '', updated_at = ? WHERE id = ?",
        (f"purged:{memory_id}", now_iso(), memory_id),
    )
    db.execute("DELETE FROM memory_sources WHERE memory_id = ?", (memory_id,))
    db.execute(audit.PURGE_TEXT, (memory_id,))
    drop_cached(db, texts)
    db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
    audit.log(db, memory_id, "purge", actor=actor)
    return get(db, memory_id)


def _audited_texts(db: Database, memory_id: int) -> set[str]:
    """Every text the audit records for this memory (before and after each change)."""
    texts: set[str] = set()
    for entry in audit.history(db, memory_id):
        for rec in (entry["before"], entry["after"]):
            if isinstance(rec, dict) and isinstance(rec.get("text"), str):
                texts.add(rec["text"])
    return texts


def active_elsewhere(db: Database, project: str | None) -> int:
    """Active memories outside the default scope of `project` (it and the global ones): the
    "they are in other projects" hint of a search that found nothing (CLI and MCP)."""
    return int(db.scalar("SELECT count(*) FROM memories WHERE status = 'active' AND project "
                         "IS NOT NULL AND project IS NOT ?", (project,)) or 0)


def sources(db: Database, memory_id: int) -> list[dict[str, Any]]:
    return db.rows(SOURCES, (memory_id,))


def listing(db: Database, *, types: Sequence[str] = (), tiers: Sequence[str] = (),
            projects: Sequence[str | None] | None = None, statuses: Sequence[str] = ("active",),
            since: str | None = None, tags: Sequence[str] = (), limit: int = 0,
            order: str = "id DESC", unverified: bool = False) -> list[dict[str, Any]]:
    """Memories matching the filters (all bound parameters; `order` is chosen by code).

    unverified: only current machine-written rules and preferences no person has verified
    or pinned, the ones the rule floor holds back (`hippo.layers.floor.UNVERIFIED`).
    """
    where, params = filters_sql(types=types, tiers=tiers, projects=projects, statuses=statuses,
                                since=since, tags=tags)
    if unverified:
        from hippo.layers.floor import UNVERIFIED

        where += f" AND m.superseded_by IS NULL AND {UNVERIFIED}"
    sql = f"SELECT {COLUMNS} FROM memories m WHERE {where} ORDER BY {order}"
    if limit:
        sql += " LIMIT ?"
        params.append(limit)
    return [to_record(r) for r in db.rows(sql, params)]


def filters_sql(*, types: Sequence[str] = (), tiers: Sequence[str] = (),
                projects: Sequence[str | None] | None = None, statuses: Sequence[str] = (),
                since: str | None = None, until: str | None = None,
                tags: Sequence[str] = (), alias: str = "m") -> tuple[str, list[Any]]:
    """A WHERE clause over `memories` (alias m) for the common filters."""
    parts: list[str] = ["1"]
    params: list[Any] = []

    def among(column: str, values: Sequence[Any]) -> None:
        parts.append(f"{alias}.{column} IN ({','.join('?' * len(values))})")
        params.extend(values)

    if statuses:
        among("status", list(statuses))
    if types:
        among("type", list(types))
    if tiers:
        among("tier", list(tiers))
    if projects is not None:
        named = [p for p in projects if p is not None]
        clause = []
        if named:
            clause.append(f"{alias}.project IN ({','.join('?' * len(named))})")
            params.extend(named)
        if any(p is None for p in projects):
            clause.append(f"{alias}.project IS NULL")
        parts.append("(" + (" OR ".join(clause) or "0") + ")")
    if since:
        parts.append(f"{alias}.created_at >= ?")
        params.append(since)
    if until:
        parts.append(f"{alias}.created_at <= ?")
        params.append(until)
    for tag in tags:
        parts.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)")
        params.append(tag.lower())
    return " AND ".join(parts), params


def export_rows(db: Database) -> Any:
    import apsw

    cur = db.execute(EXPORT)
    try:
        names = [d[0] for d in cur.getdescription()]
    except apsw.ExecutionCompleteError:  # no memories at all: nothing to export
        return
    for row in cur:
        yield to_record(dict(zip(names, row)))


# -- exact restores and provenance links (used by `hippo undo` and consolidation) -------
RESTORE = (
    "UPDATE memories SET text = :text, type = :type, tier = :tier, project = :project, "
    "tags = :tags, importance = :importance, author = :author, status = :status, "
    "pinned = :pinned, canonical = :canonical, confidence = :confidence, "
    "created_at = :created_at, updated_at = :updated_at, confirmed_at = :confirmed_at, "
    "verified_at = :verified_at, consolidated_into = :consolidated_into, "
    "superseded_by = :superseded_by, source = :source, "
    "dedup_key = :dedup_key, content_hash = :content_hash WHERE id = :id"
)
DELETE_ROW = "DELETE FROM memories WHERE id = ?"
CHUNK_IDS = "SELECT chunk_id FROM memory_sources WHERE memory_id = ? ORDER BY chunk_id"
LINK = "INSERT OR IGNORE INTO memory_sources(memory_id, chunk_id, added_at) VALUES (?, ?, ?)"
UNLINK = "DELETE FROM memory_sources WHERE memory_id = ? AND chunk_id = ?"


def restore(db: Database, rec: dict[str, Any], vector: np.ndarray | None, *, actor: str,
            action: str, run_id: str | None = None) -> dict[str, Any]:
    """Write a SPEC record back exactly (timestamps included); vec0 follows its status."""
    from hippo.records import dedup_key

    before = get(db, rec["id"])
    rec = {**rec, "text": _redacted(db, rec["text"])}
    params = {k: rec[k] for k in ("id", "text", "type", "tier", "project", "importance",
                                  "author", "status", "confidence", "created_at", "updated_at",
                                  "confirmed_at", "consolidated_into", "superseded_by")}
    # An audit record written before `verified_at` existed does not carry it: keep the
    # current value (a verification is a person's, no run's to undo).
    params["verified_at"] = rec.get("verified_at", before["verified_at"])
    params.update(tags=_json(rec["tags"]) or "[]", source=_json(rec["source"]),
                  pinned=int(rec["pinned"]), canonical=int(rec["canonical"]),
                  dedup_key=dedup_key(rec["type"], rec["project"], rec["text"]),
                  content_hash=content_hash(rec["text"]))
    db.execute(RESTORE, params)
    after = get(db, rec["id"])
    if after["status"] != "active":
        vec_drop(db, rec["id"])
    elif vector is not None:
        vec_put(db, rec["id"], after, vector)
    else:
        blob = db.scalar("SELECT embedding FROM memories_vec WHERE memory_id = ?", (rec["id"],))
        if blob is not None:
            from hippo.vectors import from_blob

            vec_put(db, rec["id"], after, from_blob(blob))
    audit.log(db, rec["id"], action, actor=actor, before=before, after=after, run_id=run_id)
    return after


def delete_row(db: Database, memory_id: int, *, actor: str, action: str,
               run_id: str | None = None) -> None:
    """Remove a row entirely (undoing its creation); the audit keeps what it was."""
    before = get(db, memory_id)
    vec_drop(db, memory_id)
    db.execute(DELETE_ROW, (memory_id,))
    audit.log(db, memory_id, action, actor=actor, before=before, run_id=run_id)


def chunk_ids(db: Database, memory_id: int) -> list[int]:
    return [r[0] for r in db.execute(CHUNK_IDS, (memory_id,))]


def link(db: Database, memory_id: int, chunks: Sequence[int], *, actor: str,
         run_id: str | None = None, add: bool = True) -> None:
    """Add (or with add=False remove) provenance links, audited as `link`/`unlink`."""
    if not chunks:
        return
    stamp = now_iso()
    for chunk in chunks:
        db.execute(LINK if add else UNLINK,
                   (memory_id, chunk, stamp) if add else (memory_id, chunk))
    audit.log(db, memory_id, "link" if add else "unlink", actor=actor, run_id=run_id, at=stamp,
              **({"after": {"chunks": list(chunks)}} if add
                 else {"before": {"chunks": list(chunks)}}))


# -- provenance whose transcript is gone (`echo --forget-session`, a re-read file) ------
LINKED_TO = ("SELECT DISTINCT memory_id FROM memory_sources WHERE chunk_id IN "
             "(SELECT value FROM json_each(?)) ORDER BY memory_id")
CITING_SESSION = ("SELECT id FROM memories WHERE source IS NOT NULL AND json_valid(source) "
                  "AND EXISTS (SELECT 1 FROM json_each(source, '$.session') WHERE value = ?) "
                  "ORDER BY id")


def detach_chunks(db: Database, chunks: Sequence[int], *, forgotten_session: str | None = None,
                  actor: str = "human", run_id: str | None = None) -> list[int]:
    """Before Echo chunks are deleted: remove the provenance links to them (audited) and
    drop their ids from each citing memory's `source`. With `forgotten_session`, every
    memory whose `source` names that session also records it in `source.forgotten` (the
    memory stays: Brain is curated apart from Echo; `hippo forget ID` erases it). Returns
    the ids of the memories changed, in order."""
    import orjson

    gone = set(chunks)
    ids = {r[0] for r in db.execute(LINKED_TO, (orjson.dumps(sorted(gone)).decode(),))}
    if forgotten_session is not None:
        ids |= {r[0] for r in db.execute(CITING_SESSION, (forgotten_session,))}
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
