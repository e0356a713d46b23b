"""Does the prompt recipe stay quiet when nothing stored answers, and still answer otherwise?

The recipe is `hippo search --format markdown QUESTION` (and the prompt hook, which
prints the same memories): the search's top 5 in the question's project and global
memories, those scoring `MIN_SCORE` (0.3) or more, and nothing at all when
`hippo.retrieve.answerable` finds the question about words the scope never saw. It is
run in-process here, through the same functions, over three dev sets:

- DevMemBench dev (`bench/devmem.py`'s store): 10 `none` questions, 35 answerable;
- the session-recall dev sessions (`bench/session_recall.py`'s store): 45 answerable;
- LoCoMo dev (`../shared/data/locomo/locomo10-dev.json`): each conversation's
  observations as Brain memories (as `bench/locomo.py` stores them) and its turns as
  Echo chunks (as `bench/locomo_echo.py`), one project per conversation; category 5
  (adversarial: about a thing said of the other speaker, or never said) as unanswerable,
  categories 1-4 as answerable.

Per set, with the gate and without it (the score floor alone): how many unanswerable
questions get nothing printed (quiet), how many answerable ones get something (answered)
and how many get their answer among what is printed (hit: the set's own scoring, keys
for DevMemBench and session recall, evidence dia_ids for LoCoMo).

    python bench/quiet.py [--devmem-db FILE] [--recall-db FILE] [--locomo-db FILE] [--misses]

Each store is built when its file does not exist and reused when it does (the devmem
and session-recall files are those the two benches build with the same --db). The last
line of output is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_common as rc
from keys import hit as keys_hit

# (question, project, unanswerable, hit(printed records) -> bool)
Case = tuple[str, str, bool, Callable[[list[dict[str, Any]]], bool]]


def devmem_cases(db: Path, tmp: Path) -> Iterator[Case]:
    import devmem

    loaded = devmem.load(devmem.DATA)
    if loaded is None:
        sys.exit(f"quiet: no DevMemBench data in {devmem.DATA}")
    sessions, questions = loaded
    projects = {s["sessionId"]: s["metadata"]["project"] for s in sessions}
    devmem.build(sessions, db, tmp)
    for q in questions:
        keys, scope = q["keys"], q["scope"]
        yield (q["question"], devmem.question_project(q, projects), scope == "none",
               lambda rs, k=keys, s=scope: keys_hit([r["text"] for r in rs], k, s))


def recall_cases(db: Path) -> Iterator[Case]:
    import session_recall as sr

    import hippo

    qfile = sr.DATA / "session-recall-dev.json"
    if not qfile.is_file():
        sys.exit(f"quiet: no session-recall data in {sr.DATA}")
    print(rc.build_line(rc.build(db, sr.transcripts(sr.DATA))))
    h = hippo.open(db)
    known = rc.sessions(h)
    h.close()
    for q in json.loads(qfile.read_text(encoding="utf-8")):
        project = (known.get(q["session"]) or {}).get("project") or "default"
        keys, scope = q["keys"], q.get("scope", "one")
        yield (q["question"], project, False,
               lambda rs, k=keys, s=scope: keys_hit([r["text"] for r in rs], k, s))


def locomo_cases(db: Path) -> Iterator[Case]:
    import locomo
    import locomo_common as lc
    import locomo_echo

    import hippo

    convs = lc.load(lc.DEFAULT_DATA)
    if not db.exists():
        h = hippo.open(db)
        print(f"locomo: {locomo.load_brain(h, convs)['memories']} memories, "
              f"{locomo_echo.load_echo(h, convs, tokens=False)} Echo chunks")
        h.close()
    for c in convs:
        for q in c.questions:
            if q.category not in (1, 2, 3, 4, 5) or (q.category != 5 and not q.evidence):
                continue
            yield (q.question, c.sample_id, q.category == 5,
                   lambda rs, ev=set(q.evidence): any(ev & set(locomo.dia_ids(r)) for r in rs))


def measure(db: Path, cases: list[Case], misses: bool, label: str) -> dict[str, Any]:
    """The recipe over every case, with the gate and without it."""
    import hippo
    from hippo.layers.recall import LIMIT, MIN_SCORE, unanswered

    h = hippo.open(db)
    n: Counter[str] = Counter()
    for question, project, none, hit in cases:
        scope = (project, None)
        found = hippo.search(h, question, limit=LIMIT, projects=scope)
        printed = [r for r in found.results if r["score"] >= MIN_SCORE]
        why = unanswered(h, question, scope, [r["text"] for r in printed]) if printed else ""
        gated = [] if why else printed
        if none:
            n.update(none=1, quiet_floor=int(not printed), quiet=int(not gated))
            if misses and gated:
                print(f"SPOKE [{label}] {question[:90]}\n     top: {gated[0]['text'][:140]}")
        else:
            answer = hit(printed)
            n.update(answerable=1, answered_floor=int(bool(printed)),
                     answered=int(bool(gated)), hit_floor=int(answer),
                     hit=int(answer and bool(gated)))
            if misses and answer and not gated:
                print(f"LOST [{label}] {question[:90]}\n     why: {why}")
    h.close()
    return dict(n)


def line(name: str, c: dict[str, Any]) -> str:
    out = f"{name:<16}"
    if c.get("none"):
        out += (f" unanswerable {c['none']:>4}: quiet {c['quiet']:>4} ({c['quiet'] / c['none']:.3f};"
                f" floor alone {c['quiet_floor']})")
    if c.get("answerable"):
        a = c["answerable"]
        out += (f" answerable {a:>4}: answered {c['answered']:>4} ({c['answered'] / a:.3f};"
                f" floor alone {c['answered_floor']}), hit {c['hit']} (floor alone "
                f"{c['hit_floor']})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devmem-db", type=Path, help="bench/devmem.py's store (built if missing)")
    ap.add_argument("--recall-db", type=Path,
                    help="bench/session_recall.py's store (built if missing)")
    ap.add_argument("--locomo-db", type=Path, help="LoCoMo's Brain + Echo store (built if "
                    "missing; ~3 min)")
    ap.add_argument("--misses", action="store_true", help="print unanswerable questions the "
                    "recipe answered and answers the gate withheld")
    args = ap.parse_args(argv)
    tmp = tempfile.TemporaryDirectory(prefix="hippo-quiet-")
    base = Path(tmp.name)
    os.environ.setdefault("HIPPO_HOME", str(base / "home"))
    Path(os.environ["HIPPO_HOME"]).mkdir(parents=True, exist_ok=True)
    dm = args.devmem_db or base / "devmem.db"
    sr = args.recall_db or base / "recall.db"
    lo = args.locomo_db or base / "locomo.db"
    results = {
        "devmem": measure(dm, list(devmem_cases(dm, base)), args.misses, "devmem"),
        "session_recall": measure(sr, list(recall_cases(sr)), args.misses, "recall"),
        "locomo": measure(lo, list(locomo_cases(lo)), args.misses, "locomo"),
    }
    for name, c in results.items():
        print(line(name, c))
    print(json.dumps(results))
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
