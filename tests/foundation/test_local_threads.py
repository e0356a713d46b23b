"""How many threads the local model runs on: every core (at most 4), or HIPPO_THREADS."""

from __future__ import annotations

import os

import pytest

from hippo.embed.local import threads
from hippo.errors import ConfigError


def test_default_is_every_core_up_to_four(monkeypatch) -> None:
    monkeypatch.delenv("HIPPO_THREADS", raising=False)
    assert threads() == min(4, os.cpu_count() or 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert threads() == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert threads() == 2


def test_hippo_threads_overrides(monkeypatch) -> None:
    monkeypatch.setenv("HIPPO_THREADS", " 3 ")
    assert threads() == 3
    monkeypatch.setenv("HIPPO_THREADS", "")
    assert threads() == min(4, os.cpu_count() or 2)


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5", "3x"])
def test_a_bad_count_is_a_configuration_error(monkeypatch, raw) -> None:
    monkeypatch.setenv("HIPPO_THREADS", raw)
    with pytest.raises(ConfigError, match=f"HIPPO_THREADS must be a whole number of 1 or more, "
                                          f"got {raw!r}"):
        threads()


def test_add_with_a_bad_count_exits_78_and_stores_nothing(cli) -> None:
    assert cli("add", "kept before", embedder="local").exit_code == 0
    r = cli("add", "Never force-push to main", embedder="local", env={"HIPPO_THREADS": "two"})
    assert r.exit_code == 78
    assert r.stderr.strip().splitlines()[-1] == (
        "hippo: HIPPO_THREADS must be a whole number of 1 or more, got 'two'")
    listed = cli("list", "--json", embedder="local").records
    assert [m["text"] for m in listed] == ["kept before"]
