"""What the context layers read: the floor's rules and guidance, sizes; once for both
backends (`hippo.store.sql`). Recall's BM25 is the full-text index's (`store.lexical.recall`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from hippo.store.clauses import UNVERIFIED
from hippo.store.memories import FIELDS
from hippo.store.sql import Repository, render

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.clauses import Dialect

COLUMNS = ", ".join(f"m.{name}" for name in FIELDS)
ORDER = "(m.author = 'human') DESC, m.importance DESC, m.pinned DESC, m.id"
# Guidance is the procedural tier minus the rules (those are the floor). Types named
# here count even when a memory overrides its tier.
GUIDANCE_TYPES = ("procedure", "tool", "config")
ADMITTED = f"NOT ({UNVERIFIED})"
_RULES = "m.type = 'rule'"
_GUIDANCE = (f"m.type <> 'rule' AND (m.tier = 'procedural' "
             f"OR m.type IN ({', '.join(repr(t) for t in GUIDANCE_TYPES)}))")
# `{scope}`: `scope_sql`'s clause; `{current}`: active and valid now (`clauses.CURRENT`).
RULES = (f"SELECT {COLUMNS} FROM memories m WHERE {{current}} AND {_RULES} AND {ADMITTED} "
         "AND {scope} ORDER BY " + ORDER)
GUIDANCE = (f"SELECT {COLUMNS} FROM memories m WHERE {{current}} AND {_GUIDANCE} "
            f"AND {ADMITTED} AND {{scope}} ORDER BY " + ORDER)
# What each layer holds back until a person reviews it, in id order.
RULES_WAITING = (f"SELECT m.id FROM memories m WHERE {{current}} AND {_RULES} "
                 f"AND {UNVERIFIED} AND {{scope}} ORDER BY m.id")
GUIDANCE_WAITING = (f"SELECT m.id FROM memories m WHERE {{current}} AND {_GUIDANCE} "
                    f"AND {UNVERIFIED} AND {{scope}} ORDER BY m.id")
CURATED = "SELECT m.text FROM memories m WHERE {current} AND {scope}"
ECHO_TEXTS = "SELECT m.text FROM echo_chunks m WHERE {scope}"


class LayerScope(NamedTuple):
    """The memories a layer covers: `project`'s and the global ones (the global ones
    alone when `project` is None), or every project; with `topics`, only memories tagged
    with any of them (lower-cased). A NamedTuple: it is built at every session start."""

    project: str | None
    all_projects: bool = False
    topics: tuple[str, ...] = ()


def scope_sql(d: Dialect, scope: LayerScope) -> tuple[str, list[Any]]:
    """A WHERE fragment over `memories m` (or `echo_chunks m`) and its bound parameters."""
    parts: list[str] = []
    params: list[Any] = []
    if not scope.all_projects:
        if scope.project is None:
            parts.append("m.project IS NULL")
        else:
            parts.append("(m.project = ? OR m.project IS NULL)")
            params.append(scope.project)
    if scope.topics:
        parts.append("(" + " OR ".join(d.tagged.format(alias="m") for _ in scope.topics) + ")")
        params.extend(scope.topics)
    return " AND ".join(parts) or d.true, params


def scoped(d: Dialect, template: str, scope: LayerScope) -> tuple[str, list[Any]]:
    """`template` (naming `{scope}`) in `d`'s spelling over `scope`, and its parameters."""
    where, params = scope_sql(d, scope)
    return render(d, template.replace("{scope}", where)), params


class ContextRows(Repository):
    """What the context layers read: the floor's rules and guidance, sizes.

    A layer loads current memories (active, not superseded) only; a rule or preference a
    machine wrote waits until a person verified or pinned it. Rows of memories come in
    floor order: human-authored first, then importance, pinned, id."""

    def _rows(self, template: str, scope: LayerScope) -> list[Row]:
        return self.db.rows(*scoped(self.db.dialect, template, scope))

    def _column(self, template: str, scope: LayerScope) -> list[Any]:
        return [row[0] for row in self.db.execute(*scoped(self.db.dialect, template, scope))]

    def rules(self, scope: LayerScope) -> list[Row]:
        """The current admitted rules of the scope, in floor order."""
        return self._rows(RULES, scope)

    def guidance(self, scope: LayerScope) -> list[Row]:
        """The current admitted procedural memories (not rules) of the scope, in floor order."""
        return self._rows(GUIDANCE, scope)

    def rules_waiting(self, scope: LayerScope) -> list[int]:
        """Ids of the current rules held back until a person reviews them, in order."""
        return [int(i) for i in self._column(RULES_WAITING, scope)]

    def guidance_waiting(self, scope: LayerScope) -> list[int]:
        """Ids of the current guidance held back until a person reviews it, in order."""
        return [int(i) for i in self._column(GUIDANCE_WAITING, scope)]

    def current_texts(self, scope: LayerScope) -> list[str]:
        """The texts of the scope's current memories."""
        return self._column(CURATED, scope)

    def echo_texts(self, scope: LayerScope) -> list[str]:
        """The texts of the scope's Echo chunks."""
        return self._column(ECHO_TEXTS, scope)
