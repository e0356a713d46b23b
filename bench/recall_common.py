"""Plumbing the recall benches share (session_recall, devmem, currency).

Building a fresh store with `hippo ingest` + `hippo extract` (their defaults), asking the
Brain and Echo (in-process, or through the `hippo` command), and what the agent actually
sees: `hippo search --format markdown` run in the project, and the Claude Code prompt hook
`hippo hook claude-code prompt` fed a UserPromptSubmit payload on stdin. Plus the counts
every report gives: memories per session and per 1,000 words of conversation prose.

Whatever extractor is installed is what gets measured; nothing here imports hippo at
module load, so `--help` and the data checks stay instant.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

LIMIT = 5
# Hook and markdown calls are separate processes: run as many at once as there are CPUs.
WORKERS = max(1, min(4, os.cpu_count() or 1))


def cli_env(db: Path) -> dict[str, str]:
    """The environment of a hippo call on `db`: the project comes from the cwd, as an
    agent's would, never from a HIPPO_PROJECT left in the shell."""
    env = {k: v for k, v in os.environ.items() if k != "HIPPO_PROJECT"}
    return {**env, "HIPPO_DB": str(db), "HIPPO_NO_PROGRESS": "1"}


def run_cli(args: list[str], env: dict[str, str], *, stdin: str | None = None,
            cwd: Path | None = None) -> str:
    """stdout of `python -m hippo ARGS`; any exit but 0 and 3 (a session skipped) ends the bench."""
    proc = subprocess.run([sys.executable, "-m", "hippo", *args], env=env, capture_output=True,
                          text=True, check=False, input=stdin, cwd=cwd)
    if proc.returncode not in (0, 3):
        sys.exit(f"hippo {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def build(db: Path, paths: Sequence[Path]) -> dict[str, Any]:
    """`hippo ingest` then `hippo extract`, both with their defaults, into `db`: the last
    summary line of each (a reused database: nothing new to add)."""
    env = cli_env(db)
    ingest = json_lines(run_cli(["ingest", "--idle-minutes", "0", *map(str, paths)], env))
    extract = json_lines(run_cli(["extract"], env))
    return {"ingest": ingest[-1] if ingest else {}, "extract": extract[-1] if extract else {}}


def build_line(built: dict[str, Any]) -> str:
    x = built["extract"]
    return (f"ingest: {built['ingest'].get('chunks', 0)} chunks; extract: {x.get('added', 0)} "
            f"added, {x.get('linked', 0)} linked, {x.get('reinforced', 0)} reinforced")


# -- the store -------------------------------------------------------------------------------
def memories(h: Any) -> list[dict[str, Any]]:
    """Every memory in the store, by id, whatever its status."""
    from hippo.memory.records import to_record

    return [to_record(r) for r in h.db.rows("SELECT * FROM memories ORDER BY id")]


def open_store(db: Path, cli: bool, listing: bool
               ) -> tuple[Any, dict[str, str] | None, dict[str, dict[str, Any]],
                          list[dict[str, Any]]]:
    """The built store opened for measuring: the handle, the CLI environment (`--cli`), its
    sessions and memories (printed with `--list`)."""
    import hippo

    h = hippo.open(db)
    known, mems = sessions(h), memories(h)
    if listing:
        print_memories(mems)
    return h, cli_env(db) if cli else None, known, mems


def sessions(h: Any) -> dict[str, dict[str, Any]]:
    rows = h.db.rows("SELECT session_key, parent_key, project, messages FROM echo_sessions")
    return {r["session_key"]: dict(r) for r in rows}


def root_session(key: str, known: dict[str, dict[str, Any]]) -> str:
    """A subagent's memories count for the session that started it."""
    while key in known and known[key].get("parent_key"):
        key = known[key]["parent_key"]
    return key


def memory_session(m: dict[str, Any]) -> str | None:
    """The (first) session a memory was extracted from."""
    s = (m.get("source") or {}).get("session")
    s = s[0] if isinstance(s, list) and s else s
    return str(s) if s else None


def per_session(mems: Iterable[dict[str, Any]], known: dict[str, dict[str, Any]]
                ) -> Counter[str]:
    out: Counter[str] = Counter()
    for m in mems:
        key = memory_session(m)
        if key:
            out[root_session(key, known)] += 1
    return out


def print_memories(mems: Iterable[dict[str, Any]]) -> None:
    """`--list`: every memory written, one line each: id, type, session, status, text."""
    for m in mems:
        text = " ".join(str(m["text"]).split())
        print(f"[{m['id']}] {m['type']:<10} {str(memory_session(m))[:8]:<8} "
              f"{m['status']:<6} {text}")


def prose_words(paths: Sequence[Path]) -> Counter[str]:
    """Words of conversation prose per session: the person's and the agent's messages as
    hippo's own readers see them (no tool calls or output, no compaction summary). A folder
    is a session's subagents and counts for the session it is named after."""
    from hippo.ingest.readers import detect, read_head

    out: Counter[str] = Counter()
    for path in paths:
        files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
        key = path.name if path.is_dir() else path.stem
        for f in files:
            res = detect(f, read_head(f)).read(f)
            out[key] += sum(len(m.text.split()) for m in res.messages
                            if m.kind == "message" and m.role in ("user", "assistant"))
    return out


def session_lines(counts: Counter[str], known: dict[str, dict[str, Any]],
                  words: Counter[str]) -> list[str]:
    """One line per session: its memories, per 100 messages and per 1,000 words of prose."""
    messages: Counter[str] = Counter()
    for key, row in known.items():
        messages[root_session(key, known)] += int(row["messages"] or 0)
    lines = []
    for key in sorted(messages):
        n, msgs, w = counts[key], messages[key], words.get(key, 0)
        lines.append(f"  {key}: {n} ({100 * n / msgs if msgs else 0:.1f} per 100 of {msgs} "
                     f"messages; {1000 * n / w if w else 0:.1f} per 1,000 of {w} words)")
    return lines


# -- asking ----------------------------------------------------------------------------------
def ask_brain(h: Any, question: str, env: dict[str, str] | None) -> list[str]:
    """The Brain's top 5 over every project (`hippo search --all-projects`)."""
    if env is not None:
        out = run_cli(["search", "--all-projects", "--json", "-n", str(LIMIT), question], env)
        return [r["text"] for r in json_lines(out)]
    import hippo

    return [r["text"] for r in hippo.search(h, question, limit=LIMIT, projects=None).results]


def ask_echo(h: Any, question: str, env: dict[str, str] | None) -> list[str]:
    """Echo's top 5 (`hippo echo`)."""
    if env is not None:
        return [r["text"] for r in json_lines(run_cli(["echo", "--json", "-n", str(LIMIT),
                                                       question], env))]
    from hippo.retrieve.echo_search import search

    return [r["text"] for r in search(h, question, limit=LIMIT).results]


def project_dir(base: Path, project: str) -> Path:
    """A directory whose project (outside git: its name) is `project`: the cwd of the hook
    and of the markdown recipe, as an agent working in that project would have it."""
    d = base / "projects" / project
    d.mkdir(parents=True, exist_ok=True)
    return d


def markdown(db: Path, question: str, cwd: Path) -> str:
    """What `hippo search --format markdown QUESTION` prints, run in `cwd`'s project."""
    return run_cli(["search", "--format", "markdown", question], cli_env(db), cwd=cwd)


def hook(db: Path, prompt: str, cwd: Path) -> str:
    """The additionalContext `hippo hook claude-code prompt` answers a UserPromptSubmit
    payload with ("" when it prints nothing)."""
    payload = json.dumps({"session_id": "bench", "transcript_path": "", "cwd": str(cwd),
                          "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    out = run_cli(["hook", "claude-code", "prompt"], cli_env(db), stdin=payload, cwd=cwd)
    if not out.strip():
        return ""
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def many(fn: Any, calls: Sequence[tuple[Any, ...]]) -> list[str]:
    """`fn(*args)` for every call, a few processes at once, in order."""
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(lambda args: fn(*args), calls))


def items(context: str) -> list[str]:
    """The memories of a markdown context (one `- ` bullet each), for per-result scoring."""
    return [line[2:] for line in context.splitlines() if line.startswith("- ")]


def median(values: Sequence[float]) -> float:
    import statistics

    return statistics.median(values) if values else 0.0


def rate(hits: int, n: int) -> float | None:
    return round(hits / n, 3) if n else None
