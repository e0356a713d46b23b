"""Which memories merge, which one survives, and what the survivor becomes. Pure functions.

Clusters: pairs are taken in descending similarity (ties by ids) and joined greedily, so
A≈B≈C ends as one cluster whatever order the pairs were found in; a join is refused when
any two members across the two groups conflict (see `literals`), so a chain can never carry
"port 5432" into the same memory as "port 5433".

Survivor: the higher importance, then the higher confidence, then the older (lower) id.
Statement: the most complete text (most distinct words), then the newest, then higher id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hippo.memory.brain import merge_source

_WORDS = re.compile(r"\w+")
# What one more sighting of a learned procedure adds to its confidence (as `reinforce`).
PROCEDURE_GAIN = 0.2

Conflict = Callable[[int, int], "str | None"]  # why two memory ids must stay apart


@dataclass(slots=True)
class Veto:
    """A pair close enough to merge that the guard kept apart."""

    a: int
    b: int
    similarity: float
    reason: str


@dataclass(slots=True)
class Cluster:
    """One merge: the survivor, what it absorbs, and the survivor's field changes (`updates`)."""

    survivor: int
    absorbed: list[int]
    pairs: list[tuple[int, int, float]]
    updates: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def group(pairs: Mapping[tuple[int, int], float],
          conflict: Conflict | None) -> tuple[list[list[int]], list[Veto]]:
    """Deterministic clusters (each a sorted id list) and the pairs the guard refused."""
    parent: dict[int, int] = {}
    members: dict[int, list[int]] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        members.setdefault(x, [x])
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    vetoes: list[Veto] = []
    for (a, b), sim in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])):
        ra, rb = find(a), find(b)
        if ra == rb:
            continue
        reason = None
        if conflict is not None:
            reason = next((r for x in members[ra] for y in members[rb]
                           if (r := conflict(x, y))), None)
        if reason:
            vetoes.append(Veto(a, b, sim, reason))
            continue
        low, high = min(ra, rb), max(ra, rb)
        parent[high] = low
        members[low] += members.pop(high)
    clusters = sorted(sorted(m) for root, m in members.items() if len(m) > 1)
    return clusters, vetoes


def survivor_of(records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    return min(records, key=lambda r: (-r["importance"], -r["confidence"], r["id"]))


def statement_of(records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The most complete statement (distinct words), then the newest, then the higher id."""
    return max(records, key=lambda r: (len(set(_WORDS.findall(r["text"].casefold()))),
                                       r["created_at"], r["id"]))


def same_words(records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every statement has the same words in the same order (case and punctuation
    aside): nothing for a model to reconcile."""
    return len({tuple(_WORDS.findall(r["text"].casefold())) for r in records}) == 1


def _seen(rec: Mapping[str, Any]) -> str:
    return rec["confirmed_at"] or rec["created_at"]


def merged(records: Sequence[Mapping[str, Any]], pairs: Iterable[tuple[int, int, float]],
           *, gains_confidence: bool) -> Cluster:
    """What a cluster's survivor becomes (only the fields that change are in `updates`)."""
    surv = survivor_of(records)
    others = sorted((r for r in records if r["id"] != surv["id"]), key=lambda r: r["id"])
    text = statement_of(records)["text"]
    confidence = max(r["confidence"] for r in records)
    if gains_confidence:  # a learned procedure seen again is more trustworthy
        for _ in others:
            confidence = confidence + (1.0 - confidence) * PROCEDURE_GAIN
        confidence = round(confidence, 6)
    source = surv["source"]
    for r in others:
        source = merge_source(source, r["source"])
    latest = max(_seen(r) for r in records)
    target = {
        "text": text,
        "importance": max(r["importance"] for r in records),
        "confidence": confidence,
        "tags": sorted({t for r in records for t in r["tags"]}),
        "source": source,
        "confirmed_at": latest if latest > _seen(surv) else surv["confirmed_at"],
    }
    changes = {k: v for k, v in target.items() if v != surv[k]}
    return Cluster(surv["id"], [r["id"] for r in others], sorted(pairs), changes, text)


def restate(c: Cluster, survivor: Mapping[str, Any], text: str) -> None:
    """Give cluster `c` another merged statement (the `llm` merger's)."""
    c.text = text
    if text != survivor["text"]:
        c.updates["text"] = text
    else:
        c.updates.pop("text", None)
