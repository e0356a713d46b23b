"""How a call starts a server: what the new process is given (`hippo.serve.spawn`)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from hippo.serve import spawn

URL = "postgresql://alice:s3cret-pw@db.example:5432/team"


class _Child:
    pid = 4242


def _launched(monkeypatch: pytest.MonkeyPatch, flag: str | None, tmp_path: Path
              ) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def popen(argv: list[str], **kwargs: Any) -> _Child:
        seen["argv"], seen["env"] = argv, kwargs.get("env")
        return _Child()

    monkeypatch.setattr(subprocess, "Popen", popen)
    files = {"log": str(tmp_path / "x.log")}
    assert spawn.launch(flag, files) == _Child.pid
    return seen


def test_a_servers_url_is_never_in_its_argv(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    seen = _launched(monkeypatch, URL, tmp_path)
    assert not any("s3cret" in arg for arg in seen["argv"])
    assert "--db" not in seen["argv"]
    assert seen["env"]["HIPPO_DB"] == URL  # the server finds it in its environment
    # ... and so keys its files as the client did (address.spec reads HIPPO_DB)
    monkeypatch.setenv("HIPPO_DB", URL)
    with_env = spawn.files_for(None)
    monkeypatch.delenv("HIPPO_DB")
    assert with_env == spawn.files_for(URL)


def test_without_a_flag_the_environment_is_passed_on(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("HIPPO_DB", str(tmp_path / "env.db"))
    seen = _launched(monkeypatch, None, tmp_path)
    assert seen["env"]["HIPPO_DB"] == str(tmp_path / "env.db")
    assert seen["argv"][-1] == "serve"
