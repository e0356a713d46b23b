"""Currency: does the Brain answer with what is true now, not what a session later overturned?

Two sets of labelled cases, each a question whose answer changed during the sessions:

- `currency-dev.json` (../shared/data/currency/): 31 claims of the three dev spotter
  sessions that the same session later overturned (kinds: done, resolved, replaced, state).
  The sessions are ingested and extracted exactly as `bench/session_recall.py` does.
- the `knowledge-update` questions of DevMemBench's dev portion (../shared/data/devmembench/),
  built as `bench/devmem.py` does.

For each case, the top 5 of `hippo search --all-projects QUESTION` (in-process, or `--cli`):
the current truth is in the top 5 when one result holds every key group (`bench/keys.py`),
and the top 1 is stale when it holds the stale groups without the keys. Echo's top 5 is
reported beside it (it keeps every word, old and new). Reported per kind and overall.
`as_of_old@5` asks the spotter cases again `--as-of` the moment the old claim was said (the
start of the first Echo chunk that holds it): the old claim (its stale groups) is in that
top 5 when the store answers what was held then.

    python bench/currency.py [--data DIR] [--transcripts DIR] [--devmem DIR] [--db FILE]
                             [--devmem-db FILE] [--misses] [--cli]

`--db` builds or reuses the spotter database (the one `session_recall.py --db` builds),
`--devmem-db` the DevMemBench one (as `devmem.py --db`). `--misses` prints every case whose
current truth is not in the top 5 or whose top 1 is stale, with the top result. The last
line of output is one JSON object.
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

import devmem
import recall_common as rc
import session_recall
from keys import hit, stale_top

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "currency"
KINDS = ("done", "resolved", "replaced", "state")
UPDATE = "knowledge-update"


def cases_of(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DevMemBench's knowledge-update questions as currency cases (kind `knowledge-update`)."""
    return [{**q, "kind": UPDATE, "session": ",".join(q.get("sessions") or [])}
            for q in questions if q["type"] == UPDATE and q["keys"]]


def score(cases: list[dict[str, Any]], brain: list[list[str]], echo: list[list[str]]
          ) -> dict[str, Counter[str]]:
    """Per kind (and `all`): n, current truth in the Brain's top 5, stale Brain top 1, the
    same two for Echo."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for c, b, e in zip(cases, brain, echo, strict=True):
        stale = c.get("stale") or []
        for kind in (c["kind"], "all"):
            out[kind].update(n=1, current=int(hit(b, c["keys"], "one")),
                             stale=int(stale_top(b, c["keys"], stale)),
                             echo_current=int(hit(e, c["keys"], "one")),
                             echo_stale=int(stale_top(e, c["keys"], stale)))
    return out


def ask(db: Path, cases: list[dict[str, Any]], cli: bool) -> tuple[list[list[str]],
                                                                    list[list[str]]]:
    import hippo

    env = rc.cli_env(db) if cli else None
    h = hippo.open(db)
    brain = [rc.ask_brain(h, c["question"], env) for c in cases]
    echo = [rc.ask_echo(h, c["question"], env) for c in cases]
    h.close()
    return brain, echo


def claim_times(h: Any, cases: list[dict[str, Any]]) -> list[str | None]:
    """For each case, the start of the first Echo chunk holding its old claim."""
    rows = h.db.rows("SELECT text, started_at FROM echo_chunks ORDER BY started_at, id")
    texts = [(" ".join(r["text"].split()), r["started_at"]) for r in rows if r["started_at"]]
    out: list[str | None] = []
    for c in cases:
        said = " ".join(c["old_claim"].split())
        out.append(next((t for text, t in texts if said in text), None))
    return out


def as_of_old(db: Path, cases: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(cases whose old claim is in the top 5 as of when it was said, cases where a memory
    holding it was valid then, cases asked)."""
    import hippo

    h = hippo.open(db)
    mems = [m for m in rc.memories(h) if m["status"] in ("active", "done")]
    found = held = asked = 0
    for c, t in zip(cases, claim_times(h, cases), strict=True):
        if t is None or not c.get("stale"):
            continue
        asked += 1
        held += int(any(hit([m["text"]], c["stale"], "one") and m["valid_from"] <= t
                        and (not m["valid_to"] or m["valid_to"] > t) for m in mems))
        top = [r["text"] for r in hippo.search(h, c["question"], limit=rc.LIMIT, projects=None,
                                               as_of=t).results]
        found += int(any(hit([x], c["stale"], "one") for x in top))
    h.close()
    return found, held, asked


def table(title: str, counts: dict[str, Counter[str]], kinds: tuple[str, ...]) -> None:
    print(f"{title:<20}{'n':>4}{'current@5':>11}{'stale@1':>9}{'echo cur':>10}{'echo st':>9}")
    for kind in (*kinds, "all"):
        c = counts.get(kind)
        if c:
            print(f"  {kind:<18}{c['n']:>4}{c['current']:>11}{c['stale']:>9}"
                  f"{c['echo_current']:>10}{c['echo_stale']:>9}")


def figures(c: Counter[str]) -> dict[str, Any]:
    return {"n": c["n"], "current@5": c["current"], "stale@1": c["stale"],
            "current_rate": rc.rate(c["current"], c["n"]),
            "echo_current@5": c["echo_current"], "echo_stale@1": c["echo_stale"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the currency folder")
    ap.add_argument("--transcripts", type=Path, default=session_recall.DATA,
                    help="the spotter sessions' folder")
    ap.add_argument("--devmem", type=Path, default=devmem.DATA, help="the devmembench folder")
    ap.add_argument("--db", type=Path, help="spotter database to build or reuse")
    ap.add_argument("--devmem-db", type=Path, help="DevMemBench database to build or reuse")
    ap.add_argument("--misses", action="store_true", help="print the cases answered wrong")
    ap.add_argument("--cli", action="store_true", help="search through the hippo command")
    args = ap.parse_args(argv)
    cfile = args.data / "currency-dev.json"
    loaded = devmem.load(args.devmem)
    if not cfile.is_file() or not args.transcripts.is_dir() or loaded is None:
        print(f"currency: no data ({cfile}, {args.transcripts}, {args.devmem})",
              file=sys.stderr)
        return 2
    cases = json.loads(cfile.read_text(encoding="utf-8"))
    sessions, questions = loaded
    updates = cases_of(questions)

    tmp = tempfile.TemporaryDirectory(prefix="hippo-currency-")
    spotter_db = args.db or Path(tmp.name) / "spotter.db"
    print("spotter " + rc.build_line(rc.build(spotter_db,
                                               session_recall.transcripts(args.transcripts))))
    brain, echo = ask(spotter_db, cases, args.cli)
    print("devmem ", end="")
    dm_db, _, _ = devmem.build(sessions, args.devmem_db, Path(tmp.name) / "devmem")
    dm_brain, dm_echo = ask(dm_db, updates, args.cli)

    old_found, old_held, old_asked = as_of_old(spotter_db, cases)
    spotter = score(cases, brain, echo)
    dm = score(updates, dm_brain, dm_echo)
    both = score(cases + updates, brain + dm_brain, echo + dm_echo)
    table("currency-dev", spotter, KINDS)
    table("devmembench", dm, (UPDATE,))
    print(f"all {both['all']['n']} cases: current truth in the Brain's top 5 for "
          f"{both['all']['current']}, a stale top 1 for {both['all']['stale']}")
    print(f"--as-of when the old claim was said: it is in the top 5 for {old_found} of "
          f"{old_asked} spotter cases ({old_held} where the Brain held it then)")
    if args.misses:
        for c, b in zip(cases + updates, brain + dm_brain, strict=True):
            cur, st = hit(b, c["keys"], "one"), stale_top(b, c["keys"], c.get("stale") or [])
            if cur and not st:
                continue
            label = ("STALE " if st else "") + ("" if cur else "MISS")
            print(f"{label.strip()} [{c['kind']}] {c['session'][:8]} {c['question'][:90]}\n"
                  f"     keys {c['keys']} stale {c.get('stale')}\n"
                  f"     top: {' '.join((b[0] if b else '-').split())[:160]}")
    print(json.dumps({
        "currency": figures(spotter["all"]),
        "by_kind": {k: figures(spotter[k]) for k in KINDS if k in spotter},
        "knowledge_update": figures(dm["all"]),
        "all": figures(both["all"]),
        "as_of_old@5": old_found, "as_of_held": old_held, "as_of_asked": old_asked,
    }))
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
