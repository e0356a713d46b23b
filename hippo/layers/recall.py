"""Curated retrieval for an agent's prompt hook: the search pipeline, or FTS5 alone without it.

The hook runs on every prompt; when the full pipeline is unavailable it still answers
from the lexical index, which needs no embedding model.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from hippo.layers.floor import Route
from hippo.memory.records import to_record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from hippo.core import Hippo
    from hippo.store.lexical import Terms

LIMIT = 5
# A prompt hook adds a memory only from this score up. The final score's importance and
# freshness parts add up to 0.25 at most, so 0.3 keeps what has some relevance to the
# prompt; and a prompt about nothing stored ("thanks!", "run the tests") scores 0 with
# the local model (search's match factor), so it adds nothing.
MIN_SCORE = 0.3


def match_terms(prompt: str) -> Terms | None:
    """The lexical query for free text: any of its words (never index syntax)."""
    from hippo.retrieve.ftsquery import match_terms as terms_of

    return terms_of(prompt, "or")


def lexical(h: Hippo, prompt: str, route: Route, limit: int = LIMIT) -> list[dict[str, Any]]:
    """Up to `limit` active memories of the route ranked by BM25 against the prompt."""
    terms = match_terms(prompt)
    if terms is None:
        return []
    rows = h.db.lexical.recall(terms, route.scope(with_topics=False), limit)
    return [rec for rec in map(to_record, rows) if route.admits(rec)]


def has_pipeline() -> bool:
    return importlib.util.find_spec("hippo.retrieve.pipeline") is not None


def recall(h: Hippo, prompt: str, route: Route, limit: int = LIMIT,
           min_score: float = MIN_SCORE) -> tuple[list[dict[str, Any]], list[str]]:
    """Memories for a prompt, best first, each scoring `min_score` or more in search, and
    the degradations met on the way. (The lexical fallback has no score: BM25 found
    every word it returns in the memory.)"""
    if limit < 1 or not prompt.strip():
        return [], []
    if not has_pipeline():
        return lexical(h, prompt, route, limit), ["lexical-only: search pipeline not installed"]
    from hippo.retrieve.pipeline import search
    from hippo.retrieve.request import Scope

    projects = Scope(every=route.all_projects).projects(route.project)
    found = search(h, prompt, limit=limit, projects=projects)
    # What the route's agent loads by itself (its CLAUDE.md, its notes) is not said again.
    kept = [r for r in found.results if r["score"] >= min_score and route.admits(r)]
    if kept and min_score > 0 and unanswered(h, prompt, projects,
                                             [r["text"] for r in kept]):
        return [], list(found.degraded)
    return kept, list(found.degraded)


def unanswered(h: Hippo, question: str, projects: tuple[str | None, ...] | None,
               printed: Sequence[str] = ()) -> str:
    """Why nothing stored can answer `question` ("" when something may): a prompt about
    a thing never said in the scope gets no memories however well its other words match,
    nor one asking for a value (a URL, a version, a port) that none of the memories it
    would print (`printed`, their texts) gives (`hippo.retrieve.answerable`)."""
    from hippo.retrieve.answerable import verdict

    return verdict(h.db, question, projects, printed).reason


def render(records: list[dict[str, Any]], budget: int) -> str:
    """The Markdown of `hippo search --format markdown` (its renderer when installed)."""
    if not records:
        return ""
    try:
        from hippo.retrieve.render import markdown
    except ImportError:
        return _render(records, budget)
    return markdown(records, budget).text


def _render(records: list[dict[str, Any]], budget: int) -> str:
    from hippo.layers.pack import pack
    from hippo.memory.records import unreviewed

    def label(r: dict[str, Any]) -> str:
        kind = f"{r['type']}, machine-written, unverified" if unreviewed(r) else r["type"]
        return f"{kind}, {r.get('project') or 'global'}, {str(r.get('created_at') or '')[:10]}"

    return pack("recall", "Relevant memories", [
        {**r, "text": f"{r['text']} ({label(r)}, #{r['id']})"} for r in records], budget).text
