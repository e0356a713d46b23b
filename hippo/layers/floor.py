"""Which memories each layer may load: the rule floor and the domain guidance of a route.

Order is total and deterministic: human-authored first, then importance (high first),
pinned first among equals, then id. The same database always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.layers.pack import Packed, pack
from hippo.records import FIELDS, to_record

if TYPE_CHECKING:
    from hippo.db import Database

FLOOR_BUDGET = 800  # tokens; the floor is paid at every session start
GUIDANCE_BUDGET = 1500
COLUMNS = ", ".join(f"m.{name}" for name in FIELDS)
ORDER = "(m.author = 'human') DESC, m.importance DESC, m.pinned DESC, m.id"
# Guidance is the procedural tier minus the rules (those are the floor). Types named
# here count even when a memory overrides its tier.
GUIDANCE_TYPES = ("procedure", "tool", "config")
# What a layer may load at all: active and not replaced by a newer memory.
CURRENT = "m.status = 'active' AND m.superseded_by IS NULL"
RULES = (
    f"SELECT {COLUMNS} FROM memories m WHERE {CURRENT} AND m.type = 'rule' "
    "AND {scope} ORDER BY " + ORDER
)
GUIDANCE = (
    f"SELECT {COLUMNS} FROM memories m WHERE {CURRENT} AND m.type <> 'rule' "
    f"AND (m.tier = 'procedural' OR m.type IN ({', '.join(repr(t) for t in GUIDANCE_TYPES)})) "
    "AND {scope} ORDER BY " + ORDER
)
TOPIC_MATCH = "EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value IN ({marks}))"


@dataclass(frozen=True, slots=True)
class Route:
    """Where a layer applies: a project plus global memories (or every project) and topics."""

    project: str | None
    topics: tuple[str, ...] = ()
    all_projects: bool = False

    def scope(self, *, with_topics: bool) -> tuple[str, list[Any]]:
        """A WHERE fragment over `memories m` and its bound parameters."""
        parts: list[str] = []
        params: list[Any] = []
        if not self.all_projects:
            if self.project is None:
                parts.append("m.project IS NULL")
            else:
                parts.append("(m.project = ? OR m.project IS NULL)")
                params.append(self.project)
        topics = sorted({t.strip().lower() for t in self.topics if t.strip()})
        if with_topics and topics:
            parts.append(TOPIC_MATCH.format(marks=", ".join("?" * len(topics))))
            params.extend(topics)
        return " AND ".join(parts) or "1", params

    def label(self, *, with_topics: bool) -> str:
        """How a heading names the route: `project: X`, `all projects`, `global`; topics."""
        where = ("all projects" if self.all_projects
                 else f"project: {self.project}" if self.project else "global")
        topics = sorted({t.strip().lower() for t in self.topics if t.strip()})
        if with_topics and topics:
            where += f"; topics: {', '.join(topics)}"
        return where


def _select(db: Database, template: str, route: Route, *, with_topics: bool
            ) -> list[dict[str, Any]]:
    where, params = route.scope(with_topics=with_topics)
    return [to_record(r) for r in db.rows(template.format(scope=where), params)]


def rule_candidates(db: Database, route: Route) -> list[dict[str, Any]]:
    """Current rules of the route's project and global ones, in floor order (topics ignored)."""
    return _select(db, RULES, route, with_topics=False)


def guidance_candidates(db: Database, route: Route) -> list[dict[str, Any]]:
    """Current procedural memories (not rules) of the route; with topics, those tagged with any."""
    return _select(db, GUIDANCE, route, with_topics=True)


def rule_floor(db: Database, route: Route, budget: int = FLOOR_BUDGET) -> Packed:
    """The rule floor of a session start, within `budget` tokens."""
    heading = f"Rules ({route.label(with_topics=False)})"
    return pack("rule_floor", heading, rule_candidates(db, route), budget)


def guidance(db: Database, route: Route, budget: int = GUIDANCE_BUDGET) -> Packed:
    """The domain guidance of a route, within `budget` tokens."""
    heading = f"Guidance ({route.label(with_topics=True)})"
    return pack("guidance", heading, guidance_candidates(db, route), budget)
