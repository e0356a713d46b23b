"""Session recall: can the Brain answer what a developer asks days after a real agent session?

Ingests real transcripts into a fresh database with `hippo ingest`, runs `hippo extract` with
the default settings (the offline `rules` extractor), then asks every question twice: the
Brain (the search `hippo search --all-projects` runs, top 5) and Echo (`hippo echo`, top 5).
A question is a hit when one result's text contains one alternative of every key group
(case-insensitive). Reported: hits overall and per `where` (summary / after_compaction /
anywhere), memories written per session and per 100 messages, and the tokens (shipped
tokenizer) of the five Brain results against Echo's five.

    python bench/session_recall.py [--data DIR] [--questions FILE] [--db FILE] [--list]
                                   [--cli] [--misses]

`--list` prints every memory written (type, session, text), `--misses` the questions the
Brain missed with its top result, `--cli` runs every search through the `hippo` command
instead of in-process (same pipeline; slower). `--db` reuses a database: ingest and extract
then add nothing to it. The last line of output is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code-sessions"
LIMIT = 5


def transcripts(data: Path) -> list[Path]:
    """The sessions of a folder: top-level transcript files and their session folders."""
    out = sorted(p for p in data.iterdir() if p.suffix == ".jsonl")
    out += sorted(p for p in data.iterdir() if p.is_dir())
    return out


def hits(text: str, keys: list[list[str]]) -> bool:
    low = text.lower()
    return all(any(alt.lower() in low for alt in group) for group in keys)


def run_cli(args: list[str], env: dict[str, str]) -> list[dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "hippo", *args], env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode not in (0, 3):
        sys.exit(f"hippo {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def build(db: Path, data: Path) -> dict[str, Any]:
    """`hippo ingest` then `hippo extract`, both with their defaults, into `db`."""
    env = {**os.environ, "HIPPO_DB": str(db), "HIPPO_NO_PROGRESS": "1"}
    ingest = run_cli(["ingest", "--idle-minutes", "0", *map(str, transcripts(data))], env)
    extract = run_cli(["extract"], env)
    return {"ingest": ingest[-1] if ingest else {}, "extract": extract[-1] if extract else {}}


def memories(h: Any) -> list[dict[str, Any]]:
    from hippo.records import to_record

    return [to_record(r) for r in h.db.rows("SELECT * FROM memories ORDER BY id")]


def sessions(h: Any) -> dict[str, dict[str, Any]]:
    rows = h.db.rows("SELECT session_key, parent_key, messages FROM echo_sessions")
    return {r["session_key"]: dict(r) for r in rows}


def root_session(key: str, known: dict[str, dict[str, Any]]) -> str:
    """A subagent's memories count for the session that started it."""
    while key in known and known[key].get("parent_key"):
        key = known[key]["parent_key"]
    return key


def ask_brain(h: Any, question: str, cli_env: dict[str, str] | None) -> list[str]:
    if cli_env is not None:
        return [r["text"] for r in run_cli(["search", "--all-projects", "--json",
                                            "-n", str(LIMIT), question], cli_env)]
    import hippo

    return [r["text"] for r in hippo.search(h, question, limit=LIMIT, projects=None).results]


def ask_echo(h: Any, question: str, cli_env: dict[str, str] | None) -> list[str]:
    if cli_env is not None:
        return [r["text"] for r in run_cli(["echo", "--json", "-n", str(LIMIT), question],
                                           cli_env)]
    from hippo.retrieve.echo_search import search

    return [r["text"] for r in search(h, question, limit=LIMIT).results]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder of transcripts")
    ap.add_argument("--questions", type=Path, help="questions file (default: DATA/"
                    "session-recall-dev.json)")
    ap.add_argument("--db", type=Path, help="database to build or reuse (default: a temp file)")
    ap.add_argument("--list", action="store_true", help="print every memory written")
    ap.add_argument("--misses", action="store_true", help="print the Brain's misses")
    ap.add_argument("--cli", action="store_true", help="search through the hippo command")
    args = ap.parse_args(argv)
    qfile = args.questions or args.data / "session-recall-dev.json"
    if not args.data.is_dir() or not qfile.is_file():
        print(f"session_recall: no data at {args.data} (or no {qfile.name})", file=sys.stderr)
        return 2
    questions = json.loads(qfile.read_text(encoding="utf-8"))

    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory(prefix="hippo-recall-")
        args.db = Path(tmp.name) / "hippo.db"
    built = build(args.db, args.data)
    x = built["extract"]
    print(f"ingest: {built['ingest'].get('chunks', 0)} chunks; extract: {x.get('added', 0)} "
          f"added, {x.get('linked', 0)} linked, {x.get('reinforced', 0)} reinforced")

    import hippo
    from hippo.tokens import count

    h = hippo.open(args.db)
    cli_env = ({**os.environ, "HIPPO_DB": str(args.db), "HIPPO_NO_PROGRESS": "1"}
               if args.cli else None)
    known = sessions(h)
    mems = memories(h)
    per_session: Counter[str] = Counter()
    for m in mems:
        s = (m.get("source") or {}).get("session")
        for key in s if isinstance(s, list) else [s]:
            if key:
                per_session[root_session(key, known)] += 1
                break
    messages: Counter[str] = Counter()
    for key, row in known.items():
        messages[root_session(key, known)] += int(row["messages"] or 0)

    if args.list:
        for m in mems:
            s = (m.get("source") or {}).get("session")
            s = s[0] if isinstance(s, list) else s
            print(f"[{m['id']}] {m['type']:<10} {str(s)[:8]} {m['status']:<6} {m['text']}")

    by_where: dict[str, Counter[str]] = defaultdict(Counter)
    brain_tokens: list[int] = []
    echo_tokens: list[int] = []
    misses = []
    for q in questions:
        b = ask_brain(h, q["question"], cli_env)
        e = ask_echo(h, q["question"], cli_env)
        bh, eh = any(hits(t, q["keys"]) for t in b), any(hits(t, q["keys"]) for t in e)
        for where in (q["where"], "all"):
            by_where[where].update(n=1, brain=int(bh), echo=int(eh))
        brain_tokens.append(sum(count(t) for t in b))
        echo_tokens.append(sum(count(t) for t in e))
        if not bh:
            misses.append((q, b[:1]))
    h.close()

    print(f"{'where':<18}{'n':>4}{'brain':>8}{'echo':>8}")
    for where in ("summary", "after_compaction", "anywhere", "all"):
        c = by_where.get(where)
        if c:
            print(f"{where:<18}{c['n']:>4}{c['brain'] / c['n']:>8.3f}{c['echo'] / c['n']:>8.3f}")
    print("memories per session (per 100 messages):")
    for key in sorted(messages):
        if messages[key]:
            print(f"  {key}: {per_session[key]} ({100 * per_session[key] / messages[key]:.1f} "
                  f"per 100 of {messages[key]} messages)")
    bt, et = statistics.median(brain_tokens), statistics.median(echo_tokens)
    print(f"tokens of the top {LIMIT}, median: brain {bt:.0f}, echo {et:.0f} "
          f"(ratio {bt / et if et else 0:.2f}); mean: brain {statistics.mean(brain_tokens):.0f}, "
          f"echo {statistics.mean(echo_tokens):.0f}")
    if args.misses:
        for q, top in misses:
            print(f"MISS [{q['where']}] {q['question'][:90]}\n     keys {q['keys']}\n"
                  f"     top: {(top[0] if top else '-')[:160]}")
    a = by_where["all"]
    ac = by_where.get("after_compaction", Counter(n=0))
    print(json.dumps({
        "n": a["n"],
        "brain_hit@5": round(a["brain"] / a["n"], 3),
        "echo_hit@5": round(a["echo"] / a["n"], 3),
        "after_compaction_hit@5": round(ac["brain"] / ac["n"], 3) if ac["n"] else None,
        "memories": len(mems),
        "brain_tokens_top5": bt,
        "echo_tokens_top5": et,
    }))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
