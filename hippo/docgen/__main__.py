"""`python -m hippo.docgen [--check] [--out DIR]`: (re)generate man/, completions/, docs/commands.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hippo.docgen import REPO, STALE, stale, write


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hippo.docgen", description=__doc__)
    ap.add_argument("--check", action="store_true", help="Exit 1 when a file is stale.")
    ap.add_argument("--out", type=Path, default=REPO, help="Base directory (default: repo).")
    args = ap.parse_args(argv)
    if args.check:
        bad = stale(args.out)
        for rel in bad:
            sys.stderr.write(f"stale: {rel}\n")
        if bad:
            sys.stderr.write(STALE + "\n")
        return 1 if bad else 0
    for rel in write(args.out):
        sys.stderr.write(f"wrote {rel}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
