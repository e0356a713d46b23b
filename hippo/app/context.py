"""The layers an agent loads at a session start: the rule floor, a route's guidance, and
the remember hint. `hippo context`, `hippo guidance` and the MCP `context` tool call them;
each face renders the packed layers its own way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core import Hippo
    from hippo.layers import Packed

GUIDANCE_BUDGET = 1500  # the guidance's own budget, beside the rules'


def context(h: Hippo, *, budget: int, route: bool = False, topics: Sequence[str] = (),
            guidance_budget: int = GUIDANCE_BUDGET, every: bool = False,
            agent: str | None = None, hint: bool = False) -> list[Packed]:
    """The rule floor of the current project (`every`: of every project) within `budget`,
    then, with `route` or `topics`, the route's guidance under its own budget (so guidance
    never crowds rules out). `agent`: what that agent loads from its own files is left
    out; `hint`: the remember hint last, unless `[agents] remember_hint = false`."""
    from hippo.layers import Route, guidance, rule_floor

    where = Route(h.project, tuple(topics), every, agent or None)
    parts = [rule_floor(h.db, where, budget)]
    if route or topics:
        parts.append(guidance(h.db, where, guidance_budget))
    if hint:
        parts += remember_hint(h.settings)
    return parts


def guidance(h: Hippo, *, budget: int = GUIDANCE_BUDGET, topics: Sequence[str] = (),
             every: bool = False) -> Packed:
    """The domain guidance of a route: the procedural memories of the project (`every`:
    of every project) and global ones, only those tagged with one of `topics` if any."""
    from hippo.layers import Route
    from hippo.layers import guidance as layer

    return layer(h.db, Route(h.project, tuple(topics), every), budget)


def remember_hint(settings: Settings) -> list[Packed]:
    """The remember hint as a layer, unless `[agents] remember_hint = false`."""
    from hippo.layers import remember_hint as layer
    from hippo.layers.hint import AgentSettings

    if not AgentSettings.from_settings(settings).remember_hint:
        return []
    return [layer()]
