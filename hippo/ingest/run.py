"""`hippo ingest`: read finished sessions into Echo — idle gate, watermarks, tail resume.

Each file is one transaction (chunks, vectors, session, watermark together), so a killed run
leaves every file either ingested up to its watermark or untouched; a re-run converges.
"""

from __future__ import annotations

import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo.ingest import watermarks as wmarks
from hippo.maintain.common import failpoint
from hippo.store.watermarks import Watermark

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.ingest.model import Message, ReadResult
    from hippo.store import Store

DIR_PATTERNS = ("*.jsonl", "*.json", ".aider.chat.history.md", "*.aider.chat.history.md")
DEFAULT_LOCATIONS = ("~/.claude/projects", "~/.codex/sessions", "~/.gemini/tmp")
# Lines no reader can use: a `strict` run stores nothing of a file made only of these.
UNREADABLE = frozenset({"invalid utf-8", "malformed json", "not an object", "line too long"})
CHUNK_TOKENS = 256  # MiniLM reads 256 tokens; a longer chunk's tail would not be embedded
EMBED_STEP = 16  # chunks embedded per call while ingesting a file: the bar moves per step


@dataclass(slots=True)
class FileResult:
    """What happened to one file (printed as an `event: file` line)."""

    path: str
    status: str  # ingested | unchanged | deferred | skipped | reread
    format: str | None = None
    session: str | None = None
    messages: int = 0
    chunks: int = 0
    duplicates: int = 0
    redactions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    reason: str | None = None
    read_after: str | None = None  # deferred: when the file will have been idle long enough

    def event(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": "file", "path": self.path, "status": self.status}
        for key in ("format", "session", "reason", "read_after"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.status in ("ingested", "reread"):
            out.update(messages=self.messages, chunks=self.chunks, redactions=self.redactions,
                       duplicates=self.duplicates)
        if self.skipped:
            out["skipped"] = self.skipped
        return out


def discover(paths: Iterable[Path]) -> Iterator[Path]:
    """Files named directly, plus transcript-looking files under named directories."""
    seen: set[str] = set()
    for root in paths:
        if root.is_dir():
            found: set[Path] = set()
            for pattern in DIR_PATTERNS:
                found.update(root.rglob(pattern))
            candidates = sorted(found)
        else:
            candidates = [root]
        for p in candidates:
            key = os.path.abspath(p)
            if key not in seen:
                seen.add(key)
                yield Path(key)


def _moved(location: str) -> str:
    folder, leaf = location.rsplit("/", 1)
    var = {"~/.claude": "CLAUDE_CONFIG_DIR", "~/.codex": "CODEX_HOME"}.get(folder)
    base = os.environ.get(var) if var else None
    return os.path.join(base, leaf) if base else location


def default_paths(configured: list[str] | None) -> list[Path]:
    """The locations read when none are given; the clients' own variables move theirs
    ($CLAUDE_CONFIG_DIR/projects, $CODEX_HOME/sessions), as they move `hippo setup`'s."""
    locations = configured or [_moved(p) for p in DEFAULT_LOCATIONS]
    return [Path(p).expanduser() for p in locations if Path(p).expanduser().exists()]


def _file_problem(path: Path) -> tuple[os.stat_result | None, str | None]:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None, "dangling symlink" if path.is_symlink() else "not found"
    except PermissionError:
        return None, "permission denied"
    except OSError as exc:
        return None, f"cannot stat: {exc.strerror}"
    if stat.S_ISDIR(st.st_mode):
        return None, "is a directory"
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file"
    if not os.access(path, os.R_OK):
        return None, "permission denied"
    return st, None


def _session_key(res: ReadResult, path: Path) -> tuple[str, str | None]:
    s = res.session
    return (s.session_id or f"file:{path}"), s.parent_session_id


class Ingestor:
    """One ingest run over many files."""

    def __init__(self, h: Hippo, *, idle_minutes: float, fmt: str | None = None,
                 backstop: bool = False, now: float | None = None, strict: bool = False) -> None:
        self.h = h
        self.strict = strict  # a file without one readable message is skipped, not stored
        self.idle_s = idle_minutes * 60
        self.fmt = fmt
        self.backstop = backstop
        self.now = now if now is not None else time.time()
        self.marks = h.db.watermarks.all()
        self.totals: Counter[str] = Counter()  # so far: what an interrupted run has kept
        self._share = 0  # the bytes of the file being read: its part of the progress bar
        self._progress_to: Callable[[int], None] = lambda done: None

    def pending(self, path: Path) -> int:
        """Bytes of `path` past its watermark: what reading it costs (the progress unit)."""
        try:
            size = path.stat().st_size
        except OSError:
            return 0
        wm = self.marks.get(str(path))
        return size - wm.offset if wm and 0 <= wm.offset <= size else size

    def run(self, files: Iterable[Path], emit: Callable[[FileResult], None],
            advance: Callable[[int], None] = lambda n: None) -> dict[str, Any]:
        """Ingest each file; `advance(n)` as n more bytes are read and embedded."""
        totals = self.totals
        skipped: Counter[str] = Counter()
        for path in files:
            self._share = share = self.pending(path)
            given = 0

            def progress_to(done: int, share: int = share) -> None:
                nonlocal given
                n = min(done, share) - given
                if n > 0:
                    given += n
                    advance(n)

            self._progress_to = progress_to
            res = self.one(path)
            totals[res.status] += 1
            totals["messages"] += res.messages
            totals["chunks"] += res.chunks
            totals["redactions"] += res.redactions
            totals["duplicates"] += res.duplicates
            skipped.update(res.skipped)
            if res.reason and res.status == "skipped":  # a deferred file is not skipped
                skipped[res.reason] += 1
            if res.status != "unchanged":
                emit(res)
            progress_to(share)
        return {"event": "summary", "files": sum(totals[k] for k in (
                    "ingested", "reread", "unchanged", "deferred", "skipped")),
                "ingested": totals["ingested"] + totals["reread"],
                "unchanged": totals["unchanged"], "deferred": totals["deferred"],
                "skipped_files": totals["skipped"], "messages": totals["messages"],
                "chunks": totals["chunks"], "redactions": totals["redactions"],
                "duplicates": totals["duplicates"], "skipped": dict(sorted(skipped.items()))}

    def one(self, path: Path) -> FileResult:
        key = str(path)
        st, problem = _file_problem(path)
        if st is None:
            return FileResult(key, "skipped", reason=problem)
        wm = self.marks.get(key)
        if wm and wm.offset >= st.st_size == wm.size and (
            wm.mtime == st.st_mtime if not self.backstop else wmarks.still_same(path, wm, st.st_size)
        ):
            # The daily backstop also re-checks the head of files whose size and mtime look
            # unchanged (a restore or in-place rewrite can keep both).
            return FileResult(key, "unchanged")
        if self.now - st.st_mtime < self.idle_s:
            return _deferred(key, self.now - st.st_mtime, self.idle_s, st.st_mtime)
        if st.st_size == 0:
            return FileResult(key, "skipped", reason="empty file")
        try:
            return self._read(path, st, wm)
        except PermissionError:
            return FileResult(key, "skipped", reason="permission denied")
        except OSError as exc:
            return FileResult(key, "skipped", reason=f"read error: {exc.strerror}")

    def _read(self, path: Path, st: os.stat_result, wm: Watermark | None) -> FileResult:
        from hippo.ingest.readers import detect, get_reader, read_head

        key = str(path)
        reread = bool(wm) and not wmarks.still_same(path, wm, st.st_size)  # type: ignore[arg-type]
        start_offset, start_line = (0, 0) if (wm is None or reread) else (wm.offset, wm.line)
        if self.fmt:
            reader = get_reader(self.fmt)
        elif wm and wm.format and not reread:
            reader = get_reader(wm.format)
        else:
            reader = detect(path, read_head(path))
        res = reader.read(path, start_offset, start_line)
        out = FileResult(key, "reread" if reread else "ingested", format=reader.name)
        out.skipped = dict(Counter(s.reason for s in res.skipped))
        if self.strict and not res.messages and any(s.reason in UNREADABLE for s in res.skipped):
            out.status, out.reason = "skipped", f"not a readable {reader.name} transcript"
            return out
        self._store(path, st, res, out, reread)
        return out

    def _store(self, path: Path, st: os.stat_result, res: ReadResult, out: FileResult,
               reread: bool) -> None:
        from hippo.embed.tokens import count
        from hippo.ingest.chunk import chunk_messages
        from hippo.ingest.redact import redact
        from hippo.project import of_session

        db = self.h.db
        skey, parent = _session_key(res, path)
        out.session = skey
        # A worktree is usually gone by now: what hippo recorded of it, then its layout.
        project = of_session(db, res.session.cwd) if res.session.cwd else None
        # One file can hold several sessions (aider appends every session to one history).
        groups: dict[str, list[Message]] = {skey: []}
        for msg in res.messages:
            msg.text, n = redact(msg.text)
            out.redactions += n
            key = skey if not msg.session_id or msg.session_id == res.session.session_id \
                else msg.session_id
            groups.setdefault(key, []).append(msg)
        out.redactions += res.redactions
        planned = []
        for key, msgs in groups.items():
            if not reread:
                fresh = _not_stored(db, key, msgs)
                out.duplicates += len(msgs) - len(fresh)
                msgs = fresh
            chunks = chunk_messages(msgs, max_tokens=CHUNK_TOKENS, count_tokens=count)
            out.messages += len([m for m in msgs if m.kind != "summary"])
            out.chunks += len(chunks)
            planned.append((key, msgs, chunks))
        texts = [c.text for _, _, chunks in planned for c in chunks]
        vectors = self._embed(texts)
        head = wmarks.head_hash(path, res.end_offset) if res.end_offset else None
        complete = res.end_offset >= st.st_size
        with db.transaction():
            if vectors is not None:  # a reindex may have swapped the model since we embedded
                from hippo.embed.cache import check_model

                check_model(db, "echo", self.h.embedder("echo"))
            if reread:
                from hippo.ingest.forget import drop_file

                drop_file(db, str(path))
            offset, sid = 0, None
            for key, msgs, chunks in planned:
                if key != skey and not msgs:
                    continue
                first = key == skey
                started = (res.session.started_at if first else None) or _first_time(msgs)
                gid = db.chunks.add_session(key, fmt=res.session.format, source_path=str(path),
                                            project=project, cwd=res.session.cwd,
                                            parent_key=parent if first else None,
                                            agent=res.session.agent, started_at=started)
                sid = gid if first else sid
                if chunks:
                    part = vectors[offset: offset + len(chunks)] if vectors is not None else None
                    db.chunks.add(gid, chunks, [c.text for c in chunks], part,
                                  source_path=str(path), project=project)
                    offset += len(chunks)
                db.chunks.update_session(
                    gid, messages=len([m for m in msgs if m.kind != "summary"]),
                    ended_at=_last_time(msgs), started_at=started, cwd=res.session.cwd,
                    project=project, agent=res.session.agent,
                    parent_key=parent if first else None)
            mark = Watermark(str(path), res.end_offset, res.end_line, head, st.st_size,
                             st.st_mtime, res.session.format, sid, complete)
            db.watermarks.save(mark)
            failpoint("ingest.txn")  # crash and Ctrl-C tests: before the file's commit
        self.marks[str(path)] = mark

    def _embed(self, texts: list[str]) -> Any:
        """The chunks' vectors, a batch at a time, so the progress bar moves through a
        big session (embedding is most of an ingest's time)."""
        if not texts:
            return None
        import numpy as np

        parts = []
        for start in range(0, len(texts), EMBED_STEP):
            parts.append(self.h.embed(texts[start: start + EMBED_STEP], store="echo"))
            # The bar's share of this file, in proportion to the texts embedded so far.
            self._progress_to(self._share * (start + len(parts[-1])) // len(texts))
        return np.concatenate(parts)


def _deferred(key: str, idle_s: float, gate_s: float, mtime: float) -> FileResult:
    """A file written to too recently: the session may still be going on."""
    import datetime as dt

    from hippo.timeutil import iso

    when = dt.datetime.fromtimestamp(mtime + gate_s, dt.UTC)
    reason = (f"written {_ago(idle_s)} ago, read once idle {_ago(gate_s)} "
              f"(by a run after {when:%H:%M} UTC)")
    return FileResult(key, "deferred", reason=reason, read_after=iso(when))


def _ago(seconds: float) -> str:
    seconds = max(seconds, 0)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _not_stored(db: Store, key: str, msgs: list[Message]) -> list[Message]:
    """Drop messages a session already holds (same id and same text), e.g. a copied file.

    The text must match too: a Claude reply split across two reads shares its message id.
    """
    sid = db.chunks.find_session(key)
    if sid is None or not any(m.message_id for m in msgs):
        return msgs
    ids: set[str] = set()
    stored = []
    for message_ids, text in db.chunks.session_messages(sid):
        ids.update(message_ids)
        stored.append(text)
    corpus = "\n".join(stored)
    return [m for m in msgs if not (m.message_id in ids and m.text[:200] in corpus)]


def _first_time(messages: list[Message]) -> str | None:
    return next((m.timestamp for m in messages if m.timestamp), None)


def _last_time(messages: list[Message]) -> str | None:
    return next((m.timestamp for m in reversed(messages) if m.timestamp), None)
