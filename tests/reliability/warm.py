"""A warm worker: one process that calls the CLI entry point (`hippo.cli.main.main`) again
and again, each call opening its own connection as a cold process would.

Cold processes spend most of their time starting Python, so on a small machine they
rarely collide on the database. A warm worker collides hundreds of times a second; with a
tiny busy timeout every lock path (exit 75) is taken. Usage (from the repository root):

    python -m tests.reliability.warm ROLE DB SECONDS SEED   # ROLE: search|add|ingest|...

It prints one JSON line per call: {kind, rc, ms, stderr, stdout}.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import orjson


class _Buffer(io.BytesIO):
    """Survives its TextIOWrapper being collected (which would close it)."""

    def close(self) -> None:
        pass


def call(args: list[str], stdin: bytes = b"") -> tuple[int, bytes, str]:
    """Run `hippo ARGS` in this process; return (exit code, stdout bytes, stderr text)."""
    from hippo.cli.main import main

    out, err = _Buffer(), _Buffer()
    saved = sys.argv, sys.stdin, sys.stdout, sys.stderr
    sys.argv = ["hippo", *args]
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    rc = 0
    try:
        main()
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - an escape from main() is itself the finding
        rc = -1
        err.write(f"Traceback (escaped main): {type(exc).__name__}: {exc}\n".encode())
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
    return rc, out.getvalue(), err.getvalue().decode("utf-8", "replace")


def steps(role: str, db: Path, n: int, seed: int) -> tuple[list[str], bytes]:
    from tests.reliability.harness import near_duplicate, transcript
    from tests.reliability.load import QUERIES

    base = ["--db", str(db)]
    if role == "search":
        return [*base, "search", "--json", "--", QUERIES[(seed + n) % len(QUERIES)]], b""
    if role == "add":
        rec = near_duplicate(10_000 * seed + n) if n % 2 else {
            "text": f"warm add {seed}-{n} carries token w{seed}x{n}"}
        return [*base, "add", "--json", "-"], orjson.dumps(rec) + b"\n"
    if role == "ingest":
        folder = db.parent / f"warm-transcripts-{seed}"
        folder.mkdir(exist_ok=True)
        transcript(folder / f"w{n:05d}.jsonl", 100_000 * (seed + 1) + n, turns=2)
        return [*base, "ingest", str(folder), "--idle-minutes", "0"], b""
    if role == "extract":
        return [*base, "extract"], b""
    if role in ("consolidate", "doctor", "export", "stats"):
        return [*base, role], b""
    raise SystemExit(f"unknown role {role}")


def main() -> None:
    role, db, seconds, seed = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    out = sys.stdout.buffer
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        args, stdin = steps(role, db, n, seed)
        t = time.perf_counter()
        rc, stdout, stderr = call(args, stdin)
        ms = (time.perf_counter() - t) * 1000
        kind = args[2]
        out.write(orjson.dumps({"kind": kind, "rc": rc, "ms": round(ms, 2), "stderr": stderr,
                                "stdout": stdout.decode("utf-8", "replace")}) + b"\n")
        out.flush()
        n += 1


if __name__ == "__main__":
    main()
