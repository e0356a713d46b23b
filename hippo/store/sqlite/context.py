"""SQLite: what the context layers read: the floor's rules and guidance, recall, sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.records import FIELDS
from hippo.store.sqlite.filters import CURRENT, UNVERIFIED

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.context import Scope
    from hippo.store.lexical import Terms
    from hippo.store.sqlite.database import Sql

COLUMNS = ", ".join(f"m.{name}" for name in FIELDS)
ORDER = "(m.author = 'human') DESC, m.importance DESC, m.pinned DESC, m.id"
# Guidance is the procedural tier minus the rules (those are the floor). Types named
# here count even when a memory overrides its tier.
GUIDANCE_TYPES = ("procedure", "tool", "config")
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
FTS = (
    f"SELECT {COLUMNS} FROM memories_fts f JOIN memories m ON m.id = f.rowid "
    f"WHERE memories_fts MATCH ? AND {CURRENT} AND {{scope}} "
    "ORDER BY bm25(memories_fts), m.id LIMIT ?"
)
CURATED = f"SELECT text FROM memories m WHERE {CURRENT} AND {{scope}}"
ECHO_TEXTS = "SELECT text FROM echo_chunks m WHERE {scope}"
UNVERIFIED_COUNT = f"SELECT count(*) FROM memories m WHERE {CURRENT} AND {UNVERIFIED}"


def scope_sql(scope: Scope) -> tuple[str, list[Any]]:
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
        parts.append(TOPIC_MATCH.format(marks=", ".join("?" * len(scope.topics))))
        params.extend(scope.topics)
    return " AND ".join(parts) or "1", params


class SqliteContextRows:
    def __init__(self, db: Sql) -> None:
        # Weak: the store holds its repositories, and a store nobody holds must close
        # (its connection released at once, as before there were repositories).
        self.db = db

    def _rows(self, template: str, scope: Scope) -> list[Row]:
        where, params = scope_sql(scope)
        return self.db.rows(template.format(scope=where), params)

    def _ids(self, template: str, scope: Scope) -> list[int]:
        where, params = scope_sql(scope)
        return [row[0] for row in self.db.execute(template.format(scope=where), params)]

    def rules(self, scope: Scope) -> list[Row]:
        return self._rows(RULES, scope)

    def guidance(self, scope: Scope) -> list[Row]:
        return self._rows(GUIDANCE, scope)

    def rules_waiting(self, scope: Scope) -> list[int]:
        return self._ids(RULES_WAITING, scope)

    def guidance_waiting(self, scope: Scope) -> list[int]:
        return self._ids(GUIDANCE_WAITING, scope)

    def lexical(self, terms: Terms, scope: Scope, limit: int) -> list[Row]:
        from hippo.store.sqlite.lexical import fts5_match

        match = fts5_match(terms)
        where, params = scope_sql(scope)
        return self.db.rows(FTS.format(scope=where), [match, *params, limit])

    def current_texts(self, scope: Scope) -> list[str]:
        return [r["text"] for r in self._rows(CURATED, scope)]

    def echo_texts(self, scope: Scope) -> list[str]:
        where, params = scope_sql(scope)
        return [row[0] for row in self.db.execute(ECHO_TEXTS.format(scope=where), params)]
