"""What agents already wrote: their own notes and the person's instruction files, read
into the Brain with provenance to file and line (docs/agents.md, "Read what the agent
already wrote").

- Claude Code's auto memory, `~/.claude/projects/<slug>/memory/*.md` (`$CLAUDE_CONFIG_DIR`
  for `~/.claude`): the agent's notes, stored `machine`, tagged `agent-notes`. The slug is
  the git root's path with every character but letters and digits turned into `-` (what
  Claude Code 2.1 writes: `/tmp/my.proj_x` → `-tmp-my-proj-x`); the project is found by
  walking the file system down that path, else from the cwd its transcripts record.
- The person's instruction files of a project's root (CLAUDE.md, CLAUDE.local.md,
  .claude/CLAUDE.md, .claude/rules/*.md, AGENTS.md, GEMINI.md) and the user-wide ones
  (~/.claude/CLAUDE.md, ~/.claude/rules/*.md, ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md, as
  global memories): stored `human` (the person wrote them), tagged `instructions`.

Every memory read from a file an agent loads by itself carries `loaded-by:AGENT` (the
context layers leave it out for that agent, `hippo.layers.floor`) and `notes-file:<hash>`,
the file's own tag. A file is read again only when its content changed (its digest is
kept in `meta`): what it says anew is added (write-time dedup, `hippo.extract.write`),
what it no longer says ends (`valid_to` now; superseded by the new statement closest to
it), what a deleted topic file said ends too. Every change is audited under the run
(`hippo undo RUN`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo.layers.hint import loaded_by

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.ingest.notes_read import Note

NOTES_TAG = "agent-notes"
INSTRUCTIONS_TAG = "instructions"
FILE_TAG = "notes-file:"
META = "notes.digest:"  # + the file's path: the digest of what was last read
ACTOR = "notes"
MAX_BYTES = 512 * 1024  # a bigger file is not a note
MAX_WALK = 4000  # directories a slug's walk may list
# (path in a project's root, the agent that loads it)
PROJECT_FILES = (("CLAUDE.md", "claude-code"), ("CLAUDE.local.md", "claude-code"),
                 (".claude/CLAUDE.md", "claude-code"), ("AGENTS.md", "codex"),
                 ("GEMINI.md", "gemini"))
RULE_DIRS = ((".claude/rules", "claude-code"),)
USER_FILES = (("~/.claude/CLAUDE.md", "claude-code"), ("~/.codex/AGENTS.md", "codex"),
              ("~/.gemini/GEMINI.md", "gemini"))

Emit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class NoteFile:
    """One file to read: where, for which project, which agent loads it, whose it is."""

    path: Path
    project: str | None
    agent: str
    instructions: bool  # the person's instruction file (else an agent's own notes)


def slug(path: str) -> str:
    """Claude Code's folder name for a directory: every non-alphanumeric character `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def claude_home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude").expanduser()


def unslug(name: str) -> str | None:
    """The existing directory whose slug is `name`, found by walking down from `/`."""
    budget = [MAX_WALK]

    def walk(base: str, rest: str) -> str | None:
        if not rest:
            return base
        budget[0] -= 1
        if budget[0] < 0:
            return None
        try:
            children = sorted(os.listdir(base))
        except OSError:
            return None
        for child in children:
            piece = "-" + slug(child)
            if rest.startswith(piece) and (len(rest) == len(piece) or rest[len(piece)] == "-"):
                path = os.path.join(base, child)
                if os.path.isdir(path):
                    found = walk(path, rest[len(piece):])
                    if found:
                        return found
        return None

    return walk("/", name) if name.startswith("-") else None


def _cwd_of(folder: Path, name: str) -> str | None:
    """A transcript's recorded cwd under `folder` whose git root has the slug `name`."""
    import json

    from hippo.project import locate

    for transcript in sorted(folder.glob("*.jsonl"))[:5]:
        try:
            with transcript.open("rb") as fh:
                for raw, _ in zip(fh, range(50), strict=False):
                    cwd = json.loads(raw).get("cwd")
                    if isinstance(cwd, str) and cwd:
                        root = locate(cwd).root or cwd
                        return root if slug(root) == name else None
        except (OSError, ValueError, AttributeError):
            continue
    return None


def memory_dirs(root: Path) -> list[tuple[Path, str]]:
    """Claude Code's auto-memory folders under a projects folder, with the root directory
    of the project each belongs to (a folder whose project cannot be found is left out)."""
    out = []
    for folder in sorted(root.glob("*/memory")):
        if folder.is_dir():
            where = unslug(folder.parent.name) or _cwd_of(folder.parent, folder.parent.name)
            if where:
                out.append((folder, where))
    return out


def _md(folder: Path) -> list[Path]:
    """Markdown files of a folder, MEMORY.md first."""
    files = sorted(p for p in folder.glob("*.md") if p.is_file())
    return sorted(files, key=lambda p: p.name != "MEMORY.md")


def project_files(root: str, project: str | None) -> list[NoteFile]:
    """A project's instruction files (each place one may be, so that a deleted one's
    memories end: `present` tells whether any is there), and Claude Code's notes of it."""
    base = Path(root)
    out = [NoteFile(base / rel, project, agent, True) for rel, agent in PROJECT_FILES]
    for rel, agent in RULE_DIRS:
        out += [NoteFile(p, project, agent, True) for p in _md(base / rel)]
    notes = claude_home() / "projects" / slug(root) / "memory"
    out += [NoteFile(p, project, "claude-code", False) for p in _md(notes)]
    return out


def user_files() -> list[NoteFile]:
    """The person's user-wide instruction files, as global memories."""
    out = [NoteFile(Path(p).expanduser(), None, agent, True) for p, agent in USER_FILES]
    return out + [NoteFile(p, None, "claude-code", True) for p in _md(claude_home() / "rules")]


def found_under(h: Hippo, roots: Sequence[Path]) -> list[NoteFile]:
    """Every note file a projects folder holds (Claude Code's `~/.claude/projects`), and the
    instruction files of the projects it names."""
    from hippo.project import of_session

    out: list[NoteFile] = []
    for root in roots:
        for folder, where in memory_dirs(root) if root.is_dir() else []:
            project = of_session(h.db, where)
            out += project_files(where, project)
    return out


def present(files: Sequence[NoteFile]) -> bool:
    return any(nf.path.is_file() for nf in files)


def file_tag(path: Path) -> str:
    return FILE_TAG + hashlib.sha256(str(path).encode()).hexdigest()[:12]


class NotesSync:
    """One run over note files: what each says now, against what it said before."""

    def __init__(self, h: Hippo, *, run_id: str | None) -> None:
        from hippo.extract.settings import ExtractSettings

        self.h = h
        self.run_id = run_id
        self.threshold = ExtractSettings.from_settings(h.settings).similarity
        self.totals = {"files": 0, "read": 0, "added": 0, "ended": 0, "kept": 0}

    def run(self, files: Sequence[NoteFile], emit: Emit) -> dict[str, Any]:
        seen: set[Path] = set()
        for nf in files:
            if nf.path in seen:
                continue
            seen.add(nf.path)
            event = self.file(nf) if nf.path.exists() else self.gone(nf)
            if event is not None:
                emit(event)
        for event in self.vanished(files):
            emit(event)
        return {"event": "summary", **self.totals}

    def file(self, nf: NoteFile) -> dict[str, Any]:
        """Read one file (when it changed) and bring its memories up to date."""
        from hippo.ingest.notes_read import read

        self.totals["files"] += 1
        event: dict[str, Any] = {"event": "notes", "path": str(nf.path), "agent": nf.agent,
                                 "project": nf.project}
        try:
            data = nf.path.read_bytes()[:MAX_BYTES]
        except OSError as exc:
            return {**event, "status": "skipped", "reason": exc.strerror or str(exc)}
        text = data.decode("utf-8", errors="replace")
        digest = hashlib.sha256(f"{nf.project}\0{nf.agent}\0{nf.instructions}\0"
                                .encode() + data).hexdigest()
        key = META + str(nf.path)
        if self.h.db.meta.get(key) == digest:
            return {**event, "status": "unchanged"}
        notes = read(text, instructions=nf.instructions, here=nf.path.parent)
        counts = self._apply(nf, notes, key, digest)
        self.totals["read"] += 1
        for k, v in counts.items():
            self.totals[k] += v
        return {**event, "status": "read", "statements": len(notes), **counts}

    def _current(self, tags: Sequence[str], project: str | None) -> list[dict[str, Any]]:
        from hippo.memory.records import to_record
        from hippo.store.filters import MemoryFilter

        return [to_record(r) for r in self.h.db.memories.listing(MemoryFilter(
            statuses=("active",), projects=(project,), tags=tuple(tags), current=True))]

    def _apply(self, nf: NoteFile, notes: Sequence[Note], key: str,
               digest: str) -> dict[str, int]:
        from hippo.memory.records import normalise_text
        from hippo.redact import redact_text

        db = self.h.db
        before = self._current([file_tag(nf.path)], nf.project)
        said = {normalise_text(redact_text(n.text)): n for n in notes}  # as it is stored
        known = {normalise_text(r["text"]): r for r in before}
        new = [n for k, n in said.items() if k not in known]
        gone = [r for k, r in known.items() if k not in said]
        mems = [self._memory(nf, n) for n in new]
        vectors = self.h.embed([m.text for m in mems]) if mems else []
        added: list[tuple[int, str]] = []
        with db.transaction():
            ended = self._end(gone, file_tag(nf.path))
            for k, rec in known.items():  # what still stands: its lines may have moved
                if k in said and rec["source"].get("lines") != list(said[k].lines):
                    self._lines(rec, said[k])
            from hippo.extract.write import write

            for mem, vec in zip(mems, vectors, strict=True):
                out = write(db, mem, vec, [], threshold=self.threshold, run_id=self.run_id)
                if out.action == "add" and out.memory_id is not None:
                    added.append((out.memory_id, mem.text))
                elif (same := out.memory_id or out.match) is not None:
                    self._share(same, nf)
            self._successors(gone, added)
            db.meta.set(key, digest)
        return {"added": len(added), "ended": ended, "kept": len(notes) - len(new)}

    def _memory(self, nf: NoteFile, note: Note) -> Any:
        from hippo.memory.records import from_input

        kind = INSTRUCTIONS_TAG if nf.instructions else NOTES_TAG
        return from_input({
            "text": note.text, "type": note.type, "project": nf.project,
            "importance": note.importance, "confidence": 0.7 if nf.instructions else 0.5,
            "author": "human" if nf.instructions else "machine",
            "tags": [kind, loaded_by(nf.agent), file_tag(nf.path)],
            "source": {"via": kind, "agent": nf.agent, "file": str(nf.path),
                       "lines": list(note.lines)}},
            self.h.types, default_project=nf.project)

    def _lines(self, rec: dict[str, Any], note: Note) -> None:
        from hippo.memory import brain

        brain.update(self.h.db, rec["id"], {"source": {**rec["source"],
                                                       "lines": list(note.lines)}},
                     actor=ACTOR, action="provenance", run_id=self.run_id)

    def _share(self, memory_id: int, nf: NoteFile) -> None:
        """A statement another notes file already gave (write-time dedup): the memory is
        this file's too, so it holds while either file says it."""
        from hippo.memory import brain

        tags = brain.get(self.h.db, memory_id)["tags"]
        mine = file_tag(nf.path)
        if mine in tags or not any(t.startswith(FILE_TAG) for t in tags):
            return  # already this file's, or not a notes memory (a person's, a session's)
        brain.update(self.h.db, memory_id, {"tags": [*tags, mine, loaded_by(nf.agent)]},
                     actor=ACTOR, action="provenance", run_id=self.run_id)

    def _end(self, gone: Sequence[dict[str, Any]], tag: str) -> int:
        """What a file (its tag `tag`) no longer says stops holding now, unless another
        file still says it: then it is only no longer this file's."""
        from hippo.memory import brain
        from hippo.timeutil import now_iso

        stamp, ended = now_iso(), 0
        for rec in gone:
            if any(t.startswith(FILE_TAG) and t != tag for t in rec["tags"]):
                brain.update(self.h.db, rec["id"],
                             {"tags": [t for t in rec["tags"] if t != tag]}, actor=ACTOR,
                             action="provenance", run_id=self.run_id)
                continue
            brain.update(self.h.db, rec["id"], {"valid_to": stamp}, actor=ACTOR,
                         action="supersede", run_id=self.run_id)
            ended += 1
        return ended

    def _successors(self, gone: Sequence[dict[str, Any]], added: list[tuple[int, str]]) -> None:
        """An ended statement is superseded by the new one of the file that shares most of
        its words (an edited line), when one shares at least half of them."""
        from hippo.extract.statements import content_words
        from hippo.memory import brain

        for rec in gone:
            words = content_words(rec["text"])
            best = max(added, key=lambda a: len(words & content_words(a[1])), default=None)
            if best and words and len(words & content_words(best[1])) * 2 >= len(words):
                brain.update(self.h.db, rec["id"], {"superseded_by": best[0]}, actor=ACTOR,
                             action="supersede", run_id=self.run_id)

    def gone(self, nf: NoteFile) -> dict[str, Any] | None:
        """An instruction file that is not there (any more): what it said ends."""
        recs = self._current([file_tag(nf.path)], nf.project)
        if not recs:
            return None
        with self.h.db.transaction():
            ended = self._end(recs, file_tag(nf.path))
            self.h.db.meta.set(META + str(nf.path), None)
        self.totals["ended"] += ended
        return {"event": "notes", "path": str(nf.path), "status": "gone",
                "project": nf.project, "ended": ended}

    def vanished(self, files: Sequence[NoteFile]) -> Iterator[dict[str, Any]]:
        """Memories of note files that are gone from the folders read: they end."""
        folders = {(nf.path.parent, nf.project) for nf in files if not nf.instructions}
        for folder, project in sorted(folders, key=lambda f: str(f[0])):
            for rec in self._current([NOTES_TAG], project):
                path = Path(str(rec["source"].get("file") or ""))
                if path.parent == folder and not path.exists():
                    with self.h.db.transaction():
                        self.totals["ended"] += self._end([rec], file_tag(path))
                    yield {"event": "notes", "path": str(path), "status": "gone",
                           "project": project, "ended": 1, "id": rec["id"]}
