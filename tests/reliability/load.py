"""Concurrent load on one database: searchers, an ingest+extract loop, consolidate, add.

Cold mode: worker threads start real `python -m hippo` processes back to back until the
deadline (what agents and cron do). Warm mode: worker processes call the CLI entry point
in a loop (`tests.reliability.warm`), which collides far more often per second.

Each finished call is classified: ok (0, or 3 for a job that reported skipped input),
busy (75 with a one-line message: the documented "try again later"), or failed (any
other exit, a traceback, or "database is locked" text without exit 75). Afterwards every
add that reported success must be in the final export, and every transcript line written
must be in Echo after a last ingest: nothing may be lost.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tests.reliability.harness import (
    OK,
    PARTIAL,
    TEMPFAIL,
    Op,
    env_for,
    near_duplicate,
    one_line_error,
    percentile,
    run,
    transcript,
)

REPO = Path(__file__).resolve().parents[2]
QUERIES = (
    "collector cluster logs", "lint the module before commit", "redis cache of the service",
    "src/app.py --force E1234", 'quote " and -minus: colon', "what did we decide", "next task",
    "deploy region alpha", "NEAR(a b) OR NOT c*",
)
COLD_ROLES = ("search",) * 4 + ("ingest+extract", "consolidate", "add")
WARM_ROLES = ("search",) * 4 + ("ingest", "extract", "consolidate", "add")
MARKER = re.compile(rb"Marker (session\d+turn\d+) ")


@dataclass(slots=True)
class LoadReport:
    """What a load run did and whether anything was lost."""

    mode: str
    seconds: float
    busy_timeout_ms: int
    ops: dict[str, Counter[str]] = field(default_factory=dict)
    search_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    busy_messages: Counter[str] = field(default_factory=Counter)
    adds_reported: int = 0
    adds_missing: list[int] = field(default_factory=list)
    lines_written: int = 0
    lines_missing: list[str] = field(default_factory=list)
    doctor_ok: bool = False

    def record(self, op: Op, *, timed: bool = True) -> str:
        verdict = classify(op)
        self.ops.setdefault(op.kind, Counter())[verdict] += 1
        if verdict == "failed":
            self.failures.append(f"{op.kind} exit {op.rc}: {op.stderr.strip()[:500]}")
        elif verdict == "busy":
            self.busy_messages[f"{op.kind}: {op.stderr.strip()}"] += 1
        elif op.kind == "search" and timed:
            self.search_ms.append(op.seconds * 1000)
        return verdict

    def figures(self) -> dict[str, Any]:
        """The numbers docs/reliability.md shows (JSON-ready)."""
        ms = self.search_ms
        return {
            "mode": self.mode, "seconds": self.seconds, "busy_timeout_ms": self.busy_timeout_ms,
            "ops": {k: dict(sorted(v.items())) for k, v in sorted(self.ops.items())},
            "completed": sum(v["ok"] for v in self.ops.values()),
            "busy_exit_75": sum(v["busy"] for v in self.ops.values()),
            "failures": len(self.failures),
            "search_p50_ms": round(percentile(ms, 50)) if ms else None,
            "search_p95_ms": round(percentile(ms, 95)) if ms else None,
            "adds_reported": self.adds_reported, "adds_missing": len(self.adds_missing),
            "transcript_lines": self.lines_written, "lines_missing": len(self.lines_missing),
            "doctor_ok": self.doctor_ok,
        }


def classify(op: Op) -> str:
    """ok | busy | failed (see the module docstring)."""
    if "Traceback" in op.stderr:
        return "failed"
    if op.rc == TEMPFAIL:
        return "busy" if one_line_error(op) else "failed"
    if op.rc == OK or (op.rc == PARTIAL and op.kind in ("ingest", "extract")):
        # A search may degrade (named on stderr); a lock error must never hide there.
        return "failed" if "database is locked" in op.stderr.lower() else "ok"
    return "failed"


class Load:
    """One load run on `db` (default `work/hippo.db`; a server's store too): `seed()`, then
    `cold()` or `warm()` (a file only), then `check()`."""

    def __init__(self, work: Path, *, seconds: float, embedder: str = "hash",
                 busy_timeout_ms: int = 5000, config: str = "",
                 db: Path | str | None = None) -> None:
        self.work, self.seconds = work, seconds
        self.db: Path | str = work / "hippo.db" if db is None else db
        self.home = work / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        if config:
            (self.home / "config.toml").write_text(config)
        self.env = env_for(self.home, embedder, HIPPO_BUSY_TIMEOUT_MS=str(busy_timeout_ms))
        self.transcripts = work / "transcripts"
        self.transcripts.mkdir(exist_ok=True)
        self.embedder = embedder
        self.report = LoadReport("", seconds, busy_timeout_ms)
        self.added: dict[int, str] = {}  # id -> text of every add that reported success
        self.sessions = 0
        self._lock = threading.Lock()

    # -- setup ----------------------------------------------------------------------
    def seed(self, memories: int = 60) -> None:
        """Memories and a first transcript, so every command has work from the start."""
        lines = b"".join(orjson.dumps({"text": f"seed memory {i} about "
                                       f"{QUERIES[i % len(QUERIES)]}"}) + b"\n"
                         for i in range(memories))
        seed_env = {**self.env, "HIPPO_BUSY_TIMEOUT_MS": "5000"}
        for op in (run(self.db, "add", "-", env=seed_env, input=lines),
                   self._ingest_new(seed_env), run(self.db, "extract", env=seed_env)):
            if op.rc not in (OK, PARTIAL):
                raise RuntimeError(f"seeding failed: {op.kind} {op.rc} {op.stderr}")

    def _ingest_new(self, env: dict[str, str] | None = None) -> Op:
        with self._lock:
            n = self.sessions
            self.sessions += 1
        transcript(self.transcripts / f"s{n:05d}.jsonl", n)
        return run(self.db, "ingest", str(self.transcripts), "--idle-minutes", "0",
                   env=env or self.env)

    def _note_add(self, op: Op) -> None:
        """An add that exited 0 must have printed its one JSON line; remember id and text."""
        out = op.lines
        self.report.adds_reported += 1
        if len(out) != 1:
            self.report.failures.append(f"add exit 0 printed {len(out)} lines")
            return
        self.added[int(out[0]["id"])] = out[0]["text"]

    # -- cold: real processes -------------------------------------------------------
    def _cold_step(self, role: str, worker: int) -> Callable[[int], None]:
        def step(n: int) -> None:
            if role == "search":
                query = QUERIES[(worker + n) % len(QUERIES)]
                ops = [run(self.db, "search", "--json", "--", query, env=self.env)]
            elif role == "ingest+extract":
                ops = [self._ingest_new(), run(self.db, "extract", env=self.env)]
            elif role == "consolidate":
                ops = [run(self.db, "consolidate", env=self.env)]
            else:
                rec = near_duplicate(1000 + n) if n % 2 else {
                    "text": f"cold add {n} keeps token t{n} for the export check"}
                ops = [run(self.db, "add", "--json", "-", env=self.env,
                           input=orjson.dumps(rec) + b"\n")]
            with self._lock:
                for op in ops:
                    if self.report.record(op) == "ok" and op.kind == "add":
                        self._note_add(op)
        return step

    def cold(self, roles: tuple[str, ...] = COLD_ROLES) -> None:
        """Worker threads run `python -m hippo` processes until the deadline."""
        self.report.mode = "cold processes"
        deadline = time.monotonic() + self.seconds

        def loop(step: Callable[[int], None]) -> None:
            n = 0
            while time.monotonic() < deadline:
                step(n)
                n += 1

        threads = [threading.Thread(target=loop, args=(self._cold_step(role, w),))
                   for w, role in enumerate(roles)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    # -- warm: the CLI entry point called in a loop -----------------------------------
    def warm(self, roles: tuple[str, ...] = WARM_ROLES) -> None:
        """One warm worker process per role; their JSON lines go to files, read at the end."""
        self.report.mode = "warm workers"
        outs = [self.work / f"warm-{i}-{role}.jsonl" for i, role in enumerate(roles)]
        procs = []
        for i, (role, out) in enumerate(zip(roles, outs)):
            with out.open("wb") as fh:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "tests.reliability.warm", role, str(self.db),
                     str(self.seconds), str(i)], stdout=fh, env=self.env, cwd=REPO))
        for p in procs:
            p.wait(timeout=self.seconds + 120)
        for out in outs:
            for n, line in enumerate(out.read_bytes().splitlines()):
                d = orjson.loads(line)
                op = Op(d["kind"], d["rc"], d["ms"] / 1000, d["stdout"].encode(), d["stderr"])
                # A worker's first call pays its imports: that is the cold figure's part.
                if self.report.record(op, timed=n > 0) == "ok" and op.kind == "add":
                    self._note_add(op)

    # -- after the load ---------------------------------------------------------------
    def check(self) -> LoadReport:
        """Last ingest, doctor and exports: every success reported must be in the file."""
        rep = self.report
        env = {**self.env, "HIPPO_BUSY_TIMEOUT_MS": "5000"}
        folders = [self.transcripts, *sorted(self.work.glob("warm-transcripts-*"))]
        final = run(self.db, "ingest", *map(str, folders), "--idle-minutes", "0", env=env)
        if final.rc not in (OK, PARTIAL):
            rep.failures.append(f"final ingest exit {final.rc}: {final.stderr.strip()}")
        doctor = run(self.db, "doctor", "--json", env=env)
        rep.doctor_ok = doctor.rc == OK and all(c["ok"] for c in doctor.lines)
        brain = {r["id"]: r for r in run(self.db, "export", env=env).lines}
        # A merge survivor takes the merged statement; any other text must be as reported.
        survivors = {r["consolidated_into"] for r in brain.values()}
        rep.adds_missing = sorted(
            i for i, text in self.added.items()
            if i not in brain or (brain[i]["text"] != text and i not in survivors))
        echo = "\n".join(r["text"] for r in run(self.db, "export", "--store", "echo",
                                                  env=env).lines)
        markers = [m.decode() for folder in folders for f in sorted(folder.glob("*.jsonl"))
                   for m in MARKER.findall(f.read_bytes())]
        rep.lines_written = len(markers)
        rep.lines_missing = [m for m in markers if f"Marker {m} " not in echo]
        return rep


def load_run(work: Path, *, seconds: float, mode: str = "cold", embedder: str = "hash",
             busy_timeout_ms: int = 5000, config: str = "",
             db: Path | str | None = None) -> LoadReport:
    """Seed, load for `seconds` (cold or warm), check; the report holds the figures.
    `config` is the text of the config file every process reads (e.g. a [search] table)."""
    load = Load(work, seconds=seconds, embedder=embedder, busy_timeout_ms=busy_timeout_ms,
                config=config, db=db)
    load.seed()
    load.cold() if mode == "cold" else load.warm()
    return load.check()
