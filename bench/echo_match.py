"""Could `hippo echo` tell "nothing matches" as `hippo search` does? The best
late-interaction score of on-topic and off-topic questions over real transcripts.

Usage: python bench/echo_match.py [--transcripts DIR] [--db PATH]

`hippo search` multiplies its scores by a match factor read off the best late-interaction
(MaxSim) score of the candidate pool: off-topic questions stay under its floor. Echo's
chunks are transcript windows of up to ~180 tokens, and a long chunk offers every query
word more tokens to match. This ingests the shared coding-agent transcripts with the
local model (or reuses `--db`), runs `hippo.retrieve.echo_search.search` for the questions of
`bench/bench_echo.py` (about these transcripts) and for off-topic ones, and prints the
best MaxSim score of each search's pool (recorded around
`hippo.retrieve.late.late_scores`, which the search calls once), then the two ranges.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_echo import QUERIES, TRANSCRIPTS
from locomo import OFF_TOPIC

# Every hippo process here runs without a warm server (bench/bench_warm.py measures one).
os.environ["HIPPO_SERVE"] = "off"

# Brain's off-topic questions, less the two whose words these transcripts do hold
# ("segfault", "rollback"), and four that are about no code at all.

OFF_TOPIC_ECHO = (*(x for x in OFF_TOPIC if "segfault" not in x and "rollback" not in x),
                  "best pizza in naples", "who won the football world cup",
                  "recipe for banana bread", "what is the weather tomorrow")


def best_scores(db: Path, questions: tuple[str, ...] | list[str]) -> list[float | None]:
    """Each question's best late-interaction score over its Echo candidate pool."""
    import hippo
    from hippo.retrieve import echo_search as echo
    from hippo.retrieve import late

    seen: list[list[float]] = []
    original = late.late_scores

    def recording(query, docs):  # type: ignore[no-untyped-def]
        scores = original(query, docs)
        seen.append(scores)
        return scores

    late.late_scores = recording
    h = hippo.open(db, embedder="local")
    try:
        out: list[float | None] = []
        for question in questions:
            seen.clear()
            echo.search(h, question)
            out.append(max(seen[0]) if seen and seen[0] else None)
        return out
    finally:
        late.late_scores = original
        h.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    ap.add_argument("--db", type=Path, default=None,
                    help="an Echo database of these transcripts (built here when missing)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hippo-echo-match-") as tmp:
        db = args.db or Path(tmp) / "echo.db"
        if not db.exists():
            subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), "--embedder",
                            "local", "ingest", str(args.transcripts), "--idle-minutes", "0"],
                           check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        ranges = {}
        for name, questions in (("on-topic", QUERIES), ("off-topic", OFF_TOPIC_ECHO)):
            scores = best_scores(db, questions)
            for question, score in zip(questions, scores):
                print(f"{name:<10} {'-' if score is None else f'{score:.3f}':>6}  {question}")
            got = [s for s in scores if s is not None]
            ranges[name] = (min(got), max(got)) if got else None
        print()
        for name, r in ranges.items():
            print(f"{name}: " + ("no late interaction ran" if r is None
                                 else f"{r[0]:.3f}-{r[1]:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
