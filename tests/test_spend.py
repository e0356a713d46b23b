"""The spend guard: circuit breaker and daily caps per provider, shared across processes."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hippo.config import load
from hippo.errors import BusyError, ConfigError, ExitCode
from hippo.paid import spend
from hippo.store import Store, connect

T0 = datetime(2026, 3, 10, 23, 50, tzinfo=UTC).timestamp()
LIM = spend.Limits(calls_per_day=5, tokens_per_day=1000, failures_to_open=3, open_seconds=300)


@pytest.fixture
def db(db_path: Path) -> Store:
    return connect(db_path)


def test_breaker_opens_after_three_consecutive_failures_then_half_opens(db: Store) -> None:
    for n in range(2):
        spend.check(db, "voyage", limits=LIM, now=T0 + n)
        assert spend.record_failure(db, "voyage", "timeout", limits=LIM, now=T0 + n) is False
    spend.check(db, "voyage", limits=LIM, now=T0 + 2)
    assert spend.record_failure(db, "voyage", "HTTP 503", limits=LIM, now=T0 + 2) is True
    with pytest.raises(spend.CircuitOpen, match="open for 300 s more after 3 consecutive "
                       r"failures \(last: HTTP 503\)") as err:
        spend.check(db, "voyage", limits=LIM, now=T0 + 2)
    assert isinstance(err.value, BusyError) and err.value.exit_code == ExitCode.TEMPFAIL
    with pytest.raises(spend.CircuitOpen, match="for 1 s more"):
        spend.check(db, "voyage", limits=LIM, now=T0 + 301.5)
    # After the cool-down one trial call goes through; failing again reopens at once.
    spend.check(db, "voyage", limits=LIM, now=T0 + 303)
    assert spend.record_failure(db, "voyage", "still down", limits=LIM, now=T0 + 303) is True
    with pytest.raises(spend.CircuitOpen):
        spend.check(db, "voyage", limits=LIM, now=T0 + 304)
    # A success closes it and resets the count.
    spend.check(db, "voyage", limits=LIM, now=T0 + 700)
    spend.record_success(db, "voyage")
    state = spend.status(db, "voyage", now=T0 + 700)
    assert state["consecutive_failures"] == 0 and not state["open"]
    assert state["last_error"] == "still down"


def test_success_between_failures_resets_the_count(db: Store) -> None:
    lim = spend.Limits(calls_per_day=0)  # no cap
    for outcome in ("fail", "fail", "ok", "fail", "fail"):
        spend.check(db, "voyage", limits=lim, now=T0)
        if outcome == "ok":
            spend.record_success(db, "voyage")
        else:
            spend.record_failure(db, "voyage", "x", limits=lim, now=T0)
    assert spend.status(db, "voyage", now=T0)["consecutive_failures"] == 2
    spend.check(db, "voyage", limits=lim, now=T0)  # still closed


def test_daily_call_cap_resets_at_utc_midnight(db: Store) -> None:
    for _ in range(5):
        spend.check(db, "openai", limits=LIM, now=T0)
    with pytest.raises(spend.CapReached, match="daily cap of 5 calls reached") as err:
        spend.check(db, "openai", limits=LIM, now=T0)
    assert err.value.exit_code == 75
    assert spend.status(db, "openai", now=T0)["calls"] == 5  # a refused call is not counted
    spend.check(db, "openai", limits=LIM, now=T0 + 15 * 60)  # 00:05 the next day (UTC)
    assert spend.status(db, "openai", now=T0 + 15 * 60)["calls"] == 1


def test_token_cap_uses_estimates_then_actual_usage(db: Store) -> None:
    ticket = spend.check(db, "openai", tokens=600, limits=LIM, now=T0)
    assert (ticket.estimated, ticket.tokens) == (600, 600)
    spend.record_success(db, "openai", tokens=100 - 600)  # it actually used 100
    assert spend.status(db, "openai", now=T0)["tokens"] == 100
    spend.check(db, "openai", tokens=900, limits=LIM, now=T0)
    with pytest.raises(spend.CapReached, match="1000 tokens reached \\(1000 used\\)"):
        spend.check(db, "openai", tokens=1, limits=LIM, now=T0)
    spend.check(db, "openai", tokens=0, limits=LIM, now=T0)  # calls still allowed at 0 cost


def test_call_context_records_outcomes(db: Store) -> None:
    with spend.call(db, "voyage", tokens=50, limits=LIM, now=T0) as ticket:
        ticket.tokens = 80
    assert spend.status(db, "voyage", now=T0)["tokens"] == 80
    for _ in range(3):
        with pytest.raises(RuntimeError), spend.call(db, "voyage", limits=LIM, now=T0):
            raise RuntimeError("connection reset")
    state = spend.status(db, "voyage", now=T0)
    assert state["open"] and state["last_error"] == "connection reset"
    assert state["calls"] == 4  # every call that went out counts against the cap
    ran = False
    with pytest.raises(spend.CircuitOpen), spend.call(db, "voyage", limits=LIM, now=T0):
        ran = True
    assert not ran


def test_providers_are_independent_and_unknown_ones_get_defaults(db: Store) -> None:
    for _ in range(3):
        spend.check(db, "voyage", limits=LIM, now=T0)
        spend.record_failure(db, "voyage", "down", limits=LIM, now=T0)
    spend.check(db, "openai", now=T0)
    spend.check(db, "my-llm", now=T0)
    assert spend.status(db, "never-called") == {
        "provider": "never-called", "day": spend.status(db, "x")["day"], "calls": 0,
        "tokens": 0, "consecutive_failures": 0, "open": False, "open_until": None,
        "last_error": None}


def test_limits_come_from_config_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[guard.voyage]\ncalls_per_day = 10\nopen_seconds = 30.5\n"
                   "[guard.ollama]\ntokens_per_day = 5000\nfailures_to_open = 1\n")
    monkeypatch.setenv("HIPPO_CONFIG", str(cfg))
    settings = load()
    assert spend.limits_for(settings, "voyage") == spend.Limits(10, 0, 3, 30.5)
    assert spend.limits_for(settings, "ollama") == spend.Limits(1000, 5000, 1, 300.0)
    assert spend.limits_for(settings, "openai") == spend.DEFAULTS["openai"]
    assert spend.limits_for(None, "voyage") == spend.Limits(calls_per_day=1000)
    for bad, message in (("calls_per_day = -1", "whole number"), ("calls = 3", "unknown"),
                         ("tokens_per_day = 1.5", "whole number"),
                         ("failures_to_open = 0", "at least 1"),
                         ("open_seconds = true", "whole number")):
        cfg.write_text(f"[guard.voyage]\n{bad}\n")
        with pytest.raises(ConfigError, match=message):
            spend.limits_for(load(), "voyage")


def test_another_process_sees_the_open_circuit(db: Store, db_path: Path) -> None:
    for _ in range(3):
        spend.check(db, "voyage")
        spend.record_failure(db, "voyage", "HTTP 500: boom")
    code = (
        "import sys; from pathlib import Path; from hippo.paid import spend; "
        "from hippo.store import connect\n"
        "try:\n"
        f"    spend.check(connect({str(db_path)!r}), 'voyage')\n"
        "except spend.CircuitOpen as exc:\n"
        "    print(exc); sys.exit(int(exc.exit_code))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 75, proc.stderr
    assert "voyage circuit open" in proc.stdout and "HTTP 500: boom" in proc.stdout
