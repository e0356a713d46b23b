"""Answer keys: does a retrieved text state the answer? Shared by the recall benches.

A key is a list of groups of alternatives; a text states the answer when it holds one
alternative of every group (case-insensitive substring). How the retrieved results are
judged depends on the question's scope (../shared/data/devmembench/README.md):

- `one`: one result states the answer by itself;
- `union`: the results together cover every group (each group in some result);
- `none`: nothing was ever said, so the right answer is silence: a hit is no result at all.

A stale top result (knowledge updates, currency cases) holds one alternative of every
`stale` group and does not state the current answer.
"""

from __future__ import annotations

from collections.abc import Sequence

Groups = Sequence[Sequence[str]]
SCOPES = ("one", "union", "none")


def _has(low: str, group: Sequence[str]) -> bool:
    return any(alt.lower() in low for alt in group)


def holds(text: str, groups: Groups) -> bool:
    """True when `text` holds one alternative of every group; never for no groups."""
    if not groups:
        return False
    low = text.lower()
    return all(_has(low, group) for group in groups)


def covered(texts: Sequence[str], groups: Groups) -> list[bool]:
    """For each group, whether some text holds one of its alternatives (not across texts:
    an alternative split over the end of one result and the start of the next is no match)."""
    lows = [t.lower() for t in texts]
    return [any(_has(low, group) for low in lows) for group in groups]


def hit(texts: Sequence[str], keys: Groups, scope: str = "one") -> bool:
    """Whether the retrieved `texts` (best first) answer a question of this scope.

    `none` is a hit when nothing non-blank was retrieved. `one` and `union` need keys:
    without any, every text would vacuously state the answer."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; known: {', '.join(SCOPES)}")
    if scope == "none":
        return not any(t.strip() for t in texts)
    if not keys:
        raise ValueError(f"a {scope!r} question needs keys")
    if scope == "one":
        return any(holds(t, keys) for t in texts)
    return all(covered(texts, keys))


def stale_top(texts: Sequence[str], keys: Groups, stale: Groups) -> bool:
    """True when the top result holds the stale groups without the current keys."""
    if not texts or not stale:
        return False
    return holds(texts[0], stale) and not holds(texts[0], keys)
