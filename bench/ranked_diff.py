"""Compare two `--ranked` files of `bench/locomo.py` or `bench/locomo_echo.py`, question by
question: per system, how many rankings are identical (top 10, top 5), and each question
whose ranking differs (its index and both rankings).

Usage:
    python bench/ranked_diff.py A.json B.json [--show N]

E.g. the same bench on SQLite and on PostgreSQL (`--pg`): identical files mean the two
backends ranked every question alike.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--show", type=int, default=5, help="differing questions shown per system")
    args = ap.parse_args(argv)
    a, b = (json.loads(p.read_text()) for p in (args.a, args.b))
    differ = 0
    for name, left in a.items():
        right = b.get(name)
        if right is None:
            print(f"{name}: only in {args.a}")
            continue
        diffs = [i for i, (x, y) in enumerate(zip(left, right)) if x != y]
        top5 = sum(1 for x, y in zip(left, right) if x[:5] == y[:5])
        differ += len(diffs)
        print(f"{name:32} {len(left)} questions: {len(left) - len(diffs)} identical rankings, "
              f"{top5} identical top 5")
        for i in diffs[: args.show]:
            print(f"  question {i}:\n    {left[i]}\n    {right[i]}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
