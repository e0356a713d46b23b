"""Search results as compact Markdown for a prompt, within a token budget.

Tokens are counted with the shipped tokenizer (`hippo.embed.tokens`). Results go in rank
order; the first one that does not fit ends the list (a lower-ranked short one never
jumps ahead). If even the best result does not fit, its text is cut to fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_BUDGET = 800
HEADING = "## Relevant memories\n"
ELLIPSIS = "…"


@dataclass(slots=True)
class Rendered:
    """The Markdown, its token count, and the ids that did not fit."""

    text: str
    tokens: int
    included: list[int] = field(default_factory=list)
    omitted: list[int] = field(default_factory=list)
    truncated: bool = False


def line(rec: dict[str, Any], text: str | None = None) -> str:
    """One bullet: the text on one line, then type (a machine's rule not yet reviewed says
    so), project, date and id (and the person's memory it contradicts, unsettled)."""
    body = " ".join(str(rec["text"] if text is None else text).split())
    from hippo.memory.conflicts import note

    extra = f", superseded by #{rec['superseded_by']}" if rec.get("superseded_by") else ""
    extra += note(rec)
    return f"- {body} ({label(rec)}, #{rec['id']}{extra})\n"


def label(rec: dict[str, Any]) -> str:
    """`rule, alpha, 2026-01-02`; `rule, machine-written, unverified, ...` for a rule or
    preference a machine wrote and no person reviewed: an agent must not take it for one
    of the user's own rules."""
    from hippo.memory.records import unreviewed

    kind = f"{rec['type']}, machine-written, unverified" if unreviewed(rec) else rec["type"]
    return f"{kind}, {rec.get('project') or 'global'}, {str(rec.get('created_at') or '')[:10]}"


def _cut(rec: dict[str, Any], room: int) -> str | None:
    """The longest word-prefix of the text whose bullet fits in `room` tokens, if any."""
    from hippo.embed import tokens

    words = str(rec["text"]).split()
    lo, hi, best = 1, len(words), None
    while lo <= hi:  # binary search on the number of words kept
        mid = (lo + hi) // 2
        candidate = line(rec, " ".join(words[:mid]) + ELLIPSIS)
        if tokens.count(candidate) <= room:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


def markdown(results: Sequence[dict[str, Any]], budget: int = DEFAULT_BUDGET) -> Rendered:
    """Markdown of `results` (best first) in at most `budget` tokens; empty when none fit."""
    from hippo.embed import tokens

    if not results:
        return Rendered("", 0)
    used = tokens.count(HEADING)
    parts: list[str] = []
    out = Rendered("", 0)
    for n, rec in enumerate(results):
        bullet = line(rec)
        cost = tokens.count(bullet)
        if used + cost <= budget:
            parts.append(bullet)
            used += cost
            out.included.append(rec["id"])
            continue
        if n == 0:
            cut = _cut(rec, budget - used)
            if cut is not None:
                parts.append(cut)
                used += tokens.count(cut)
                out.included.append(rec["id"])
                out.truncated = True
                out.omitted = [r["id"] for r in results[1:]]
                break
        out.omitted = [r["id"] for r in results[n:]]
        break
    if not parts:
        return Rendered("", 0, omitted=[r["id"] for r in results])
    out.text = HEADING + "".join(parts)
    out.tokens = tokens.count(out.text)
    return out
