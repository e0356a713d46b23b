"""How much of the Brain's dev-set recall is tuning: leave one conversation out.

Usage:
    python bench/locomo_loco.py [--db PATH] [--data FILE] [--quick]

The search constants tuned on the dev file (the date boost, MMR's lambda, candidates
per retriever; late interaction on or off) are chosen again seven times, each time on
six conversations only, and the choice is scored on the seventh, which played no part
in it. The sum of those seven held-out scores is what our way of tuning would give on
conversations it never saw, which is what the held-out acceptance set measures. Next
to it: the shipped defaults and the best single setting on the whole dev file (that
one has seen every answer; the gap to the held-out sum is the optimism of tuning).

Every setting runs the real `hippo.search` over every category 1-4 question against a
database built by `bench/locomo.py` (built here first when `--db` does not exist).
A setting is chosen by questions found (recall_any@5); ties go to the setting nearest
the defaults in the grid's order. The last line is one JSON object: n, defaults,
leave_one_out, best_on_dev (recall_any@5) and the best setting's values.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo_common as lc
from locomo import dia_ids, load_brain

# The knobs tuned on the dev file, defaults first in each list (ties go to them).
GRID: dict[str, tuple[float, ...]] = {
    "date_boost": (0.4, 0.0, 0.2, 0.3, 0.5),
    "mmr_lambda": (0.65, 0.55, 0.75, 1.0),
    "candidates_per_retriever": (30, 25, 40),
    "late_pool": (90, 0),
}
QUICK: dict[str, tuple[float, ...]] = {
    "date_boost": (0.4, 0.0, 0.2),
    "mmr_lambda": (0.65, 1.0),
    "candidates_per_retriever": (30,),
    "late_pool": (90, 0),
}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def settings(grid: dict[str, tuple[float, ...]]) -> list[dict[str, float]]:
    """Every combination of the grid, the defaults (first values) first."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*grid.values())]


def hits_per_conversation(h: Any, convs: Sequence[lc.Conversation],
                          setting: dict[str, float]) -> dict[str, int]:
    """Questions found (recall_any@5, dataset evidence) per conversation under `setting`."""
    import hippo
    from hippo.retrieve.params import load_params

    params = dataclasses.replace(load_params(h.settings), **{
        k: int(v) if k in ("candidates_per_retriever", "late_pool") else v
        for k, v in setting.items()})
    found = {c.sample_id: 0 for c in convs}
    for c, q in lc.eval_questions(convs):
        res = hippo.search(h, q.question, limit=5, projects=[c.sample_id],
                           now=c.last_date + timedelta(days=1), params=params)
        found[c.sample_id] += lc.hit([dia_ids(r) for r in res.results], q.evidence, 5)[0]
    return found


def choose(table: Sequence[dict[str, int]], convs: Sequence[str]) -> int:
    """Index of the setting with the most questions found over `convs` (first on ties)."""
    return max(range(len(table)), key=lambda i: (sum(table[i][c] for c in convs), -i))


def leave_one_out(table: Sequence[dict[str, int]], convs: Sequence[str]) -> dict[str, int]:
    """Per conversation: the setting chosen on all the others."""
    return {held: choose(table, [c for c in convs if c != held]) for held in convs}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=lc.DEFAULT_DATA)
    ap.add_argument("--db", type=Path, default=None,
                    help="a database built by bench/locomo.py (built here if missing)")
    ap.add_argument("--quick", action="store_true", help="a 12-setting grid instead of 120")
    args = ap.parse_args(argv)

    convs = lc.load(args.data)
    ids = [c.sample_id for c in convs]
    n_of = {c.sample_id: 0 for c in convs}
    for c, _ in lc.eval_questions(convs):
        n_of[c.sample_id] += 1
    n = sum(n_of.values())
    grid = settings(QUICK if args.quick else GRID)
    with lc.private_home("hippo-locomo-loco-") as tmp:
        from hippo.core import Hippo

        db_path = args.db or tmp / "locomo.db"
        fresh = not db_path.exists()
        h = Hippo.open(db_path, embedder="local")
        if fresh:
            _log(f"locomo_loco: loading observations into {db_path}")
            load_brain(h, convs)
        table: list[dict[str, int]] = []
        t0 = time.perf_counter()
        for i, setting in enumerate(grid, 1):
            table.append(hits_per_conversation(h, convs, setting))
            _log(f"locomo_loco: setting {i}/{len(grid)} {setting}: "
                 f"{sum(table[-1].values())} of {n} ({time.perf_counter() - t0:.0f}s)")
        h.close()

    chosen = leave_one_out(table, ids)
    best = choose(table, ids)
    held_out = sum(table[chosen[c]][c] for c in ids)
    defaults = sum(table[0].values())
    on_dev = sum(table[best].values())
    print(f"LoCoMo observations, leave one conversation out: {args.data.name}, "
          f"{len(ids)} conversations, {n} questions, {len(grid)} settings of "
          f"{', '.join(grid[0])}")
    print()
    print(f"{'held out':<10} {'n':>4} {'defaults':>9} {'chosen on the others':>21}  setting")
    for c in ids:
        s = grid[chosen[c]]
        print(f"{c:<10} {n_of[c]:>4} {table[0][c] / n_of[c]:>9.3f} "
              f"{table[chosen[c]][c] / n_of[c]:>21.3f}  "
              + ", ".join(f"{k}={v:g}" for k, v in s.items()))
    print()
    print(f"defaults (shipped):             {defaults / n:.3f} ({defaults} of {n})")
    print(f"leave one conversation out:     {held_out / n:.3f} ({held_out} of {n})")
    print(f"best setting on all of dev:     {on_dev / n:.3f} ({on_dev} of {n}): "
          + ", ".join(f"{k}={v:g}" for k, v in grid[best].items()))
    print(json.dumps({"n": n, "defaults": round(defaults / n, 4),
                      "leave_one_out": round(held_out / n, 4),
                      "best_on_dev": round(on_dev / n, 4), "best": grid[best]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
