"""Which memories each layer may load: the rule floor and the domain guidance of a route.

Order is total and deterministic: human-authored first, then importance (high first),
pinned first among equals, then id. The same database always gives the same bytes.

A rule or preference a machine wrote (extraction, or an agent) loads only once a person
verified it (`hippo verify`, which sets `verified_at`) or pinned it: these layers reach
every session unasked, and a transcript must not be able to plant instructions there.
Until then it waits for review (`hippo list --unverified`); search finds it either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.layers.pack import Packed, pack
from hippo.records import FIELDS, to_record

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database

FLOOR_BUDGET = 800  # tokens; the floor is paid at every session start
GUIDANCE_BUDGET = 1500
COLUMNS = ", ".join(f"m.{name}" for name in FIELDS)
ORDER = "(m.author = 'human') DESC, m.importance DESC, m.pinned DESC, m.id"
# Guidance is the procedural tier minus the rules (those are the floor). Types named
# here count even when a memory overrides its tier.
GUIDANCE_TYPES = ("procedure", "tool", "config")
# What a layer may load at all: active and not replaced by a newer memory.
CURRENT = "m.status = 'active' AND m.superseded_by IS NULL"
# Types a machine may not put in front of every session on its own (SPEC: authorship).
REVIEWED_TYPES = ("rule", "preference")
# Written by a machine, and no person has verified or pinned it yet.
UNVERIFIED = ("m.author = 'machine' AND m.type IN ("
              + ", ".join(repr(t) for t in REVIEWED_TYPES)
              + ") AND m.verified_at IS NULL AND m.pinned = 0")
ADMITTED = f"NOT ({UNVERIFIED})"
_RULES = "m.type = 'rule'"
_GUIDANCE = (f"m.type <> 'rule' AND (m.tier = 'procedural' "
             f"OR m.type IN ({', '.join(repr(t) for t in GUIDANCE_TYPES)}))")
RULES = (f"SELECT {COLUMNS} FROM memories m WHERE {CURRENT} AND {_RULES} AND {ADMITTED} "
         "AND {scope} ORDER BY " + ORDER)
GUIDANCE = (f"SELECT {COLUMNS} FROM memories m WHERE {CURRENT} AND {_GUIDANCE} AND {ADMITTED} "
            "AND {scope} ORDER BY " + ORDER)
# What each layer holds back until a person reviews it, in id order.
RULES_WAITING = (f"SELECT m.id FROM memories m WHERE {CURRENT} AND {_RULES} AND {UNVERIFIED} "
                 "AND {scope} ORDER BY m.id")
GUIDANCE_WAITING = (f"SELECT m.id FROM memories m WHERE {CURRENT} AND {_GUIDANCE} "
                    "AND " + UNVERIFIED + " AND {scope} ORDER BY m.id")
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


def _waiting(db: Database, template: str, route: Route, *, with_topics: bool) -> list[int]:
    where, params = route.scope(with_topics=with_topics)
    return [row[0] for row in db.execute(template.format(scope=where), params)]


def rule_candidates(db: Database, route: Route) -> list[dict[str, Any]]:
    """Current rules of the route's project and global ones, in floor order (topics ignored)."""
    return _select(db, RULES, route, with_topics=False)


def guidance_candidates(db: Database, route: Route) -> list[dict[str, Any]]:
    """Current procedural memories (not rules) of the route; with topics, those tagged with any."""
    return _select(db, GUIDANCE, route, with_topics=True)


def rule_floor(db: Database, route: Route, budget: int = FLOOR_BUDGET) -> Packed:
    """The rule floor of a session start, within `budget` tokens."""
    heading = f"Rules ({route.label(with_topics=False)})"
    out = pack("rule_floor", heading, rule_candidates(db, route), budget)
    out.unverified = _waiting(db, RULES_WAITING, route, with_topics=False)
    return out


def guidance(db: Database, route: Route, budget: int = GUIDANCE_BUDGET) -> Packed:
    """The domain guidance of a route, within `budget` tokens."""
    heading = f"Guidance ({route.label(with_topics=True)})"
    out = pack("guidance", heading, guidance_candidates(db, route), budget)
    out.unverified = _waiting(db, GUIDANCE_WAITING, route, with_topics=True)
    return out
