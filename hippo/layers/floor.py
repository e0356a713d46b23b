"""Which memories each layer may load: the rule floor and the domain guidance of a route.

Order is total and deterministic: human-authored first, then importance (high first),
pinned first among equals, then id. The same database always gives the same bytes.

A rule or preference a machine wrote (extraction, or an agent) loads only once a person
verified it (`hippo verify`, which sets `verified_at`) or pinned it: these layers reach
every session unasked, and a transcript must not be able to plant instructions there.
Until then it waits for review (`hippo list --unverified`); search finds it either way.

A route for an agent (`Route.agent`) leaves out what that agent already loads by itself:
memories read from its own instruction files and notes carry the tag `loaded-by:AGENT`
(`hippo.ingest.notes`), so they reach every other agent but are not injected twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.layers.hint import loaded_by
from hippo.layers.pack import Packed, pack
from hippo.memory.records import to_record

if TYPE_CHECKING:
    from hippo.store import Store
    from hippo.store.context import LayerScope

FLOOR_BUDGET = 800  # tokens; the floor is paid at every session start
GUIDANCE_BUDGET = 1500


@dataclass(frozen=True, slots=True)
class Route:
    """Where a layer applies: a project plus global memories (or every project) and topics."""

    project: str | None
    topics: tuple[str, ...] = ()
    all_projects: bool = False
    agent: str | None = None  # the agent the layer is for: what it loads itself stays out

    def scope(self, *, with_topics: bool) -> LayerScope:
        """The memories the route covers, as the store takes them."""
        from hippo.store.context import LayerScope

        topics = sorted({t.strip().lower() for t in self.topics if t.strip()})
        return LayerScope(None if self.all_projects else self.project, self.all_projects,
                     tuple(topics) if with_topics else ())

    def label(self, *, with_topics: bool) -> str:
        """How a heading names the route: `project: X`, `all projects`, `global`; topics."""
        where = ("all projects" if self.all_projects
                 else f"project: {self.project}" if self.project else "global")
        topics = sorted({t.strip().lower() for t in self.topics if t.strip()})
        if with_topics and topics:
            where += f"; topics: {', '.join(topics)}"
        return where


    def admits(self, record: dict[str, Any]) -> bool:
        """Whether the route's agent does not already load `record` by itself."""
        return self.agent is None or loaded_by(self.agent) not in (record.get("tags") or ())


def rule_candidates(db: Store, route: Route) -> list[dict[str, Any]]:
    """Current rules of the route's project and global ones, in floor order (topics ignored)."""
    return [rec for rec in map(to_record, db.context.rules(route.scope(with_topics=False)))
            if route.admits(rec)]


def guidance_candidates(db: Store, route: Route) -> list[dict[str, Any]]:
    """Current procedural memories (not rules) of the route; with topics, those tagged with any."""
    return [rec for rec in map(to_record, db.context.guidance(route.scope(with_topics=True)))
            if route.admits(rec)]


def remember_hint(budget: int | None = None) -> Packed:
    """The hint that tells an agent when to write a memory (`hippo.layers.hint`), as a layer
    of its own: its budget is its size, apart from the rules' budget."""
    from hippo.embed import tokens
    from hippo.layers.hint import HEADING, section

    text = section()
    cost = tokens.count(text)
    return Packed("remember", HEADING.lstrip("# "), cost if budget is None else budget,
                  text=text, tokens=cost)


def rule_floor(db: Store, route: Route, budget: int = FLOOR_BUDGET) -> Packed:
    """The rule floor of a session start, within `budget` tokens."""
    heading = f"Rules ({route.label(with_topics=False)})"
    out = pack("rule_floor", heading, rule_candidates(db, route), budget)
    out.unverified = db.context.rules_waiting(route.scope(with_topics=False))
    return out


def guidance(db: Store, route: Route, budget: int = GUIDANCE_BUDGET) -> Packed:
    """The domain guidance of a route, within `budget` tokens."""
    heading = f"Guidance ({route.label(with_topics=True)})"
    out = pack("guidance", heading, guidance_candidates(db, route), budget)
    out.unverified = db.context.guidance_waiting(route.scope(with_topics=True))
    return out
