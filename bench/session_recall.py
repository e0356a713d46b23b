"""Session recall: can the Brain answer what a developer asks days after a real agent session?

Ingests real transcripts into a fresh database with `hippo ingest`, runs `hippo extract` with
the default settings (whatever extractor is installed), then asks every question three ways:
the Brain (the search `hippo search --all-projects` runs, top 5), Echo (`hippo echo`, top 5),
and what the agent receives: `hippo hook claude-code prompt` with the question as the prompt,
run in the session's project. A question is a hit when one result's text contains one
alternative of every key group (case-insensitive; `bench/keys.py`, the question's `scope`,
`one` when it has none); for the hook, one memory of its context. Reported: hits overall and
per `where` (summary / after_compaction / anywhere), memories written per session (per 100
messages and per 1,000 words of conversation prose), and the tokens (shipped tokenizer) of
the five Brain results, Echo's five and the hook's context.

    python bench/session_recall.py [--data DIR] [--questions FILE] [--db FILE] [--list]
                                   [--cli] [--misses] [--drop-summaries]

`--list` prints every memory written (id, type, session, status, text), `--misses` the
questions the Brain missed with its top result, `--cli` runs every Brain and Echo search
through the `hippo` command instead of in-process (same pipeline; slower; the hook always
is). `--db` reuses a database: ingest and extract then add nothing to it.
`--drop-summaries` ingests copies of the sessions without their compaction summaries (the
summary line and the compaction agent's own transcript): sessions that never compacted, whose
Brain learns from the turns and tool calls alone. The last line of output is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_common as rc
from keys import hit

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code-sessions"
LIMIT = rc.LIMIT
WHERE = ("summary", "after_compaction", "anywhere", "all")


def transcripts(data: Path) -> list[Path]:
    """The sessions of a folder: top-level transcript files and their session folders."""
    out = sorted(p for p in data.iterdir() if p.suffix == ".jsonl")
    out += sorted(p for p in data.iterdir() if p.is_dir())
    return out


def without_summaries(paths: list[Path], into: Path) -> list[Path]:
    """Copies of `paths` in `into` with every compaction summary left out: a Claude Code
    `isCompactSummary` line, and a subagent transcript of the compaction (`agent-acompact-*`)."""
    out = []
    for path in paths:
        target = into / path.name
        if path.is_dir():
            shutil.copytree(path, target, ignore=shutil.ignore_patterns("agent-acompact-*"))
        else:
            with path.open(encoding="utf-8") as src, target.open("w", encoding="utf-8") as dst:
                dst.writelines(line for line in src if '"isCompactSummary":true' not in
                               line.replace(" ", ""))
        out.append(target)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder of transcripts")
    ap.add_argument("--questions", type=Path, help="questions file (default: DATA/"
                    "session-recall-dev.json)")
    ap.add_argument("--db", type=Path, help="database to build or reuse (default: a temp file)")
    ap.add_argument("--list", action="store_true", help="print every memory written")
    ap.add_argument("--misses", action="store_true", help="print the Brain's misses")
    ap.add_argument("--cli", action="store_true", help="search through the hippo command")
    ap.add_argument("--drop-summaries", action="store_true",
                    help="ingest the sessions without their compaction summaries")
    args = ap.parse_args(argv)
    qfile = args.questions or args.data / "session-recall-dev.json"
    if not args.data.is_dir() or not qfile.is_file():
        print(f"session_recall: no data at {args.data} (or no {qfile.name})", file=sys.stderr)
        return 2
    questions = json.loads(qfile.read_text(encoding="utf-8"))

    tmp = tempfile.TemporaryDirectory(prefix="hippo-recall-")
    base = Path(tmp.name)
    db = args.db or base / "hippo.db"
    paths = transcripts(args.data)
    if args.drop_summaries:
        (base / "sessions").mkdir()
        paths = without_summaries(paths, base / "sessions")
    print(rc.build_line(rc.build(db, paths)))

    from hippo.embed.tokens import count

    h, env, known, mems = rc.open_store(db, args.cli, args.list)
    counts = rc.per_session(mems, known)
    words = rc.prose_words(paths)

    brain = [rc.ask_brain(h, q["question"], env) for q in questions]
    echo = [rc.ask_echo(h, q["question"], env) for q in questions]
    h.close()
    cwds = [rc.project_dir(base, (known.get(q["session"]) or {}).get("project") or "default")
            for q in questions]
    hooks = rc.many(rc.hook, [(db, q["question"], cwd) for q, cwd in zip(questions, cwds,
                                                                        strict=True)])

    by_where: dict[str, Counter[str]] = defaultdict(Counter)
    misses = []
    for q, b, e, ctx in zip(questions, brain, echo, hooks, strict=True):
        scope = q.get("scope", "one")
        bh, eh = hit(b, q["keys"], scope), hit(e, q["keys"], scope)
        hh = hit(rc.items(ctx), q["keys"], scope)
        for where in (q["where"], "all"):
            by_where[where].update(n=1, brain=int(bh), echo=int(eh), hook=int(hh))
        if not bh:
            misses.append((q, b[:1], eh))
    brain_tokens = [sum(count(t) for t in b) for b in brain]
    echo_tokens = [sum(count(t) for t in e) for e in echo]
    hook_tokens = [count(ctx) for ctx in hooks]

    print(f"{'where':<18}{'n':>4}{'brain':>8}{'echo':>8}{'hook':>8}")
    for where in WHERE:
        c = by_where.get(where)
        if c:
            print(f"{where:<18}{c['n']:>4}{c['brain'] / c['n']:>8.3f}{c['echo'] / c['n']:>8.3f}"
                  f"{c['hook'] / c['n']:>8.3f}")
    total_words = sum(words.values())
    print(f"memories: {len(mems)} ({1000 * len(mems) / total_words if total_words else 0:.1f} "
          f"per 1,000 words of conversation prose); per session:")
    print("\n".join(rc.session_lines(counts, known, words)))
    bt, et, ht = rc.median(brain_tokens), rc.median(echo_tokens), rc.median(hook_tokens)
    print(f"tokens, median: brain top {LIMIT} {bt:.0f}, echo top {LIMIT} {et:.0f} "
          f"(ratio {bt / et if et else 0:.2f}), hook context {ht:.0f} "
          f"(spoke on {sum(1 for c in hooks if c)} of {len(hooks)} prompts)")
    if args.misses:
        for q, top, echo_hit in misses:
            print(f"MISS [{q['where']}]{' (Echo hits)' if echo_hit else ''} "
                  f"{q['question'][:90]}\n     keys {q['keys']}\n"
                  f"     top: {(top[0] if top else '-')[:160]}")
    a = by_where["all"]
    ac = by_where.get("after_compaction", Counter(n=0))
    print(json.dumps(figures(a, ac, len(mems), total_words, bt, et, ht)))
    tmp.cleanup()
    return 0


def figures(a: Counter[str], ac: Counter[str], mems: int, words: int, bt: float, et: float,
            ht: float) -> dict[str, Any]:
    return {
        "n": a["n"],
        "brain_hit@5": rc.rate(a["brain"], a["n"]),
        "echo_hit@5": rc.rate(a["echo"], a["n"]),
        "hook_hit": rc.rate(a["hook"], a["n"]),
        "after_compaction_hit@5": rc.rate(ac["brain"], ac["n"]),
        "memories": mems,
        "memories_per_1000_words": round(1000 * mems / words, 2) if words else None,
        "brain_tokens_top5": bt,
        "echo_tokens_top5": et,
        "hook_tokens": ht,
    }


if __name__ == "__main__":
    sys.exit(main())
