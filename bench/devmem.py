"""DevMemBench (dev portion): what a developer asks after chat sessions with a coding assistant.

Each session of `sessions-dev.json` becomes a generic JSON-lines transcript (one file per
session, in a folder per project; every message `{session_id, cwd, role, content,
timestamp}` with its session's date, and `cwd` a directory named after the session's
`metadata.project`, so that is the project hippo records). `hippo ingest` reads them into a
fresh database, `hippo extract` runs with its defaults (whatever extractor is installed),
then for every question of `questions-dev.json`:

- the Brain's top 5 (`hippo search --all-projects`) and Echo's top 5 (`hippo echo`), scored
  by the question's scope (`bench/keys.py`): `one`, `union`; for `knowledge-update` questions
  with `stale` groups, whether the Brain's top result is the stale answer;
- what the agent receives: `hippo hook claude-code prompt` with the question as the prompt,
  run in the question's project (its last session's; `dashboard-app`, the one these sessions
  are about, for a question with none): a hit when its context's memories hold the keys by
  scope, and its tokens;
- for `none` questions (never answered): whether the prompt recipe `hippo search --format
  markdown QUESTION`, run in that project, prints nothing, and whether the hook does (quiet).

Reported: Brain, Echo and hook hit@5 overall and per question type, quiet counts, stale top
results, memories written (per session, per 1,000 words of conversation prose), the median
tokens of the Brain's five against Echo's five and of the hook's context.

    python bench/devmem.py [--data DIR] [--db FILE] [--list] [--misses] [--cli]

`--list` prints every memory written, `--misses` the questions the Brain missed (and the
`none` questions the recipe answered) with its top result, `--cli` runs the Brain and Echo
searches through the `hippo` command. `--db` builds or reuses a database; its transcripts
are kept beside it (DB.devmem/), so a second run adds nothing. The last line of output is
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_common as rc
from keys import hit, stale_top

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "devmembench"
DEFAULT_PROJECT = "dashboard-app"


def write_transcripts(sessions: list[dict[str, Any]], base: Path) -> list[Path]:
    """One generic JSON-lines file per session under `base/transcripts/PROJECT/`; each
    message carries the session's id, its date and the project's directory as `cwd`."""
    paths = []
    for s in sessions:
        project = s["metadata"]["project"]
        cwd = rc.project_dir(base, project)
        folder = base / "transcripts" / project
        folder.mkdir(parents=True, exist_ok=True)
        stamp = f"{s['metadata']['date']}T00:00:00Z"
        path = folder / f"{s['sessionId']}.jsonl"
        text = "".join(json.dumps({"session_id": s["sessionId"], "cwd": str(cwd),
                                   "role": m["role"], "content": m["content"],
                                   "timestamp": stamp}) + "\n" for m in s["messages"])
        # A reused database has read these files: the same bytes leave its watermarks be.
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def question_project(q: dict[str, Any], projects: dict[str, str]) -> str:
    """The project a developer asks in: that of the question's last session."""
    for sid in reversed(q.get("sessions") or []):
        if sid in projects:
            return projects[sid]
    return DEFAULT_PROJECT


def load(data: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """The sessions and questions of a devmembench folder (None: not there)."""
    sfile, qfile = data / "sessions-dev.json", data / "questions-dev.json"
    if not sfile.is_file() or not qfile.is_file():
        return None
    return (json.loads(sfile.read_text(encoding="utf-8")),
            json.loads(qfile.read_text(encoding="utf-8")))


def build(sessions: list[dict[str, Any]], db: Path | None, tmp: Path
          ) -> tuple[Path, Path, list[Path]]:
    """Transcripts written, ingested and extracted into `db` (default: in `tmp`): the
    database, the folder holding the transcripts and project directories, the files."""
    # A reused database keeps its transcripts beside it, so a second run adds nothing.
    base = db.parent / f"{db.name}.devmem" if db else tmp
    db = db or base / "hippo.db"
    paths = write_transcripts(sessions, base)
    print(rc.build_line(rc.build(db, paths)))
    return db, base, paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the devmembench folder")
    ap.add_argument("--db", type=Path, help="database to build or reuse (default: a temp file)")
    ap.add_argument("--list", action="store_true", help="print every memory written")
    ap.add_argument("--misses", action="store_true", help="print the Brain's misses")
    ap.add_argument("--cli", action="store_true", help="search through the hippo command")
    args = ap.parse_args(argv)
    loaded = load(args.data)
    if loaded is None:
        print(f"devmem: no sessions-dev.json / questions-dev.json in {args.data}",
              file=sys.stderr)
        return 2
    sessions, questions = loaded
    projects = {s["sessionId"]: s["metadata"]["project"] for s in sessions}
    tmp = tempfile.TemporaryDirectory(prefix="hippo-devmem-")
    db, base, paths = build(sessions, args.db, Path(tmp.name))
    result = measure(db, base, questions, projects, paths, args)
    print(json.dumps(result))
    tmp.cleanup()
    return 0


def measure(db: Path, base: Path, questions: list[dict[str, Any]], projects: dict[str, str],
            paths: list[Path], args: argparse.Namespace) -> dict[str, Any]:
    from hippo.embed.tokens import count

    h, env, known, mems = rc.open_store(db, args.cli, args.list)
    brain = [rc.ask_brain(h, q["question"], env) for q in questions]
    echo = [rc.ask_echo(h, q["question"], env) for q in questions]
    h.close()
    cwds = [rc.project_dir(base, question_project(q, projects)) for q in questions]
    calls = [(db, q["question"], cwd) for q, cwd in zip(questions, cwds, strict=True)]
    hooks = rc.many(rc.hook, calls)
    quiet_calls = [c for c, q in zip(calls, questions, strict=True) if q["scope"] == "none"]
    recipe = iter(rc.many(rc.markdown, quiet_calls))

    by_type: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[tuple[dict[str, Any], str]] = []
    for q, b, e, ctx in zip(questions, brain, echo, hooks, strict=True):
        c = by_type[q["type"]]
        if q["scope"] == "none":
            md = next(recipe)
            c.update(none=1, quiet=int(hit([md], [], "none")),
                     hook_quiet=int(hit([ctx], [], "none")))
            if md.strip():
                misses.append((q, rc.items(md)[0] if rc.items(md) else md.strip()))
            continue
        bh = hit(b, q["keys"], q["scope"])
        c.update(n=1, brain=int(bh), brain_union=int(hit(b, q["keys"], "union")),
                 echo=int(hit(e, q["keys"], q["scope"])),
                 hook=int(hit(rc.items(ctx), q["keys"], q["scope"])),
                 hook_context=int(hit([ctx], q["keys"], q["scope"])) if ctx else 0)
        if q.get("stale"):
            c.update(stale_n=1, stale=int(stale_top(b, q["keys"], q["stale"])))
        if not bh:
            misses.append((q, b[0] if b else "-"))

    answered = sum(c["n"] for c in by_type.values())
    nones = sum(c["none"] for c in by_type.values())
    quiet = sum(c["quiet"] for c in by_type.values())
    hook_quiet = sum(c["hook_quiet"] for c in by_type.values())

    print(f"{'type':<26}{'n':>4}{'brain':>8}{'echo':>8}{'hook':>8}")
    for t in sorted(by_type):
        c = by_type[t]
        if not c["n"]:
            continue
        print(f"{t:<26}{c['n']:>4}{c['brain'] / c['n']:>8.3f}{c['echo'] / c['n']:>8.3f}"
              f"{c['hook'] / c['n']:>8.3f}")
    tb, te, th = (sum(c[k] for c in by_type.values()) for k in ("brain", "echo", "hook"))
    print(f"{'all answered':<26}{answered:>4}{tb / answered:>8.3f}{te / answered:>8.3f}"
          f"{th / answered:>8.3f}   ({tb}, {te}, {th} of {answered})")
    print(f"the Brain's five together (union, every question): "
          f"{sum(c['brain_union'] for c in by_type.values())} of {answered}; the hook's context "
          f"as one text: {sum(c['hook_context'] for c in by_type.values())} of {answered}")
    print(f"none ({nones}): markdown recipe quiet on {quiet}, prompt hook quiet on "
          f"{hook_quiet}")
    stale_n = sum(c["stale_n"] for c in by_type.values())
    stale = sum(c["stale"] for c in by_type.values())
    print(f"knowledge updates with stale groups: {stale} of {stale_n} with a stale Brain top 1")

    counts = rc.per_session(mems, known)
    words = rc.prose_words(paths)
    total_words = sum(words.values())
    per_1000 = 1000 * len(mems) / total_words if total_words else 0.0
    print(f"memories: {len(mems)} ({per_1000:.1f} per 1,000 words of conversation prose); "
          "per session:")
    print("\n".join(rc.session_lines(counts, known, words)))
    brain_tokens = [sum(count(t) for t in b) for b in brain]
    echo_tokens = [sum(count(t) for t in e) for e in echo]
    hook_tokens = [count(ctx) for ctx in hooks]
    bt, et, ht = rc.median(brain_tokens), rc.median(echo_tokens), rc.median(hook_tokens)
    spoke = sum(1 for ctx in hooks if ctx)
    print(f"tokens, median: brain top 5 {bt:.0f}, echo top 5 {et:.0f} "
          f"(ratio {bt / et if et else 0:.2f}), hook context {ht:.0f} "
          f"(spoke on {spoke} of {len(hooks)} prompts)")
    if args.misses:
        for q, top in misses:
            label = "SPOKE" if q["scope"] == "none" else "MISS"
            print(f"{label} {q['id']} [{q['type']}] {q['question'][:90]}\n"
                  f"     keys {q['keys']}\n     top: {' '.join(top.split())[:160]}")
    return {
        "n": len(questions),
        "answered": answered,
        "brain_hit@5": rc.rate(tb, answered),
        "echo_hit@5": rc.rate(te, answered),
        "hook_hit": rc.rate(th, answered),
        "hook_context_hit": rc.rate(sum(c["hook_context"] for c in by_type.values()), answered),
        "brain_union_hit@5": rc.rate(sum(c["brain_union"] for c in by_type.values()), answered),
        "brain_hits": tb, "echo_hits": te, "hook_hits": th,
        "by_type": {t: {"n": c["n"], "brain": c["brain"], "echo": c["echo"], "hook": c["hook"]}
                    for t, c in sorted(by_type.items()) if c["n"]},
        "none": nones, "markdown_quiet": quiet, "hook_quiet": hook_quiet,
        "stale_cases": stale_n, "stale_top1": stale,
        "memories": len(mems),
        "memories_per_session": dict(sorted(counts.items())),
        "memories_per_1000_words": round(per_1000, 2),
        "prose_words": total_words,
        "brain_tokens_top5": bt, "echo_tokens_top5": et, "hook_tokens": ht,
        "hook_spoke": spoke,
    }


if __name__ == "__main__":
    sys.exit(main())
