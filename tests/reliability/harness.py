"""Real `python -m hippo` processes on one database: the load, crash and limit harness.

Shared by the tests in this directory (short runs) and `bench/reliability.py` (the
figures in docs/reliability.md). Every call is a separate cold process, as an agent or
cron job would start it; nothing here imports hippo, so a test measures the product.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

# Exit codes a caller may see (SPEC "Shape"); anything else is a failure.
OK, ERROR, USAGE, PARTIAL, TEMPFAIL = 0, 1, 2, 3, 75


@dataclass(slots=True)
class Op:
    """One finished hippo process: what ran, how it ended, how long it took."""

    kind: str
    rc: int
    seconds: float
    stdout: bytes
    stderr: str

    @property
    def lines(self) -> list[dict]:
        return [orjson.loads(x) for x in self.stdout.splitlines() if x.strip()]


def env_for(home: Path, embedder: str = "hash", **extra: str) -> dict[str, str]:
    """A clean environment: own HIPPO_HOME, fixed project, no progress bars, no keys."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HIPPO_") and k not in ("OPENAI_API_KEY", "VOYAGE_API_KEY")}
    env.update(HIPPO_HOME=str(home), HIPPO_PROJECT="loadproj", HIPPO_NO_PROGRESS="1",
               HIPPO_EMBEDDER=embedder, PYTHONDONTWRITEBYTECODE="1", HIPPO_SERVE="off")
    env.update(extra)
    return env


def argv(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "hippo", "--db", str(db), *args]


def run(db: Path, *args: str, env: Mapping[str, str], kind: str = "", input: bytes | None = None,
        timeout: float = 120) -> Op:
    """Run one hippo command to completion."""
    t = time.perf_counter()
    p = subprocess.run(argv(db, *args), input=input, capture_output=True, env=dict(env),
                       timeout=timeout, check=False)
    return Op(kind or args[0], p.returncode, time.perf_counter() - t, p.stdout,
              p.stderr.decode("utf-8", "replace"))


def one_line_error(op: Op) -> bool:
    """An error as the house style wants it: one `hippo: ...` line, no traceback."""
    lines = [x for x in op.stderr.splitlines() if x.strip()]
    return (bool(lines) and all(x.startswith("hippo: ") for x in lines)
            and "Traceback" not in op.stderr)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


# -- small inputs ------------------------------------------------------------------------

NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa")


def near_duplicate(i: int) -> dict:
    """Machine memories that come in pairs close enough for consolidate to merge."""
    name = f"{NAMES[(i // 2) % len(NAMES)]}{i // (2 * len(NAMES))}"
    base = (f"service {name} writes its structured logs to the shared {name} collector "
            f"cluster in the {name} region")
    return {"text": base + (" today" if i % 2 else ""), "author": "machine"}


def transcript(path: Path, n: int, turns: int = 4) -> Path:
    """A generic-JSONL session whose user turns carry cues the rules extractor keeps."""
    lines = []
    for t in range(turns):
        user = (f"From now on always run the linter on module m{n}x{t} before each commit. "
                f"We decided to keep the cache of service s{n}x{t} in redis. "
                f"Marker session{n}turn{t} for the archive.")
        reply = f"Understood: module m{n}x{t} gets linted and s{n}x{t} keeps its redis cache."
        for role, text in (("user", user), ("assistant", reply)):
            lines.append(orjson.dumps({
                "session_id": f"load-{n}", "cwd": "/home/dev/loadproj", "id": f"{n}-{t}-{role}",
                "role": role, "content": text,
                "timestamp": f"2026-03-02T10:{t // 60:02d}:{t % 60:02d}Z"}))
    path.write_bytes(b"\n".join(lines) + b"\n")
    old = time.time() - 3600  # finished an hour ago: past any idle gate
    os.utime(path, (old, old))
    return path


def copy_db(src: Path, dst: Path) -> Path:
    """Copy a database file with its WAL (if any), as a starting state for a run."""
    for suffix in ("", "-wal", "-shm"):  # a stale WAL or index would not belong to the copy
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    for suffix in ("", "-wal"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")
    return dst


# Every relation of the store's schema and the TOAST tables and indexes behind them.
_RELATIONS = (
    "WITH own AS (SELECT oid, reltoastrelid FROM pg_class "
    "WHERE relnamespace = current_schema()::regnamespace) "
    "SELECT pg_relation_filepath(oid) FROM own UNION "
    "SELECT pg_relation_filepath(reltoastrelid) FROM own WHERE reltoastrelid <> 0 UNION "
    "SELECT pg_relation_filepath(i.indexrelid) FROM own JOIN pg_index i "
    "ON i.indrelid = own.reltoastrelid"
)


def server_bytes(url: str) -> bytes:
    """Every byte a PostgreSQL store keeps in its schema's relation files (tables, indexes,
    TOAST), as the server has them on disk after a CHECKPOINT (its WAL not included)."""
    import glob

    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # what the buffers hold, on disk
        data = conn.execute("SELECT current_setting('data_directory')").fetchone()[0]
        files = [r[0] for r in conn.execute(_RELATIONS) if r[0]]
    parts = []
    for rel in files:
        main = os.path.join(data, rel)
        # The relation's segments (N, N.1, ...) and forks (N_fsm, N_vm): not N1..., another's.
        for name in sorted([main, *glob.glob(main + ".*"), *glob.glob(main + "_*")]):
            if os.path.exists(name):
                with open(name, "rb") as fh:
                    parts.append(fh.read())
    return b"\n".join(parts)
