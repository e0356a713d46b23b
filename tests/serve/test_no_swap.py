"""A served call runs in an environment built from the request: the server process's
`os.environ`, working directory and `sys.stdin/stdout/stderr` stay as they are, during the
call and after it, while the call reads the client's variables and directory
(`hippo.serve.execute`, `hippo.console.environment`)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from hippo.cli.main import _app, main
from hippo.serve import execute
from hippo.warm import Warm
from tests.serve.helpers import off, seed

FACE = execute.Face(main, _app)  # the command line `hippo serve` hands its server

TEXT = "the release checklist lives in docs/release.md"


def _no_freshness(home: Path) -> None:
    """Scores without the clock's weight: the same call scores the same a second later."""
    (home / "config.toml").write_text(
        "[search]\nw_relevance = 0.85\nw_importance = 0.15\nw_freshness = 0.0\n")


def _call_env(db: Path | str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in off().items() if k != "HIPPO_PROJECT"}
    return {**env, "HIPPO_DB": str(db), **extra}


def _alone(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, bytes, bytes]:
    out = subprocess.run([sys.executable, "-m", "hippo", *argv], capture_output=True,
                         env=env, cwd=cwd, stdin=subprocess.DEVNULL, timeout=120, check=False)
    return out.returncode, out.stdout, out.stderr


def test_a_served_call_swaps_nothing_process_wide(db_path: Path | str, tmp_path: Path,
                                                  isolated_home: Path) -> None:
    """The call's directory names its project and its variables name the store; the
    server's own stay what they were, checked by another thread while the call runs."""
    _no_freshness(isolated_home)
    work = tmp_path / "cwdproj"
    work.mkdir()
    out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db_path), "-p", "cwdproj",
                          "--embedder", "hash", "add", TEXT, "--type", "fact"],
                         capture_output=True, env=off(), timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    seed(db_path, ["an unrelated fact in the test's own project"])
    env = _call_env(db_path, CALL_ONLY="1")
    assert os.getcwd() != str(work) and "CALL_ONLY" not in os.environ
    environ, cwd = dict(os.environ), os.getcwd()
    streams = (sys.stdin, sys.stdout, sys.stderr)
    calls = [(["search", "release checklist", "--json"], b""),
             (["search", "release checklist", "--format", "markdown"], b""),
             (["context", "--json"], b""),
             (["search", "--nope"], b""),
             (["-p", "elsewhere", "search", "release checklist"], b"")]
    results: list[Any] = []
    seen: list[str] = []

    def run() -> None:
        warm = Warm()
        for argv, stdin in calls:
            request = {"argv": argv, "env": env, "cwd": str(work), "streams": {}}
            results.append(execute.run(request, stdin, warm, face=FACE))

    thread = threading.Thread(target=run)
    thread.start()
    while thread.is_alive():  # during the calls
        if dict(os.environ) != environ:
            seen.append("environ")
        if os.getcwd() != cwd:
            seen.append("cwd")
        if (sys.stdin, sys.stdout, sys.stderr) != streams:
            seen.append("streams")
        thread.join(0.001)
    assert not seen, sorted(set(seen))
    assert dict(os.environ) == environ and os.getcwd() == cwd  # and after
    assert (sys.stdin, sys.stdout, sys.stderr) == streams
    assert len(results) == len(calls)
    for (argv, _), (code, stdout, stderr, _order) in zip(calls, results, strict=True):
        assert (code, stdout, stderr) == _alone(argv, env, work), argv
    # The call read the request's directory and variables, not the server's.
    assert TEXT.encode() in results[0][1] and b'"project":"cwdproj"' in results[0][1]
    assert results[3][0] == 2 and results[3][2].startswith(b"hippo: No such option")
    assert b"other projects" in results[4][2]


def test_a_served_call_with_its_own_stdin(db_path: Path | str, tmp_path: Path,
                                          isolated_home: Path) -> None:
    """`search -`: the request's stdin bytes, never the server process's stdin."""
    _no_freshness(isolated_home)
    seed(db_path, [TEXT])
    env = _call_env(db_path, HIPPO_PROJECT="testproj")
    before = sys.stdin
    request = {"argv": ["search", "-", "--json"], "env": env, "cwd": str(tmp_path),
               "streams": {"stdin": ["utf-8", "strict"]}}
    code, stdout, stderr, _ = execute.run(request, b"release checklist\n", Warm(), face=FACE)
    assert sys.stdin is before
    expected = subprocess.run([sys.executable, "-m", "hippo", "search", "-", "--json"],
                              input=b"release checklist\n", capture_output=True, env=env,
                              cwd=tmp_path, timeout=120, check=False)
    assert (code, stdout, stderr) == (expected.returncode, expected.stdout, expected.stderr)
    assert TEXT.encode() in stdout, stderr


def test_help_and_a_changed_process_variable_are_refused(tmp_path: Path) -> None:
    """What would be written to the process's own stdout (Click's help), or read from the
    process's variables below the commands, is left to the client."""
    import pytest

    env = dict(os.environ)
    for argv in (["search", "--help"], ["context", "-h"]):
        with pytest.raises(execute.Refused) as refused:
            execute.admissible(argv, env, str(tmp_path))
        assert refused.value.reason == "argv"
    execute.admissible(["search", "--", "-h"], env, str(tmp_path))  # a query, not help
    with pytest.raises(execute.Refused):
        execute.admissible(["add", "a write"], env, str(tmp_path))  # never served
    with pytest.raises(execute.Refused) as refused:
        execute.admissible(["search", "x"], {**env, "OPENAI_API_KEY": "sk-other"},
                           str(tmp_path))
    assert refused.value.reason == "env"
    with pytest.raises(execute.Refused) as refused:
        execute.admissible(["search", "x"], env, str(tmp_path / "gone"))
    assert refused.value.reason == "cwd"


def test_a_store_named_relative_to_the_clients_cwd_is_left_to_the_client(
        db_path: Path | str, isolated_home: Path) -> None:
    """`--db hippo.db` is the client's directory's file; the server, which never enters
    that directory, refuses the call and the client runs it, with the same output."""
    import pytest

    from tests.serve.helpers import env_on, serving, status

    if not isinstance(db_path, Path):
        pytest.skip("a PostgreSQL store has no relative name")
    _no_freshness(isolated_home)
    seed(db_path, [TEXT])
    argv = [sys.executable, "-m", "hippo", "--db", db_path.name, "search", "release",
            "--json"]
    alone = subprocess.run(argv, capture_output=True, env=off(), cwd=db_path.parent,
                           timeout=120, check=False)
    with serving(db_path):
        served = subprocess.run(argv, capture_output=True, env=env_on(), cwd=db_path.parent,
                                timeout=120, check=False)
        answer = status(db_path)
    assert (served.returncode, served.stdout, served.stderr) == (
        alone.returncode, alone.stdout, alone.stderr)
    assert TEXT.encode() in served.stdout
    assert answer is not None and answer["refused"].get("relative") == 1
