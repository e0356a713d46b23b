"""BM25 over the Brain's full-text index (pipeline step 2, lexical side).

The query text becomes terms (`ftsquery.match_terms`), never index syntax. Every
term must match first; when that finds fewer than `fts_and_min_hits`, the OR form
(stopwords dropped) adds its hits after the AND ones. Filters are applied by the store
inside its query (`store.lexical.search`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.errors import BusyError, HippoError
from hippo.retrieve.ftsquery import match_terms
from hippo.store.lexical import IndexUnavailable, LexHit, Terms

if TYPE_CHECKING:
    from hippo.store import Store
    from hippo.store.filters import MemoryFilter


class FtsUnavailable(Exception):
    """The lexical retriever cannot run for this query; the message says why."""


def _run(db: Store, terms: Terms, k: int, filters: MemoryFilter) -> list[LexHit]:
    try:
        return db.lexical.search(terms, k, filters)
    except BusyError:
        raise
    except (IndexUnavailable, HippoError) as exc:
        raise FtsUnavailable(f"full-text index unavailable ({exc})") from exc


def search(db: Store, query: str, k: int, filters: MemoryFilter, *,
           and_min_hits: int = 5) -> list[LexHit]:
    """Up to `k` hits, best first: AND hits, then OR hits if AND found fewer than `and_min_hits`.

    Raises FtsUnavailable when the query has no searchable term or the index is unusable.
    """
    strict = match_terms(query, "and")
    loose = match_terms(query, "or")
    if strict is None and loose is None:
        raise FtsUnavailable("no searchable words in the query")
    hits = _run(db, strict, k, filters) if strict is not None and k > 0 else []
    same = strict is not None and loose is not None and loose.same_match(strict)
    if loose is not None and not same and len(hits) < min(and_min_hits, k):
        seen = {h.id for h in hits}
        extra = [h for h in _run(db, loose, k, filters) if h.id not in seen]
        hits += extra[: k - len(hits)]
    return hits
