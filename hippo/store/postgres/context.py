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
TOPIC_MATCH = "jsonb_exists_any(m.tags::jsonb, ?)"
# Recall's lexical fallback with topics: each word or phrase a tsquery of its tokens
# (`<->` adjacent), split (`hippo_words`) and stemmed as the `tsv` columns are, bound as a
# parameter, never tsquery syntax; ranked by cover density over 1 + log(length), ties by
# id. Without topics (what recall asks) it is search's own BM25
# (`hippo.store.postgres.lexical`), as SQLite's is FTS5's bm25() in both.
TERM = "phraseto_tsquery('hippo_text', hippo_words(?))"
LEXICAL = (
    f"SELECT {COLUMNS} FROM memories m, ({{query}}) q(query) "
    f"WHERE m.tsv @@ q.query AND {CURRENT} AND {{scope}} "
    "ORDER BY ts_rank_cd(m.tsv, q.query, 1) DESC, m.id LIMIT ?"
)
BY_IDS = f"SELECT {COLUMNS} FROM memories m WHERE m.id = ANY(?)"
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
            parts.append("(m.project = ? OR m.project IS NULL)")
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
        if not terms.words or limit < 1:
            return []
        if not scope.topics:
            return self._ranked(terms, scope, limit)
        query, words = tsquery(terms)
        where, params = scope_sql(scope)
        return self.db.rows(LEXICAL.format(query=query, scope=where), [*words, *params, limit])

    def _ranked(self, terms: Terms, scope: Scope, limit: int) -> list[Row]:
        """Search's BM25 over the scope's current memories, best first."""
        from hippo.store.filters import SearchFilters
        from hippo.store.postgres.lexical import PgLexical

        projects = (None if scope.all_projects else (None,) if scope.project is None
                    else (scope.project, None))
        hits = PgLexical(self.db).search(terms, limit, SearchFilters(
            projects=projects))
        if not hits:
            return []
        rows = {int(r["id"]): r for r in self.db.rows(BY_IDS, ([h.id for h in hits],))}
        return [rows[h.id] for h in hits if h.id in rows]

    def current_texts(self, scope: Scope) -> list[str]:
        return [r["text"] for r in self._rows(CURATED, scope)]

    def echo_texts(self, scope: Scope) -> list[str]:
        return [r["text"] for r in self._rows(ECHO_TEXTS, scope)]
