"""Spend caps and circuit breakers for every paid or remote call, shared by all processes.

Each CLI call is a new process, so the state lives in the `guard` table: per provider,
today's calls and tokens, consecutive failures, and until when the circuit is open.

    with spend.call(db, "voyage", tokens=estimate, settings=h.settings) as ticket:
        answer = client.rerank(...)
        ticket.tokens = answer.total_tokens      # actual usage, when the provider says

or step by step: `check()` before, `record_success()` / `record_failure()` after.
An open circuit or a reached cap raises `CircuitOpen` / `CapReached` (BusyError, exit 75);
callers with a fallback (search's reranker) catch them and degrade instead.

Limits per provider come from the config file, defaults below:
    [guard.voyage]
    calls_per_day = 1000      # 0 = no cap
    tokens_per_day = 0
    failures_to_open = 3      # consecutive failures that open the circuit
    open_seconds = 300        # how long it stays open
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hippo.errors import BusyError, ConfigError

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.store import Store

MAX_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class Limits:
    """A provider's daily caps (0 = none) and circuit-breaker settings."""

    calls_per_day: int = 1000
    tokens_per_day: int = 0
    failures_to_open: int = 3
    open_seconds: float = 300.0


# Defaults per provider; any other provider name gets `Limits()`.
DEFAULTS: Mapping[str, Limits] = {
    "voyage": Limits(calls_per_day=1000),
    "openai": Limits(calls_per_day=2000, tokens_per_day=2_000_000),
    "openai-chat": Limits(calls_per_day=1000, tokens_per_day=2_000_000),  # hippo extract
    # `hippo extract --extractor agent`: runs of the agent CLI; tokens from characters / 4
    "agent-cli": Limits(calls_per_day=200, tokens_per_day=2_000_000),
}

class CircuitOpen(BusyError):
    """The provider failed repeatedly; calls are refused until the circuit closes."""


class CapReached(BusyError):
    """Today's call or token cap for the provider is used up."""


@dataclass(slots=True)
class Ticket:
    """A call the guard let through; set `tokens` to the provider's actual usage."""

    provider: str
    estimated: int
    tokens: int


def limits_for(settings: Settings | None, provider: str) -> Limits:
    """The provider's limits: [guard.<provider>] from the config file over `DEFAULTS`."""
    base = DEFAULTS.get(provider, Limits())
    table = settings.table("guard").get(provider, {}) if settings is not None else {}
    if not isinstance(table, dict):
        raise ConfigError(f"[guard.{provider}] must be a table")
    known = {f.name: f.type for f in fields(Limits)}
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key not in known:
            raise ConfigError(f"unknown setting {key!r} in [guard.{provider}]; "
                              f"known: {', '.join(sorted(known))}")
        ok = (not isinstance(value, bool) and isinstance(value, int | float)
              and math.isfinite(value) and value >= 0)
        if not ok or (key != "open_seconds" and value != int(value)):
            raise ConfigError(f"[guard.{provider}] {key} must be a whole number >= 0, "
                              f"got {value!r}")
        changes[key] = float(value) if key == "open_seconds" else int(value)
    out = replace(base, **changes)
    if out.failures_to_open < 1:
        raise ConfigError(f"[guard.{provider}] failures_to_open must be at least 1")
    return out


def describe(error: BaseException | str) -> str:
    """One line for an error, with the HTTP status when the client recorded one."""
    from hippo.errors import scrub

    message = scrub(" ".join(str(error).split()) or type(error).__name__)
    status = getattr(error, "http_status", None) or getattr(error, "status_code", None)
    return f"HTTP {status}: {message}" if status else message


def _today(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def _clock(now: float | None) -> float:
    return time.time() if now is None else now


def status(db: Store, provider: str, *, now: float | None = None) -> dict[str, Any]:
    """Today's usage and breaker state of `provider` (zeros when it was never called)."""
    t = _clock(now)
    row = db.spend.state(provider)
    if row is None or row["day"] != _today(t):
        usage = {"calls": 0, "tokens": 0}
    else:
        usage = {"calls": row["calls"], "tokens": row["tokens"]}
    open_until = row["open_until"] if row else None
    return {
        "provider": provider, "day": _today(t), **usage,
        "consecutive_failures": row["consecutive_failures"] if row else 0,
        "open": bool(open_until and open_until > t),
        "open_until": open_until, "last_error": row["last_error"] if row else None,
    }


def check(db: Store, provider: str, *, tokens: int = 0, limits: Limits | None = None,
          now: float | None = None) -> Ticket:
    """Let one call through or raise; a call let through counts against today's cap at once.

    Counting before the call (in one write transaction) keeps concurrent processes from
    overrunning the cap together. `tokens` is the caller's estimate of this call's usage.
    """
    lim = limits or DEFAULTS.get(provider, Limits())
    t = _clock(now)
    day = _today(t)
    with db.transaction():
        db.spend.ensure(provider, day)
        db.spend.start_day(provider, day)
        row = db.spend.state(provider)
        assert row is not None
        if row["open_until"] is not None and row["open_until"] > t:
            wait = math.ceil(row["open_until"] - t)
            raise CircuitOpen(
                f"{provider} circuit open for {wait} s more after "
                f"{row['consecutive_failures']} consecutive failures "
                f"(last: {row['last_error'] or 'unknown'})")
        if lim.calls_per_day and row["calls"] + 1 > lim.calls_per_day:
            raise CapReached(f"{provider} daily cap of {lim.calls_per_day} calls reached; "
                             f"raise [guard.{provider}] calls_per_day or wait until tomorrow (UTC)")
        if lim.tokens_per_day and row["tokens"] + tokens > lim.tokens_per_day:
            raise CapReached(f"{provider} daily cap of {lim.tokens_per_day} tokens reached "
                             f"({row['tokens']} used); raise [guard.{provider}] tokens_per_day")
        db.spend.count_call(provider, max(tokens, 0))
    return Ticket(provider, max(tokens, 0), max(tokens, 0))


def record_success(db: Store, provider: str, *, tokens: int = 0) -> None:
    """Close the circuit and reset the failure count; `tokens` corrects the estimate.

    `tokens` is added to today's total (actual usage minus what `check` counted).
    """
    with db.transaction():
        db.spend.succeeded(provider, tokens)


def record_failure(db: Store, provider: str, error: BaseException | str, *,
                   limits: Limits | None = None, now: float | None = None) -> bool:
    """Count a consecutive failure; open the circuit at the limit. True when it is open now."""
    lim = limits or DEFAULTS.get(provider, Limits())
    t = _clock(now)
    message = describe(error)
    with db.transaction():
        db.spend.ensure(provider, _today(t))
        db.spend.failed(provider, message[:MAX_ERROR_CHARS], lim.failures_to_open,
                         t + lim.open_seconds)
        row = db.spend.state(provider)
    return bool(row and row["open_until"] and row["open_until"] > t)


@contextlib.contextmanager
def call(db: Store, provider: str, *, tokens: int = 0, settings: Settings | None = None,
         limits: Limits | None = None, now: float | None = None) -> Iterator[Ticket]:
    """Guard one call: check (may raise), run the body, record success or failure.

    Any exception from the body counts as a failure and is re-raised.
    """
    lim = limits or limits_for(settings, provider)
    ticket = check(db, provider, tokens=tokens, limits=lim, now=now)
    try:
        yield ticket
    except Exception as exc:
        record_failure(db, provider, exc, limits=lim, now=now)
        raise
    record_success(db, provider, tokens=ticket.tokens - ticket.estimated)
