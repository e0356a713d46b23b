"""Optional Voyage cross-encoder rerank (pipeline step 7), behind `hippo.paid.spend`.

The reranker scores (query, memory text) pairs; the pipeline then uses that score as
the relevance of the final blend. Every failure (no key, circuit open, cap reached,
timeout, HTTP error, odd answer) raises `RerankUnavailable`, and search keeps its own
order. The timeout covers the HTTP exchange; importing `voyageai` (about a second)
happens only after the guard let the call through.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hippo.paid import spend
from hippo.retrieve.background import Pending

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.store import Store

PROVIDER = "voyage"
DEFAULT_MODEL = "rerank-2.5-lite"
# Where to send requests instead of Voyage's default (a proxy, a test server).
BASE_URL_ENV = "HIPPO_VOYAGE_BASE_URL"
T = TypeVar("T")


class RerankUnavailable(Exception):
    """The reranker could not be used for this query; the message says why."""


def _deadline(fn: Callable[[], T], seconds: float) -> T:
    """Run `fn` in a daemon thread; TimeoutError if it has not returned after `seconds`."""
    return Pending(fn, "hippo-rerank").result(seconds)


def estimate_tokens(query: str, documents: Sequence[str]) -> int:
    """Rough usage before the call (Voyage bills the query once per document)."""
    return sum(len(query) + len(d) for d in documents) // 4 + 1


def _scores(results: Any, n: int) -> list[float]:
    """One finite score per document, from the client's `results` (index, relevance_score)."""
    out: list[float | None] = [None] * n
    for item in results:
        index, score = int(item.index), float(item.relevance_score)
        if not 0 <= index < n or not math.isfinite(score) or out[index] is not None:
            raise ValueError(f"unexpected rerank result (index {index}, score {score})")
        out[index] = score
    if any(s is None for s in out):
        raise ValueError(f"rerank answered for {sum(s is not None for s in out)} of {n} texts")
    return [s for s in out if s is not None]


def rerank(db: Store, settings: Settings | None, query: str, documents: Sequence[str], *,
           timeout_ms: int = 800, model: str | None = None) -> list[float]:
    """Voyage's relevance score for each of `documents` (same order), or RerankUnavailable."""
    if not documents:
        return []
    key = os.environ.get("VOYAGE_API_KEY")
    if not key:
        raise RerankUnavailable("VOYAGE_API_KEY is not set")
    chosen = model or (settings.get("voyage_rerank_model") if settings else None) or DEFAULT_MODEL
    base_url = (settings.get("voyage_base_url") if settings else None) or os.environ.get(
        BASE_URL_ENV) or None
    seconds = timeout_ms / 1000.0
    try:
        # `guard` still takes the SQLite store (issue 23 moves it behind the store).
        with spend.call(db, PROVIDER, tokens=estimate_tokens(query, documents),
                        settings=settings) as ticket:
            import voyageai

            client = voyageai.Client(api_key=key, max_retries=0, timeout=seconds,
                                     base_url=base_url)
            answer = _deadline(lambda: client.rerank(query, list(documents), model=chosen,
                                                     truncation=True), seconds)
            scores = _scores(answer.results, len(documents))
            ticket.tokens = int(getattr(answer, "total_tokens", 0) or ticket.estimated)
    except (spend.CircuitOpen, spend.CapReached) as exc:
        raise RerankUnavailable(str(exc)) from exc
    except Exception as exc:  # any provider failure means the local order
        raise RerankUnavailable(f"voyage rerank failed: {spend.describe(exc)}") from exc
    return scores
