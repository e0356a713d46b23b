"""Moving a store: the Echo half of `hippo import`, and the provenance links an export implies.

`hippo export --store echo` writes each chunk as its record (`hippo.store.chunks.
EXPORT_FIELDS`); `hippo import` recognises such a line (it has `session` and `roles`) and
restores the chunk under its id, in its session (created on first sight), with its vector.
A memory's provenance links are not a field of its record: they are the chunks its
`source.chunks` names (`extract` writes both together; `echo --forget-session` drops
both), so an import links each imported memory to those of its chunks the store holds,
and each imported chunk to the memories already there that name it. Brain and Echo can
then come in either order, or in one stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.errors import UsageError
from hippo.store.chunks import EXPORT_FIELDS

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.store import Store

_TEXTS = ("session", "format", "source_path", "text")
_OPTIONAL_TEXTS = ("project", "started_at", "ended_at")
_LINES = ("line_start", "line_end")
_LISTS = ("roles", "message_ids")


@dataclass(slots=True)
class ChunkRecord:
    """An exported Echo chunk, checked."""

    id: int
    fields: dict[str, Any]


def is_chunk(obj: Mapping[str, Any]) -> bool:
    """Whether an exported line is an Echo chunk (a memory's record has neither key)."""
    return "session" in obj and "roles" in obj


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_fields(obj: Mapping[str, Any]) -> None:
    for name in _TEXTS:
        if not isinstance(obj.get(name), str) or (name == "session" and not obj[name]):
            raise UsageError(f"a chunk's {name!r} must be text")
    for name in _OPTIONAL_TEXTS:
        if obj.get(name) is not None and not isinstance(obj[name], str):
            raise UsageError(f"a chunk's {name!r} must be text or null")
    for name in _LINES:
        if obj.get(name) is not None and not _is_int(obj[name]):
            raise UsageError(f"a chunk's {name!r} must be an integer or null")
    for name in _LISTS:
        value = obj.get(name)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"a chunk's {name!r} must be a list of strings")


def chunk_record(obj: Mapping[str, Any]) -> ChunkRecord:
    """An exported chunk line, checked (a UsageError names what is wrong)."""
    from hippo.memory.records import MAX_ID

    unknown = [k for k in obj if k not in EXPORT_FIELDS]
    if unknown:
        raise UsageError(f"unknown chunk field {unknown[0]!r}; fields: {', '.join(EXPORT_FIELDS)}")
    if not _is_int(obj.get("id")) or not 0 < obj["id"] <= MAX_ID:
        raise UsageError("an exported chunk needs a positive integer \"id\"")
    _check_fields(obj)
    return ChunkRecord(obj["id"], {k: obj.get(k) for k in EXPORT_FIELDS if k != "id"})


def taken_chunks(db: Store, chunks: Iterable[ChunkRecord]) -> list[int]:
    """Ids of these chunks the store already holds, in order."""
    return db.chunks.held([c.id for c in chunks])


def prepare_chunks(h: Hippo, chunks: list[ChunkRecord]) -> list[Any]:
    """Each chunk's text through the redactor (as ingest's is), in id order, and their
    vectors (before the write transaction: the model does not hold the writer lock)."""
    from hippo.ingest.redact import redact

    chunks.sort(key=lambda c: c.id)
    for c in chunks:
        c.fields["text"] = redact(c.fields["text"])[0]
    return list(h.embed([c.fields["text"] for c in chunks], store="echo")) if chunks else []


def restore_chunks(db: Store, chunks: list[ChunkRecord], vectors: list[Any]) -> int:
    """Store each chunk (`prepare_chunks`) under its id, with its vector, inside the
    caller's transaction. Returns how many."""
    from hippo.embed.cache import to_blob
    from hippo.ingest.chunk import Chunk
    from hippo.timeutil import epoch

    sessions: dict[str, int] = {}
    for c, vec in zip(chunks, vectors):
        f = c.fields
        sid = sessions.get(f["session"])
        if sid is None:
            sid = sessions[f["session"]] = db.chunks.add_session(
                f["session"], fmt=f["format"], source_path=f["source_path"],
                project=f["project"], cwd=None, parent_key=None, agent=None,
                started_at=f["started_at"])
        db.chunks.put(c.id, sid, Chunk(f["text"], f["roles"], f["line_start"], f["line_end"],
                                       f["message_ids"], f["started_at"], f["ended_at"], None),
                      source_path=f["source_path"], project=f["project"])
        db.chunks.update_session(sid, messages=len(f["message_ids"]), ended_at=f["ended_at"],
                                 started_at=f["started_at"], cwd=None, project=f["project"],
                                 agent=None, parent_key=None)
        db.reindex.put_chunk_vector(c.id, to_blob(vec), f["project"] or "", sid,
                                    epoch(f["started_at"]))
    return len(chunks)


def _cited(source: Any) -> list[int]:
    chunks = source.get("chunks") if isinstance(source, dict) else None
    return [c for c in chunks if _is_int(c)] if isinstance(chunks, list) else []


def link_sources(db: Store, memory_ids: Iterable[int], chunk_ids: Iterable[int]) -> int:
    """Link each of `memory_ids` to the stored chunks its source names, and each memory
    that names one of `chunk_ids` to it (inside the caller's transaction). How many."""
    from hippo.memory import brain
    from hippo.timeutil import now_iso

    new_mems, new_chunks = set(memory_ids), set(chunk_ids)
    if not new_mems and not new_chunks:
        return 0
    pairs = [(rec["id"], c) for rec in brain.export_rows(db) for c in _cited(rec["source"])
             if rec["id"] in new_mems or c in new_chunks]
    held = set(db.chunks.held(sorted({c for _, c in pairs}))) if pairs else set()
    stamp = now_iso()
    linked = 0
    for mid, cid in pairs:
        if cid in held:
            db.memories.link(mid, cid, stamp)
            linked += 1
    return linked
