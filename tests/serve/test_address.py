"""Where servers live: the runtime directory, and whose it must be (`hippo.serve.address`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hippo.serve import address, spawn

NOBODY = 65534


@pytest.fixture
def foreign_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_RUNTIME_DIR set to another user's directory (root with a user's environment,
    as `sudo -E` leaves it); this user's fallback directory in tmp."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to give a directory to another user")
    theirs = tmp_path / "run-user-1000"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(theirs))
    monkeypatch.setattr(address, "FALLBACK", str(tmp_path / "fallback-{uid}"), raising=False)
    return theirs


def test_another_users_runtime_dir_is_not_used(foreign_runtime: Path, tmp_path: Path) -> None:
    assert address.directory() == str(tmp_path / f"fallback-{os.geteuid()}")


def test_nothing_is_created_in_another_users_runtime_dir(
        foreign_runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[Any] = []

    class Child:
        pid = 1

    def popen(argv: list[str], **kwargs: Any) -> Child:
        started.append(argv)
        return Child()

    monkeypatch.setattr(subprocess, "Popen", popen)
    db = tmp_path / "x.db"
    db.write_bytes(b"")
    spawn.auto_start(["--db", str(db), "search", "x"])
    assert list(foreign_runtime.iterdir()) == []
    assert started  # it did start one, with its files in the fallback directory
    assert os.path.isdir(tmp_path / f"fallback-{os.geteuid()}")


def test_an_own_runtime_dir_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "run"
    mine.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(mine))
    assert address.directory() == str(mine / "hippo")
