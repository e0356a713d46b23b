"""Redaction: what the corpus catches, what real transcripts lose, and how fast it runs.

Usage: python bench/redaction.py [--main PATH]
- the secret corpus of tests/privacy (each shape in three placements): how many keep a
  12-character run of their value;
- the shared transcripts (../shared/data/transcripts): how many values are masked (they
  hold no live secret, so each one is a false alarm), and the throughput, best of 3, on
  the messages split at blank lines;
- hippo's own code and docs, line by line (no secret in them: each mask a false alarm);
- with --main PATH (a checkout of main), the same figures for its redactor.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
TRANSCRIPTS = REPO.parent / "shared" / "data" / "transcripts"


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def figures(mod: ModuleType, pieces: list[str]) -> dict[str, float]:
    sys.path.insert(0, str(REPO / "tests" / "privacy"))
    from secrets_corpus import corpus, placements

    kept = sum(1 for s in corpus() if any(r in mod.redact(t)[0] for t in placements(s).values()
                                          for r in s.runs()))
    chars = sum(map(len, pieces))
    best, masked = 1e9, 0
    for _ in range(3):
        start = time.perf_counter()
        masked = sum(mod.redact(t)[1] for t in pieces)
        best = min(best, time.perf_counter() - start)
    own = [p for p in [*(REPO / "hippo").rglob("*.py"), *(REPO / "docs").rglob("*.md")]
           if p.name != "redact.py"]
    own_masked = sum(mod.redact(line)[1] for p in own for line in p.read_text().splitlines())
    return {"shapes": len(corpus()), "kept": kept, "false_alarms": masked, "own": own_masked,
            "mb": chars / 1e6, "seconds": best, "mb_per_s": chars / 1e6 / best}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--main", type=Path, help="a checkout of main, to compare")
    args = ap.parse_args()
    files = sorted(p for p in TRANSCRIPTS.rglob("*") if p.is_file())
    pieces = [t for p in files for t in p.read_text(errors="replace").split("\n\n") if t.strip()]
    runs = {"this": REPO / "hippo" / "redact.py"}
    if args.main:
        runs["main"] = args.main / "hippo" / "ingest" / "redact.py"
    for name, path in runs.items():
        f = figures(load(path, f"redact_{name}"), pieces)
        print(f"{name}: corpus {f['shapes']} shapes, {f['kept']} keep a 12-char run; "
              f"transcripts {f['mb']:.1f} MB, {f['false_alarms']} masked, "
              f"{f['seconds'] * 1000:.0f} ms ({f['mb_per_s']:.1f} MB/s); "
              f"hippo's code and docs: {f['own']} masked")


if __name__ == "__main__":
    main()
