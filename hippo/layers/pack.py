"""Fit a layer's memories into a token budget and render it as compact Markdown.

Tokens are counted with the shipped tokenizer (`hippo.embed.tokens.count`, the one counter of
every budget; ASCII text without loading the tokenizer). The reported count
is always that of the exact text printed, never an estimate.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Counter = Callable[[str], int]
_VISIBLE = re.compile(r"[!-~]")


def _default_count(text: str) -> int:
    from hippo.embed import tokens

    return tokens.count(text)


def bullet(record: dict[str, Any]) -> str:
    """One memory as one Markdown bullet line (whitespace collapsed)."""
    return "- " + " ".join(str(record["text"]).split()) + "\n"


def lower_bound(line: str) -> int:
    """Tokens `line` has at least: each word holding a printable ASCII character is one or more.

    (A word of control or format characters alone may vanish in the tokenizer's cleaning.)
    """
    return sum(1 for word in line.split() if _VISIBLE.search(word))


@dataclass(slots=True)
class Packed:
    """A layer after budgeting: what is printed, what was left out, and its token cost;
    `unverified`: ids of machine-written memories it holds back until a person reviews them."""

    layer: str
    heading: str
    budget: int
    included: list[dict[str, Any]] = field(default_factory=list)
    omitted: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    tokens: int = 0
    unverified: list[int] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "budget": self.budget, "included": len(self.included),
                "omitted": len(self.omitted), "omitted_ids": [r["id"] for r in self.omitted],
                "unverified": len(self.unverified), "unverified_ids": self.unverified}


def pack(layer: str, heading: str, records: Sequence[dict[str, Any]], budget: int, *,
         count: Counter = _default_count) -> Packed:
    """Take records in order while they fit; one that does not fit is left out, not truncated.

    A later, shorter record may still fit after a longer one was left out. Each included
    record gains `layer` and `tokens` (its bullet's cost).
    """
    out = Packed(layer, heading, max(int(budget), 0))
    head = f"## {heading}\n"
    used = count(head)
    chosen: list[tuple[int, str]] = []
    for pos, rec in enumerate(records):
        line = bullet(rec)
        if used + lower_bound(line) > out.budget:  # cannot fit: skip the exact count
            continue
        cost = count(line)
        if used + cost <= out.budget:
            chosen.append((pos, line))
            out.included.append({**rec, "layer": layer, "tokens": cost})
            used += cost
    # WordPiece counts of whitespace-separated pieces add up, so this loop should never
    # drop anything; it guarantees the printed text is within budget whatever the tokenizer.
    while chosen:
        out.text = head + "".join(line for _, line in chosen)
        out.tokens = count(out.text)
        if out.tokens <= out.budget:
            break
        chosen.pop()
        out.included.pop()
    else:
        out.text, out.tokens = "", 0
    kept = {pos for pos, _ in chosen}
    out.omitted = [rec for pos, rec in enumerate(records) if pos not in kept]
    return out


def render(parts: Sequence[Packed]) -> str:
    """The Markdown an agent receives: each non-empty layer, separated by a blank line."""
    return "\n".join(p.text for p in parts if p.text)
