"""What a job (ingest, extract, consolidate, retire, undo) prints: JSON lines when piped or
with --json; at a terminal, one readable line per event worth a look and a summary.

At a terminal the lines go through `hippo.console.progress.above`, which prints them above a
running progress bar (erasing the bar's line first), so no line lands on the bar.
"""

from __future__ import annotations

import sys
from typing import Any

from hippo.console.output import dumps, want_json


class JobOutput:
    """The sink of a job's events: `event(ev)` for each, `summary(ev)` at the end."""

    def __init__(self, json_flag: bool | None) -> None:
        self.json = want_json(json_flag)

    def event(self, ev: dict[str, Any]) -> None:
        if self.json:
            _write_json(ev)
            return
        line = describe(ev)
        if line:
            from hippo.console.progress import above

            above(line)

    def any(self, ev: dict[str, Any]) -> None:
        """An event or, for `event: summary`, the summary (jobs that emit both alike)."""
        (self.summary if ev.get("event") == "summary" else self.event)(ev)

    def summary(self, ev: dict[str, Any]) -> None:
        if self.json:
            _write_json(ev)
            return
        from hippo.console.progress import above

        above(summarise(ev))


def _write_json(ev: dict[str, Any]) -> None:
    if sys.stdout.isatty():  # a person reads it: above the bar, if one is drawn
        from hippo.console.progress import above

        above(dumps(ev).decode().rstrip("\n"), soft_wrap=True)
        return
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(dumps(ev).decode())
    else:
        out.write(dumps(ev))
        out.flush()


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


def _cut(text: Any, width: int = 70) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def describe(ev: dict[str, Any]) -> str | None:
    """One readable line for an event, or None for one not worth a line at a terminal."""
    kind = ev.get("event")
    if kind in ("file", "notes"):
        return (_file if kind == "file" else _notes)(ev)
    if kind == "memory":
        return f"{ev.get('action', 'add'):<9} #{ev.get('id', '-')} {ev.get('type')}: {_cut(ev.get('text'))}"
    if kind == "session":
        if ev.get("status") == "skipped":
            return f"skipped   session {ev.get('session')}: {ev.get('reason', '')}"
        return None
    if kind == "merge":
        absorbed = ", ".join(f"#{i}" for i in ev.get("absorbed", []))
        return f"merged    {absorbed} into #{ev['survivor']} ({ev.get('type')}): {_cut(ev.get('text'))}"
    if kind == "retire":
        why = f"{ev.get('age_days')} days old, window {ev.get('window_days')}" \
            if ev.get("reason") == "age" else ev.get("reason")
        return f"retired   #{ev['id']} {ev.get('type')} ({why}): {_cut(ev.get('text'), 50)}"
    if kind == "restore":
        return f"{ev.get('action', 'restore'):<9} #{ev['id']} -> {ev.get('status') or 'gone'}: {_cut(ev.get('text'), 50)}"
    if kind == "skip":
        return f"skipped   #{ev.get('id')}: {ev.get('reason')}"
    if kind == "veto":
        return None  # a pair kept apart: in the JSON, and counted in the summary
    return " ".join(f"{k}={v}" for k, v in ev.items())


def _file(ev: dict[str, Any]) -> str:
    """A transcript file read, deferred or skipped by `hippo ingest`."""
    status, path = ev["status"], ev["path"]
    if status in ("ingested", "reread"):
        extra = f", {_n(ev['redactions'], 'secret')} redacted" if ev.get("redactions") else ""
        return (f"{status:<9} {path}: {_n(ev['messages'], 'message')} -> "
                f"{_n(ev['chunks'], 'chunk')}{extra}")
    if status == "deferred":
        return f"deferred  {path}: {ev.get('reason', 'still being written')}"
    return f"{status:<9} {path}: {ev.get('reason') or ''}".rstrip(": ")


def _notes(ev: dict[str, Any]) -> str | None:
    """A note file read (`hippo.ingest.notes`): what it added and what it no longer says."""
    if ev.get("status") == "read":
        return (f"notes     {ev['path']}: {ev.get('added', 0)} added, "
                f"{ev.get('ended', 0)} no longer said")
    if ev.get("status") in ("gone", "skipped"):
        return f"notes     {ev['path']}: {ev.get('reason') or 'gone, its memories end'}"
    return None


def summarise(ev: dict[str, Any]) -> str:
    """The summary event as a sentence or two a person reads at a glance."""
    job = ev.get("job") or ("extract" if "extractor" in ev else "ingest" if "ingested" in ev
                            else "job")
    run = ev.get("run_id")
    head = f"{job} {'(dry run) ' if ev.get('dry_run') else ''}" + (f"run {run}: " if run else ": ")
    if job == "ingest":
        parts = [(f"{_n(ev['files'], 'file')}: {ev['ingested']} read, {ev['unchanged']} "
                  f"unchanged, {ev['deferred']} deferred, {ev['skipped_files']} skipped"),
                 f"{_n(ev['messages'], 'message')} -> {_n(ev['chunks'], 'chunk')} in Echo"]
        if ev.get("redactions"):
            parts.append(f"{_n(ev['redactions'], 'secret')} redacted")
        if ev.get("duplicates"):
            parts.append(f"{_n(ev['duplicates'], 'message')} already stored")
        text = head + "; ".join(parts)
        if ev.get("skipped"):
            text += "\n  skipped: " + ", ".join(f"{r} ({n})" for r, n in ev["skipped"].items())
        if ev.get("deferred"):
            text += "\n  deferred files are read by a later run once idle (--idle-minutes 0 now)"
        notes = ev.get("notes")
        if notes and notes.get("read"):
            text += (f"\n  agents' notes and instruction files: {notes['read']} of "
                     f"{notes['files']} read, {notes['added']} memories added, "
                     f"{notes['ended']} no longer said")
        return text
    if job == "extract":
        return head + (f"{_n(ev['sessions'], 'session')}, {_n(ev['chunks'], 'chunk')}: "
                       f"{ev['added']} memories added, {ev['reinforced']} reinforced, "
                       f"{ev['skipped']} skipped" + (f"; {ev['sessions_skipped']} sessions "
                                                     "skipped" if ev["sessions_skipped"] else ""))
    if job == "consolidate":
        return head + (f"{ev.get('checked', 0)} memories checked ({ev.get('mode')}), "
                       f"{ev.get('merged', 0)} merged in {_n(ev.get('clusters', 0), 'cluster')}, "
                       f"{ev.get('vetoed', 0)} pairs kept apart; FTS {ev.get('fts')}")
    if job == "retire":
        return head + f"{_n(ev.get('retired', 0), 'memory', 'memories')} retired " \
            f"({ev.get('aged', 0)} past their window, {ev.get('done', 0)} done)"
    if job == "undo":
        return head + f"undid {ev.get('undid')}: {_n(ev.get('restored', 0), 'memory', 'memories')} " \
            f"restored, {ev.get('links', 0)} links"
    rest = {k: v for k, v in ev.items() if k not in ("event", "job", "run_id", "dry_run")}
    return head + ", ".join(f"{k} {v}" for k, v in rest.items())
