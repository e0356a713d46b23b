"""Typed freshness and the final score (pipeline step 6): pure maths, `now` passed in.

Freshness is exp(-age/τ) with τ a per-type decay constant in days (not a half-life:
there is no ln 2). final = w_rel·relevance + w_imp·importance + w_fresh·freshness.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime

from hippo.memory.memtypes import BUILTIN, MemType
from hippo.retrieve.params import DEFAULT_PARAMS, SearchParams

_SECONDS_PER_DAY = 86400.0


def freshness(age_days: float, tau_days: float) -> float:
    """exp(-max(age, 0)/τ): 1.0 when new (or dated in the future), falling with age.

    In (0, 1] for any realistic age; it underflows to 0.0 only past age/τ ≈ 745.
    """
    if math.isnan(age_days):
        raise ValueError("age_days must be a number, not NaN")
    if not (tau_days > 0 and math.isfinite(tau_days)):
        raise ValueError(f"tau_days must be a positive number, not {tau_days!r}")
    return math.exp(-max(age_days, 0.0) / tau_days)


def tau_for(memory_type: str, types: Mapping[str, MemType] | None = None) -> float:
    """τ in days for `memory_type` from `types` (`Hippo.types`: built-in plus user types)."""
    table = BUILTIN if types is None else types
    try:
        return float(table[memory_type].tau_days)
    except KeyError:
        known = ", ".join(sorted(table))
        raise ValueError(f"unknown memory type {memory_type!r}; known types: {known}") from None


def parse_timestamp(value: str) -> datetime:
    """An aware UTC datetime from an ISO-8601 string ('Z' or offset; naive means UTC)."""
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"not an ISO-8601 timestamp: {value!r}") from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def age_days(created_at: str, confirmed_at: str | None, now: datetime) -> float:
    """Days from the memory's reference time to `now` (negative if it lies in the future).

    The reference time is `confirmed_at` when set (reinforced or verified), else
    `created_at`; the later of the two is used, so a confirmation can only refresh.
    `now` must be timezone-aware: a naive clock reading is ambiguous.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (e.g. datetime.now(UTC))")
    reference = parse_timestamp(created_at)
    if confirmed_at:
        reference = max(reference, parse_timestamp(confirmed_at))
    return (now - reference).total_seconds() / _SECONDS_PER_DAY


def final_score(
    relevance: float,
    importance: float,
    freshness: float,
    params: SearchParams = DEFAULT_PARAMS,
) -> float:
    """0.75·relevance + 0.10·importance + 0.15·freshness with the default weights."""
    return (
        params.w_relevance * relevance
        + params.w_importance * importance
        + params.w_freshness * freshness
    )


def match_factor(best_late: float | None, params: SearchParams = DEFAULT_PARAMS) -> float:
    """How well a query matches anything at all, 0..1, from the pool's best late-interaction
    score: 0 at `match_floor` or below, 1 from `match_full`, linear between. 1 when there
    is no such score (the stage did not run) or the setting is off (`match_full` 0)."""
    if best_late is None or params.match_full <= 0:
        return 1.0
    span = params.match_full - params.match_floor
    return min(1.0, max(0.0, (best_late - params.match_floor) / span))
