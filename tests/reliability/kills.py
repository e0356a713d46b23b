"""SIGKILL at random moments of ingest, extract, consolidate and add; then prove the file
is consistent (`hippo doctor`) and that a re-run converges to the contents of a run that
was never killed (compared through `hippo export` of both stores).

Kills accumulate on one database, as repeated crashes would: kill, doctor, start again
(the work resumes where the last commit left it), ..., then a final run to completion.
When a run has committed all its work before its signal, the file goes back to the
starting state so the next kill has work to land in.
Delays are drawn from a seeded RNG over the length of an unkilled run, so a seed replays.

On a PostgreSQL store (`backend="postgres"`) each database is a schema of the tests'
server, and a starting state is made again by the same commands in an emptied schema
(a schema is not a file to copy); the ids come out the same, as the commands are.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tests.reliability.harness import OK, argv, copy_db, env_for, near_duplicate, run, transcript

COMMANDS = ("ingest", "extract", "consolidate", "add")
# Fields of a memory that must match a run that was never killed. Timestamps differ by
# nature; confidence and confirmed_at also move when an `add` whose commit landed just
# before the kill is run again (the same statement seen again reinforces it, by design).
BRAIN_FIELDS = ("id", "text", "type", "tier", "project", "tags", "importance", "author",
                "status", "pinned", "canonical", "consolidated_into", "superseded_by", "source")


@dataclass(slots=True)
class Scenario:
    """A starting database and the command whose runs are killed."""

    command: str
    base: Path | str
    args: list[str]
    stdin: bytes | None = None
    # Make `target` the starting state again (None: copy the base file).
    remake: Callable[[Path | str], None] | None = None

    def start(self, target: Path | str) -> Path | str:
        """`target` (a file, or a server's store) in the starting state."""
        if self.remake is None:
            assert isinstance(self.base, Path) and isinstance(target, Path)
            return copy_db(self.base, target)
        self.remake(target)
        return target


@dataclass(slots=True)
class KillReport:
    command: str
    kills: int = 0
    before_done: int = 0  # the signal came before the run had committed all of its work
    progress: list[str] = field(default_factory=list)  # committed work seen after each kill
    doctor_failures: list[str] = field(default_factory=list)
    partial_writes: list[str] = field(default_factory=list)
    converged: bool = False
    difference: str = ""
    reference_seconds: float = 0.0

    def figures(self) -> dict[str, Any]:
        return {"command": self.command, "kills": self.kills, "before_done": self.before_done,
                "doctor_failures": len(self.doctor_failures),
                "partial_writes": len(self.partial_writes), "converged": self.converged,
                "reference_seconds": round(self.reference_seconds, 2)}


def snapshot(db: Path | str, env: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Both stores as exported, brain records cut to the fields that must converge."""
    brain = [{k: r[k] for k in BRAIN_FIELDS} for r in run(db, "export", env=env).lines]
    return {"brain": brain, "echo": run(db, "export", "--store", "echo", env=env).lines}


def dense(snap: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The snapshot with each store's ids renumbered 1, 2, ... in order (references and
    a source's chunks too): a server's identity sequence is not transactional, so a
    killed write leaves a gap in the ids (never a reuse), where SQLite's AUTOINCREMENT
    takes back what a rolled-back transaction took."""
    chunk = {r["id"]: i for i, r in enumerate(snap["echo"], start=1)}
    mem = {r["id"]: i for i, r in enumerate(snap["brain"], start=1)}

    def source(src: Any) -> Any:
        if isinstance(src, dict) and isinstance(src.get("chunks"), list):
            return {**src, "chunks": [chunk.get(c, c) for c in src["chunks"]]}
        return src

    brain = [{**r, "id": mem[r["id"]], "source": source(r["source"]),
              **{k: mem.get(r[k], r[k]) for k in ("consolidated_into", "superseded_by")}}
             for r in snap["brain"]]
    return {"brain": brain, "echo": [{**r, "id": chunk[r["id"]]} for r in snap["echo"]]}


def _first_difference(a: dict[str, list[dict]], b: dict[str, list[dict]]) -> str:
    for store in ("brain", "echo"):
        if len(a[store]) != len(b[store]):
            return f"{store}: {len(a[store])} records, reference has {len(b[store])}"
        for x, y in zip(a[store], b[store]):
            if x != y:
                keys = [k for k in x if x.get(k) != y.get(k)]
                return f"{store} record {x.get('id')}: {keys[0]} {x[keys[0]]!r} != {y[keys[0]]!r}"
    return ""


def _count(db: Path | str, env: dict[str, str]) -> int:
    return len(run(db, "export", env=env).lines)


EXTRACTED = "SELECT CAST(max(value) AS INT) FROM meta WHERE key = 'extract.last_chunk_id'"
PROGRESS = {  # how much of its work a command has committed, read straight from the file
    "ingest": ("chunks", "SELECT count(*) FROM echo_chunks"),
    "extract": ("chunks extracted", EXTRACTED),
    "consolidate": ("merged", "SELECT count(*) FROM memories WHERE status = 'consolidated'"),
    "add": ("memories", "SELECT count(*) FROM memories"),
}


def progress(db: Path | str, command: str) -> int:
    if isinstance(db, str):  # a server's store
        import psycopg

        with psycopg.connect(db) as pg:
            row = pg.execute(PROGRESS[command][1]).fetchone()
        return int((row or [0])[0] or 0)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(con.execute(PROGRESS[command][1]).fetchone()[0] or 0)
    finally:
        con.close()


# -- starting states --------------------------------------------------------------------

def prepare(work: Path, command: str, *, size: int, env: dict[str, str],
            base: Path | str | None = None) -> Scenario:
    """A base database (`base`, else a file in `work`) with `size`-scaled work waiting
    for `command`."""
    base = work / f"base-{command}.db" if base is None else base
    folder = work / "transcripts"
    if not folder.exists():
        folder.mkdir()
        for n in range(size):
            transcript(folder / f"k{n:04d}.jsonl", 500 + n, turns=12)

    def ok(op: Any) -> None:
        if op.rc != OK:
            raise RuntimeError(f"preparing {command}: {op.kind} exit {op.rc}: {op.stderr}")

    seed = b"".join(orjson.dumps({"text": f"base memory {i} of the kill test"}) + b"\n"
                    for i in range(20))
    ok(run(base, "add", "-", env=env, input=seed))
    if command == "ingest":
        return Scenario(command, base, ["ingest", str(folder), "--idle-minutes", "0"])
    if command == "extract":
        ok(run(base, "ingest", str(folder), "--idle-minutes", "0", env=env))
        return Scenario(command, base, ["extract"])
    if command == "consolidate":
        pairs = b"".join(orjson.dumps(near_duplicate(i)) + b"\n" for i in range(size * 20))
        ok(run(base, "add", "-", env=env, input=pairs))
        (Path(env["HIPPO_HOME"]) / "config.toml").write_text("[maintain]\nbatch = 10\n")
        return Scenario(command, base, ["consolidate"])
    if command == "add":
        lines = b"".join(orjson.dumps({"text": f"bulk memory {i} names token z{i}",
                                       "tags": [f"t{i % 7}"]}) + b"\n"
                         for i in range(size * 100))
        return Scenario(command, base, ["add", "-"], lines)
    raise ValueError(command)


# -- the kill loop ------------------------------------------------------------------------

def _start(db: Path, sc: Scenario, env: dict[str, str]) -> subprocess.Popen[bytes]:
    p = subprocess.Popen(argv(db, *sc.args), env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert p.stdin is not None
    try:
        p.stdin.write(sc.stdin or b"")
        p.stdin.close()
    except BrokenPipeError:
        pass
    return p


def kill_loop(work: Path, sc: Scenario, *, kills: int, rng: random.Random,
              env: dict[str, str],
              on_kill: Callable[[int, float, bool], None] = lambda *_: None,
              stores: Callable[[str], Path | str] | None = None) -> KillReport:
    """`stores(name)`: where the reference and the killed database live (files in `work`)."""
    place = stores or (lambda name: work / f"{name}-{sc.command}.db")
    rep = KillReport(sc.command)
    reference = sc.start(place("reference"))
    before = _count(sc.base, env)
    t = time.perf_counter()
    ok = run(reference, *sc.args, env=env, input=sc.stdin)
    rep.reference_seconds = time.perf_counter() - t
    if ok.rc != OK:
        raise RuntimeError(f"reference {sc.command}: exit {ok.rc}: {ok.stderr}")
    expected = snapshot(reference, env)
    after = len(expected["brain"])
    done = progress(reference, sc.command)
    t = time.perf_counter()
    run(sc.base, "stats", env=env)  # a process that starts and opens the file, no work
    startup = time.perf_counter() - t

    db = sc.start(place("killed"))
    for i in range(kills):
        # Mostly inside the work, not Python's start-up: from 80% of a bare start to the end.
        delay = rng.uniform(0.8 * startup, max(0.9 * rep.reference_seconds, startup))
        p = _start(db, sc, env)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        committed = progress(db, sc.command)
        before_done = committed < done
        rep.kills += 1
        rep.before_done += before_done
        rep.progress.append(f"kill {i} at {delay:.2f}s: {committed} of {done} "
                            f"{PROGRESS[sc.command][0]}")
        on_kill(i, delay, before_done)
        doctor = run(db, "doctor", "--json", env=env)
        if doctor.rc != OK or not all(c["ok"] for c in doctor.lines):
            rep.doctor_failures.append(f"kill {i} at {delay:.2f}s: {doctor.stdout!r}")
        if sc.command == "add":  # one transaction: all of the batch or none of it
            n = _count(db, env)
            if n not in (before, after):
                rep.partial_writes.append(f"kill {i}: {n} memories, expected {before} or "
                                          f"{after}")
        if not before_done:  # all was committed first: start the next run with work to do
            sc.start(db)
    final = run(db, *sc.args, env=env, input=sc.stdin)
    if final.rc != OK:
        rep.difference = f"final run exit {final.rc}: {final.stderr.strip()}"
        return rep
    got = snapshot(db, env)
    if isinstance(db, str):  # a server: the same rows, their ids in the same order
        got, expected = dense(got), dense(expected)
    rep.difference = _first_difference(got, expected)
    rep.converged = not rep.difference
    return rep


def kill_test(work: Path, command: str, *, kills: int, seed: int, size: int = 8,
              embedder: str = "hash", backend: str = "sqlite") -> KillReport:
    """Prepare `command`'s scenario under `work`, then kill it `kills` times (on
    `backend`: sqlite files, or schemas of the tests' PostgreSQL server)."""
    work.mkdir(parents=True, exist_ok=True)
    home = work / f"home-{command}"
    home.mkdir(exist_ok=True)
    env = env_for(home, embedder)
    rng = random.Random(f"{seed}:{command}")
    if backend != "postgres":
        sc = prepare(work, command, size=size, env=env)
        return kill_loop(work, sc, kills=kills, rng=rng, env=env)
    from tests.pgtest import create_schema, drop_schema

    schemas: dict[str, str] = {}

    def store(name: str) -> str:
        if name not in schemas:
            schemas[name] = create_schema(f"kill_{name}")[0]
        return _url(schemas[name])

    def remake(target: Path | str) -> None:
        name = next(n for n, s in schemas.items() if _url(s) == target)
        _empty(schemas[name])
        prepare(work, command, size=size, env=env, base=target)

    try:
        sc = prepare(work, command, size=size, env=env, base=store("base"))
        sc.remake = remake
        return kill_loop(work, sc, kills=kills, rng=rng, env=env, stores=store)
    finally:
        for name in schemas.values():
            drop_schema(name)


def _url(schema: str) -> str:
    from tests.pgtest import base_url, with_schema

    return with_schema(base_url(), schema)


def _empty(schema: str) -> None:
    """The schema emptied (dropped and made again under its name)."""
    import psycopg

    from tests.pgtest import base_url, drop_schema

    drop_schema(schema)
    with psycopg.connect(base_url(), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
