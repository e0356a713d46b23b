"""Where the Brain's LoCoMo misses are: top 5, ranks 6-10, beyond, or out of reach.

Usage: python bench/locomo_misses.py --db /tmp/locomo_q.db [--data FILE] [--show 10]

Needs a database built by `python bench/locomo.py --db PATH`. Prints the count of each
outcome for the full pipeline (dataset evidence) and the top results of the first
`--show` questions whose evidence sits at ranks 6-10.
"""

from __future__ import annotations

import argparse
import collections
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo_common as lc
from locomo import dia_ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=lc.DEFAULT_DATA)
    ap.add_argument("--show", type=int, default=10)
    args = ap.parse_args()
    if not args.db.exists():
        sys.exit(f"locomo_misses: no database at {args.db}; build it with "
                 f"python bench/locomo.py --db {args.db}")
    with lc.private_home("hippo-misses-"):
        import hippo

        h = hippo.open(args.db, embedder="local")
        convs = lc.load(args.data)
        carried = {c.sample_id: {d for o in c.observations for d in o.dia_ids}
                   for c in convs}
        outcomes: collections.Counter[str] = collections.Counter()
        shown = 0
        for c, q in lc.eval_questions(convs):
            res = hippo.search(h, q.question, limit=10, projects=[c.sample_id],
                               now=c.last_date + timedelta(days=1))
            evidence = set(q.evidence)
            rank = next((i for i, r in enumerate(res.results)
                         if evidence & set(dia_ids(r))), None)
            if not evidence & carried[c.sample_id]:
                outcomes["no observation carries the evidence (ceiling)"] += 1
            elif rank is None:
                outcomes["carried, not in the top 10"] += 1
            elif rank < 5:
                outcomes["in the top 5"] += 1
            else:
                outcomes["at ranks 6-10"] += 1
                if shown < args.show:
                    shown += 1
                    print(f"[{q.category}] {q.question} (evidence at {rank + 1})")
                    for i, r in enumerate(res.results[: rank + 1], 1):
                        print(f"   {i:>2}. {r['score']:.3f} {r['text'][:90]}")
        h.close()
    print()
    for name, n in outcomes.most_common():
        print(f"{n:>5}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
