"""Does the statement selector keep what an LLM kept? Compaction summaries as labels.

A Claude Code compaction summary is the model's own choice of what mattered in the
conversation before it. For every session with a summary, each prose unit said before the
compaction (`hippo.extract.units`) is labelled *kept* when one statement of the summary
says it again: most of the unit's content words, and every name it has (a number, an
identifier, a path), are in that statement (`hippo.extract.statements.repeats`, with a
looser share). The selector (`features` + `score` >= threshold) is then scored against the
labels: precision, recall and F1 of "selected" vs "kept", overall and per session, and for
a sweep of thresholds; leaving one session out, the threshold that maximises F1 on the
others is applied to it (so the choice is checked on a session it never saw).

    python bench/selector.py [--data DIR] [--sweep]

The labels are noisy (a summary paraphrases; it also keeps what tool calls showed), so the
figure to read is the selector against chance: the share of units kept at all, and how
much more often a selected unit is kept than an unselected one. The last line of output is
one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ["HIPPO_SERVE"] = "off"

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "transcripts" / "claude-code-sessions"
SHARE = 0.5  # content words of a unit the summary statement must hold
THRESHOLDS = [round(0.3 + 0.05 * i, 2) for i in range(12)]


def build(db: Path, data: Path) -> None:
    paths = sorted(str(p) for p in data.iterdir() if p.suffix == ".jsonl" or p.is_dir())
    env = {**os.environ, "HIPPO_DB": str(db), "HIPPO_NO_PROGRESS": "1"}
    proc = subprocess.run([sys.executable, "-m", "hippo", "--embedder", "hash", "ingest",
                           "--idle-minutes", "0", *paths], env=env, capture_output=True,
                          text=True, check=False)
    if proc.returncode not in (0, 3):
        sys.exit(f"selector: hippo ingest failed: {proc.stderr.strip()}")


def labelled(h: Any) -> dict[str, list[tuple[float | None, bool]]]:
    """Per session: (score or None when not a statement at all, kept by the summary)."""
    from hippo.extract.blocks import _INLINE_TAGS, messages
    from hippo.extract.cues import IMPERATIVE, scan
    from hippo.extract.rules import turns
    from hippo.extract.run import load, session_segment
    from hippo.extract.statements import content_words, features, score
    from hippo.extract.summary import statements
    from hippo.extract.units import units

    out: dict[str, list[tuple[float | None, bool]]] = {}
    keys = [r["session_key"] for r in h.db.rows(
        "SELECT session_key FROM echo_sessions WHERE parent_key IS NULL")]
    for key in keys:
        session = load(h, session_segment(h, key))
        msgs = messages(session.chunks)
        at = next((i for i, m in enumerate(msgs) if m.role == "summary"), None)
        if at is None:
            continue
        said = [content_words(s.text) for s in statements(msgs[at].text)]
        rows: list[tuple[float | None, bool]] = []
        for msg, where in turns(msgs[:at]):
            for unit in units(_INLINE_TAGS.sub("", msg.text)):
                words = content_words(unit.text)
                if len(words) < 3:
                    continue
                names = {w for w in words if any(c in w for c in "0123456789_./:")}
                kept = any(names <= s and len(words & s) >= SHARE * len(words) for s in said)
                feats = features(unit, where, IMPERATIVE, scan(unit.text, msg.role) is not None)
                rows.append((None if feats is None else score(feats), kept))
        out[key] = rows
    return out


def prf(rows: list[tuple[float | None, bool]], threshold: float) -> dict[str, float]:
    sel = [(s is not None and s >= threshold, k) for s, k in rows]
    tp = sum(1 for s, k in sel if s and k)
    fp = sum(1 for s, k in sel if s and not k)
    fn = sum(1 for s, k in sel if not s and k)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    kept_sel = tp / (tp + fp) if tp + fp else 0.0
    unsel = [k for s, k in sel if not s]
    kept_unsel = sum(unsel) / len(unsel) if unsel else 0.0
    return {"precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3),
            "selected": tp + fp, "lift": round(kept_sel / kept_unsel, 2) if kept_unsel else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder of transcripts")
    ap.add_argument("--sweep", action="store_true", help="print every threshold's figures")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"selector: no data at {args.data}", file=sys.stderr)
        return 2
    import hippo
    from hippo.extract.statements import THRESHOLD

    with tempfile.TemporaryDirectory(prefix="hippo-selector-") as tmp:
        db = Path(tmp) / "hippo.db"
        build(db, args.data)
        h = hippo.open(db)
        per = labelled(h)
        h.close()
    every = [row for rows in per.values() for row in rows]
    base = sum(k for _, k in every) / len(every)
    print(f"units before a compaction: {len(every)}; kept by the summary: {base:.3f}")
    for key, rows in per.items():
        print(f"  {key[:8]}: {len(rows)} units, {prf(rows, THRESHOLD)}")
    if args.sweep:
        for t in THRESHOLDS:
            print(f"  threshold {t:.2f}: {prf(every, t)}")
    loso: dict[str, Any] = {}
    tp_fp_fn: dict[str, int] = defaultdict(int)
    for key, rows in per.items():
        rest = [row for k, rs in per.items() if k != key for row in rs]
        best = max(THRESHOLDS, key=lambda t: (prf(rest, t)["f1"], -abs(t - THRESHOLD)))
        got = prf(rows, best)
        loso[key[:8]] = {"threshold": best, **got}
        for s, k in rows:
            chosen = s is not None and s >= best
            tp_fp_fn["tp"] += chosen and k
            tp_fp_fn["fp"] += chosen and not k
            tp_fp_fn["fn"] += (not chosen) and k
    print(f"leave one session out: {loso}")
    tp, fp, fn = tp_fp_fn["tp"], tp_fp_fn["fp"], tp_fp_fn["fn"]
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    shipped = prf(every, THRESHOLD)
    print(json.dumps({"units": len(every), "kept_share": round(base, 3),
                      "threshold": THRESHOLD, **shipped,
                      "loso_precision": round(p, 3), "loso_recall": round(r, 3),
                      "loso_f1": round(2 * p * r / (p + r), 3) if p + r else 0.0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
