"""PostgreSQL: what the context layers read: the floor's rules and guidance, recall, sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.records import FIELDS
from hippo.store.postgres.filters import CURRENT, UNVERIFIED

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.context import Scope
    from hippo.store.lexical import Terms
    from hippo.store.postgres.database import PgSql

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
# `tags` is a JSON array as text: any of the topics (a text[] parameter).
TOPIC_MATCH = "m.tags::jsonb ?| %s"
# One word or phrase of `Terms` as a tsquery: its tokens adjacent (`<->`), stemmed as
# the `tsv` columns are. The text is a bound parameter, never tsquery syntax.
TERM = "phraseto_tsquery('hippo_text', %s)"
# Best first: cover density, divided by 1 + log(length) (FTS5's BM25 also favours the
# shorter of two rows with the same matches); ties by id.
LEXICAL = (
    f"SELECT {COLUMNS} FROM memories m, ({{query}}) q(query) "
    "WHERE m.tsv @@ q.query AND m.status = 'active' AND {scope} "
    "ORDER BY ts_rank_cd(m.tsv, q.query, 1) DESC, m.id LIMIT %s"
)
CURATED = f"SELECT m.text FROM memories m WHERE {CURRENT} AND {{scope}}"
ECHO_TEXTS = "SELECT m.text FROM echo_chunks m WHERE {scope}"


def scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    """A WHERE fragment over `memories m` (or `echo_chunks m`) and its parameters."""
    parts: list[str] = []
    params: list[Any] = []
    if not scope.all_projects:
        if scope.project is None:
            parts.append("m.project IS NULL")
        else:
            parts.append("(m.project = %s OR m.project IS NULL)")
            params.append(scope.project)
    if scope.topics:
        parts.append(TOPIC_MATCH)
        params.append(list(scope.topics))
    return " AND ".join(parts) or "TRUE", params


def tsquery(terms: Terms) -> tuple[str, list[str]]:
    """`terms` as a tsquery expression (all words: `&&`, any: `||`) and its parameters."""
    joiner = " && " if terms.mode == "and" else " || "
    return "SELECT " + joiner.join(TERM for _ in terms.words), list(terms.words)


class PgContextRows:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def _rows(self, template: str, scope: Scope) -> list[Row]:
        where, params = scope_sql(scope)
        return self.db.rows(template.format(scope=where), params)

    def _ids(self, template: str, scope: Scope) -> list[int]:
        return [int(r["id"]) for r in self._rows(template, scope)]

    def rules(self, scope: Scope) -> list[Row]:
        return self._rows(RULES, scope)

    def guidance(self, scope: Scope) -> list[Row]:
        return self._rows(GUIDANCE, scope)

    def rules_waiting(self, scope: Scope) -> list[int]:
        return self._ids(RULES_WAITING, scope)

    def guidance_waiting(self, scope: Scope) -> list[int]:
        return self._ids(GUIDANCE_WAITING, scope)

    def lexical(self, terms: Terms, scope: Scope, limit: int) -> list[Row]:
        if not terms.words:
            return []
        query, words = tsquery(terms)
        where, params = scope_sql(scope)
        return self.db.rows(LEXICAL.format(query=query, scope=where), [*words, *params, limit])

    def current_texts(self, scope: Scope) -> list[str]:
        return [r["text"] for r in self._rows(CURATED, scope)]

    def echo_texts(self, scope: Scope) -> list[str]:
        return [r["text"] for r in self._rows(ECHO_TEXTS, scope)]
