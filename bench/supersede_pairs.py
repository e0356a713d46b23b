"""Supersession detector: precision and recall on hand-labelled pairs of memories.

`bench/data/supersede-pairs-dev.json` holds 20 pairs per dev spotter session (60 in all):
two memories `hippo extract` writes from the session (text prefixes), the older one first,
labelled `changed` when the newer one (or what it reports) overturns the older one (a task
done, a problem fixed, a newer state or gate, a belief corrected) and not when both hold
(different subjects that share words, the same fact twice). After `hippo ingest` and
`hippo extract` of the three sessions (the store `session_recall.py --db` builds):

- a changed pair is found when the older memory is no longer current (superseded or done);
- an unchanged pair is kept apart when the older memory is not superseded by the newer.

Precision = found / (found + merged apart pairs); recall = found / changed pairs. A pair
whose memory the extractor no longer writes is reported, not scored.

    python bench/supersede_pairs.py [--db FILE] [--transcripts DIR] [--pairs FILE]

The last line of output is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import recall_common as rc
import session_recall

PAIRS = Path(__file__).resolve().parent / "data" / "supersede-pairs-dev.json"


def find(mems: list[dict[str, Any]], session: str, prefix: str) -> dict[str, Any] | None:
    """The memory of `session` (its first 8 characters, subagents included) whose text
    starts with `prefix`: the first written."""
    for m in mems:
        key = rc.memory_session(m) or ""
        if key[:8] == session and m["text"].startswith(prefix):
            return m
    return None


def judge(pair: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> str:
    """tp / fn for a changed pair, tn / fp for an unchanged one."""
    if pair["changed"]:
        current = old["status"] == "active" and old["superseded_by"] is None
        return "fn" if current else "tp"
    return "fp" if old["superseded_by"] == new["id"] else "tn"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="spotter database to build or reuse")
    ap.add_argument("--transcripts", type=Path, default=session_recall.DATA)
    ap.add_argument("--pairs", type=Path, default=PAIRS)
    args = ap.parse_args(argv)
    if not args.transcripts.is_dir() or not args.pairs.is_file():
        print(f"supersede_pairs: no data ({args.transcripts}, {args.pairs})", file=sys.stderr)
        return 2
    pairs = json.loads(args.pairs.read_text(encoding="utf-8"))["pairs"]
    tmp = tempfile.TemporaryDirectory(prefix="hippo-pairs-")
    db = args.db or Path(tmp.name) / "spotter.db"
    print("spotter " + rc.build_line(rc.build(db, session_recall.transcripts(args.transcripts))))
    h, _, _, mems = rc.open_store(db, False, False)
    h.close()
    counts: dict[str, Counter[str]] = {}
    for p in pairs:
        old = find(mems, p["session"], p["old"])
        new = find(mems, p.get("new_session", p["session"]), p["new"])
        if old is None or new is None:
            verdict = "missing"
            print(f"MISSING [{p['session']}] {p['old'][:50]!r} / {p['new'][:50]!r}")
        else:
            verdict = judge(p, old, new)
            if verdict in ("fn", "fp"):
                print(f"{verdict.upper()} [{p['session']}] {old['text'][:70]!r}\n"
                      f"     then {new['text'][:70]!r} ({p['why']})")
        for key in (p["session"], "all"):
            counts.setdefault(key, Counter())[verdict] += 1
    out: dict[str, Any] = {}
    print(f"{'session':<10}{'pairs':>6}{'tp':>4}{'fn':>4}{'tn':>4}{'fp':>4}{'precision':>11}"
          f"{'recall':>8}")
    for key, c in sorted(counts.items(), key=lambda kc: kc[0] == "all"):
        found = c["tp"] + c["fp"]
        figures = {"pairs": sum(c.values()), "tp": c["tp"], "fn": c["fn"], "tn": c["tn"],
                   "fp": c["fp"], "missing": c["missing"],
                   "precision": rc.rate(c["tp"], found),
                   "recall": rc.rate(c["tp"], c["tp"] + c["fn"]),
                   "kept_apart": rc.rate(c["tn"], c["tn"] + c["fp"])}
        out[key] = figures
        print(f"{key:<10}{figures['pairs']:>6}{c['tp']:>4}{c['fn']:>4}{c['tn']:>4}{c['fp']:>4}"
              f"{figures['precision'] or 0:>11.3f}{figures['recall'] or 0:>8.3f}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
