"""`hippo extract`: feed Echo chunks past the watermark to an extractor, session by session.

New chunks are read in id order and cut into segments: consecutive chunks of one session
(what one ingest added to it). Each segment is one transaction: its memories, provenance
links and the watermark (`meta` key `extract.last_chunk_id`) move together, so a re-run
never repeats work and a killed run never skips any. The extractor runs before that
transaction opens (a model call never holds the write lock); a session it skips still
advances the watermark and is reported (re-extract it with `--session KEY`). An error
that stops the run (spend cap, open circuit, provider down) leaves the session in progress
unwritten and the watermark before it. A dry run writes inside a transaction it rolls
back, so it reports exactly what would happen (one transaction for the whole run with a
local extractor; per session with a remote one, whose guard counters must persist).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from hippo.errors import HippoError, NotFoundError, UsageError
from hippo.extract import supersede
from hippo.extract.base import (
    PENDING_TAG,
    Candidate,
    EchoChunk,
    Extractor,
    SessionChunks,
    SkipSession,
)
from hippo.extract.write import ACTOR, Outcome, write
from hippo.maintain.common import failpoint
from hippo.memory import brain, validity
from hippo.timeutil import now_iso

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.extract.settings import ExtractSettings
    from hippo.memory.records import NewMemory

WATERMARK = "extract.last_chunk_id"

Emit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Segment:
    session_id: int
    first: int
    last: int
    count: int


class _Rollback(Exception):
    """Raised inside a dry run's transaction to discard what it wrote."""


def watermark(h: Hippo) -> int:
    value = h.db.meta.get(WATERMARK)
    return int(value) if value is not None else 0


def segments(h: Hippo, after: int) -> list[Segment]:
    """Runs of consecutive new chunks of the same session, in id order."""
    out: list[Segment] = []
    for row in h.db.chunks.after(after):
        cid, sid = int(row["id"]), int(row["session_id"])
        if out and out[-1].session_id == sid:
            last = out[-1]
            out[-1] = Segment(sid, last.first, cid, last.count + 1)
        else:
            out.append(Segment(sid, cid, cid, 1))
    return out


def session_segment(h: Hippo, key: str) -> Segment:
    sid = h.db.chunks.session_id(key)
    if sid is None:
        raise NotFoundError(f"no Echo session {key!r}; `hippo echo` or `hippo stats` lists them")
    first, last = h.db.chunks.session_span(sid)
    if first is None or last is None:
        raise UsageError(f"session {key!r} has no chunks to extract")
    return Segment(int(sid), int(first), int(last), 0)


#: Chunks of the session before a new segment that extraction reads as context, at most,
#: looked for among the `CONTEXT_SPAN` chunk ids before it (other sessions' are between).
CONTEXT_CHUNKS = 24
CONTEXT_SPAN = 400


def load(h: Hippo, seg: Segment) -> SessionChunks:
    s = h.db.chunks.session(seg.session_id)
    assert s is not None

    def chunk(r: Any) -> EchoChunk:
        return EchoChunk(r["id"], r["seq"], r["source_path"],
                         tuple(r["roles"].split(",")) if r["roles"] else (),
                         r["line_start"], r["line_end"], tuple(orjson.loads(r["message_ids"])),
                         r["started_at"], r["text"])

    chunks = [chunk(r) for r in h.db.chunks.segment(seg.session_id, seg.first, seg.last)]
    before = [chunk(r) for r in h.db.chunks.segment(
        seg.session_id, max(0, seg.first - CONTEXT_SPAN), seg.first - 1)][-CONTEXT_CHUNKS:]
    return SessionChunks(s["id"], s["session_key"], s["project"], s["format"], s["started_at"],
                         chunks, s["parent_key"], before)


def provenance(session: SessionChunks, evidence: list[int], extractor: str) -> dict[str, Any]:
    """`source` of a memory: its chunks, the session, and the file and line span they cover."""
    by_id = {c.id: c for c in (*session.before, *session.chunks)}
    shown = [by_id[e] for e in evidence if e in by_id]
    out: dict[str, Any] = {"chunks": [c.id for c in shown], "session": session.key,
                           "extractor": extractor}
    if shown:
        path = shown[0].source_path
        same = [c for c in shown if c.source_path == path]
        starts = [c.line_start for c in same if c.line_start is not None]
        ends = [c.line_end for c in same if c.line_end is not None]
        out["file"] = path
        if starts and ends:
            out["lines"] = [min(starts), max(ends)]
    return out


def to_memory(h: Hippo, c: Candidate, session: SessionChunks, extractor: str) -> NewMemory:
    from hippo.memory.records import from_input

    return from_input({"text": c.text, "type": c.type, "tags": c.tags,
                       "importance": round(min(max(c.importance, 0.0), 1.0), 3),
                       "confidence": round(min(max(c.confidence, 0.0), 1.0), 3),
                       "project": session.project, "author": "machine",
                       "source": provenance(session, c.evidence, extractor)},
                      h.types, default_project=session.project, default_author="machine")


class Extraction:
    """One `hippo extract` run."""

    def __init__(self, h: Hippo, extractor: Extractor, conf: ExtractSettings, *,
                 run_id: str | None, dry_run: bool = False) -> None:
        self.h = h
        self.extractor = extractor
        self.conf = conf
        self.run_id = run_id
        self.dry_run = dry_run
        self.totals: Counter[str] = Counter()
        self.summary: dict[str, Any] = {}
        self._outer = False
        self._would_add: set[int] = set()  # dry run: ids of memories it would have added

    def plan(self, session_key: str | None = None) -> list[Segment]:
        if session_key:
            return [session_segment(self.h, session_key)]
        return segments(self.h, watermark(self.h))

    def run(self, plan: list[Segment], emit: Emit, advance: Callable[[], None] = lambda: None,
            *, move_watermark: bool = True) -> dict[str, Any]:
        """Extract every segment; a HippoError that stops the run is re-raised after the
        summary is filled in (`summary["stopped"]`)."""
        self.summary = {"event": "summary", "extractor": self.extractor.name}
        try:
            if self.dry_run and not self.extractor.remote:
                # Nothing leaves the machine: one transaction over the whole run, rolled
                # back, so later sessions see what earlier ones would have written.
                self._outer = True
                try:
                    with self.h.db.transaction():
                        self._all(plan, emit, advance, move_watermark)
                        raise _Rollback
                except _Rollback:
                    pass
            else:
                self._all(plan, emit, advance, move_watermark)
        except HippoError as exc:
            self.summary["stopped"] = str(exc)
            raise
        finally:
            self.summary.update(self._figures())
        return self.summary

    def _all(self, plan: list[Segment], emit: Emit, advance: Callable[[], None],
             move_watermark: bool) -> None:
        for seg in plan:
            self.segment(seg, emit, move_watermark)
            advance()

    def _figures(self) -> dict[str, Any]:
        t = self.totals
        out = {k: t[k] for k in ("sessions", "sessions_skipped", "chunks", "candidates",
                                 "added", "reinforced", "linked", "skipped", "done",
                                 "superseded")}
        out["watermark"] = watermark(self.h)
        out["dry_run"] = self.dry_run
        for key in ("calls", "retries"):
            if hasattr(self.extractor, key):
                out[f"llm_{key}"] = getattr(self.extractor, key)
        return out

    def segment(self, seg: Segment, emit: Emit, move_watermark: bool) -> None:
        session = load(self.h, seg)
        base = {"session": session.key, "project": session.project,
                "chunks": len(session.chunks), "first_chunk": seg.first, "last_chunk": seg.last}
        try:
            found = self.extractor.extract(session)
        except SkipSession as exc:
            self.totals.update(sessions=1, sessions_skipped=1, chunks=len(session.chunks))
            if move_watermark and not self.dry_run:
                with self.h.db.transaction():
                    self._advance(seg)
            emit({"event": "session", **base, "status": "skipped", "reason": str(exc)})
            return
        events, counts = self._store(session, seg, found, move_watermark)
        for ev in events:
            emit(ev)
        self.totals.update(sessions=1, chunks=len(session.chunks), candidates=len(found),
                           **counts)
        emit({"event": "session", **base, "status": "extracted", "candidates": len(found),
              **{k: counts[k] for k in ("added", "reinforced", "linked", "skipped", "done",
                                        "superseded")}})

    def _hide_added(self, ev: dict[str, Any]) -> dict[str, Any]:
        """A dry run's done/superseded event without the ids of memories it only would add."""
        if ev["by"] in self._would_add:
            ev.update(by=None, reason=ev["reason"].replace(f"memory {ev['by']}",
                                                           "a memory this run would add"))
        if ev["id"] in self._would_add:
            ev["id"] = None
        return ev

    def _hide_rolled_back(self, out: Outcome, ev: dict[str, Any]) -> None:
        """A dry run's ids of memories it only would have added mean nothing: hide them."""
        if out.action == "add" and out.memory_id is not None:
            self._would_add.add(out.memory_id)
            ev["id"] = None
        elif out.match is not None and out.match in self._would_add:
            ev.update(id=None, match=None, reason=ev.get("reason")
                      or "repeats a memory this run would add")

    def _listed_no_more(self, session: SessionChunks, kept: set[int]) -> list[int]:
        """Active pending tasks an earlier summary of this session listed (written by this
        extractor) that its newest summary, whose tasks are `kept`, no longer lists: done,
        or dropped by the agent."""
        out = []
        for row in self.h.db.memories.pending_tasks(session.project, PENDING_TAG):
            source = orjson.loads(row["source"]) if row["source"] else {}
            sessions = source.get("session")
            keys = sessions if isinstance(sessions, list) else [sessions]
            if (row["id"] not in kept and session.key in keys
                    and source.get("extractor") == self.extractor.name):
                out.append(int(row["id"]))
        return out

    def _advance(self, seg: Segment) -> None:
        self.h.db.meta.set(WATERMARK, str(max(seg.last, watermark(self.h))))

    def _store(self, session: SessionChunks, seg: Segment, found: list[Candidate],
               move_watermark: bool) -> tuple[list[dict[str, Any]], Counter[str]]:
        db = self.h.db
        found, older = supersede.with_older_gates(self.h, session, found)
        mems = [to_memory(self.h, c, session, self.extractor.name) for c in found]
        for i, source in older.items():  # a gate with an older gate's checks cites it too,
            # and holds from when this session said it
            mems[i].valid_from = validity.valid_from(self.h.db, mems[i], now_iso())
            mems[i].source = brain.merge_source(source, mems[i].source)
        vectors = self.h.embed([m.text for m in mems]) if mems and not self.dry_run else None
        events: list[dict[str, Any]] = []
        counts: Counter[str] = Counter(added=0, reinforced=0, linked=0, skipped=0, done=0,
                                       superseded=0)
        plural = {"add": "added", "reinforce": "reinforced", "link": "linked", "skip": "skipped"}
        try:
            with db.transaction():
                if vectors is None and mems:
                    vectors = self.h.embed([m.text for m in mems])
                kept: set[int] = set()  # the newest summary's pending tasks, as stored
                stored_ids: list[int | None] = []
                for mem, vec, cand in zip(mems, vectors if vectors is not None else [], found):
                    out = write(db, mem, vec, list(mem.source["chunks"]) if mem.source else [],
                                threshold=self.conf.similarity, run_id=self.run_id)
                    stored = out.memory_id or out.match
                    stored_ids.append(stored)
                    if PENDING_TAG in cand.tags and stored is not None:
                        kept.add(stored)
                    counts[plural[out.action]] += 1
                    ev = {"event": "memory", **out.fields(), "type": mem.type, "text": mem.text,
                          "project": mem.project, "session": session.key,
                          "importance": mem.importance, "chunks": cand.evidence}
                    if self.dry_run:
                        self._hide_rolled_back(out, ev)
                    events.append(ev)
                for ev in supersede.retire(self.h, session, found, stored_ids,
                                           run_id=self.run_id):
                    counts[ev["action"]] += 1
                    events.append(self._hide_added(ev) if self.dry_run else ev)
                if any("summary" in c.roles for c in session.chunks):
                    for mid in self._listed_no_more(session, kept):
                        brain.update(db, mid, {"status": "done"}, actor=ACTOR, action="done",
                                     run_id=self.run_id)
                        counts["done"] += 1
                        events.append({"event": "memory", "action": "done", "id": mid,
                                       "session": session.key,
                                       "reason": "the session's newest summary no longer "
                                                 "lists it"})
                failpoint("extract.txn")  # crash tests: SIGKILL before the commit
                if move_watermark:
                    self._advance(seg)
                if self.dry_run and not self._outer:
                    raise _Rollback
        except _Rollback:
            pass
        return events, counts
