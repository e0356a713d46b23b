"""A call answered by the server prints what the same call prints without one, byte for
byte: stdout, stderr and the exit code, for every read command the server answers."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests.serve.helpers import calls, hippo, off, seed, serving

RULES = ("never force-push to main: open a pull request", "run the linter before each commit")
FACTS = ("the deploy script needs the staging token from vault",
         "pytest fixtures share the database through a session scope",
         "wal mode lets readers run beside the one writer")
TURNS = [("user", "why does the staging deploy fail with ERR_SSL_PROTOCOL_ERROR?"),
         ("assistant", "the proxy wants the corporate CA bundle; set REQUESTS_CA_BUNDLE"),
         ("user", "and the flaky pytest run?"),
         ("assistant", "the fixtures share one database; give each test its own schema")]


def _prompt(text: str, cwd: Path) -> bytes:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": text,
                       "session_id": "5e1f0c9e-0000-4000-8000-000000000001",
                       "cwd": str(cwd)}).encode()


def _start(cwd: Path) -> bytes:
    return json.dumps({"hook_event_name": "SessionStart", "source": "startup",
                       "session_id": "5e1f0c9e-0000-4000-8000-000000000001",
                       "cwd": str(cwd)}).encode()


@pytest.fixture
def store(db_path: Path | str, tmp_path: Path, isolated_home: Path) -> Path | str:
    # A score's freshness changes with the clock between two calls; without its weight
    # the same call scores the same a second later, so outputs compare byte for byte.
    (isolated_home / "config.toml").write_text(
        "[search]\nw_relevance = 0.85\nw_importance = 0.15\nw_freshness = 0.0\n")
    seed(db_path, FACTS)
    for rule in RULES:
        out = hippo(db_path, "--embedder", "hash", "add", rule, "--type", "rule", env=off())
        assert out.returncode == 0, out.stderr
    src = tmp_path / "chat.jsonl"
    src.write_bytes(b"".join(orjson.dumps({"role": r, "content": t}) + b"\n"
                             for r, t in TURNS))
    out = hippo(db_path, "--embedder", "hash", "ingest", str(src), "--idle-minutes", "0",
                "--format", "generic-jsonl", env=off())
    assert out.returncode == 0, out.stderr
    return db_path


CALLS: list[tuple[tuple[str, ...], str | None]] = [
    (("search", "deploy staging token", "--json"), None),
    (("search", "deploy staging token"), None),  # piped: JSON lines
    (("search", "deploy staging token", "--format", "markdown"), None),
    (("search", "pytest database", "--json", "--limit", "2", "--type", "fact"), None),
    (("search", "zzzz qqqq nothing"), None),
    (("search", "deploy", "--min-score", "0.99"), None),
    (("search", 'deploy AND (token OR "vault'), None),  # FTS5 syntax is text
    (("search", "deploy", "--limit", "0"), None),  # a usage error: exit 2
    (("search", "--help"), None),  # run by the client (NOT_SENT)
    (("search", "-", "--json"), "stdin"),
    (("search", "\udcff\udcfe token", "--json"), None),  # argv that is not UTF-8
    (("-p", "otherproj", "search", "deploy", "--json"), None),
    (("echo", "CA bundle proxy", "--json"), None),
    (("echo", "flaky pytest", "--context", "1"), None),
    (("context",), None),
    (("context", "--json"), None),
    (("context", "--route", "--budget", "50"), None),
    (("hook", "claude-code", "prompt"), "prompt"),
    (("hook", "claude-code", "prompt", "--plain"), "prompt"),
    (("hook", "claude-code", "session-start"), "start"),
    (("hook", "claude-code", "prompt"), "garbage"),
    (("search", "deploy staging token", "--json", "--as-of", "2099-01-01"), None),
    (("search", "deploy", "--as-of", "soon"), None),  # a bad time: exit 2, one line
    (("search", "deploy staging token", "--format", "table"), None),  # rich, piped
    (("context", "-h"), None),  # run by the client (NOT_SENT)
    (("echo", "CA bundle proxy", "--wide", "--json"), None),
    (("--debug", "search", "deploy", "--limit", "0"), None),
    (("hook", "claude-code", "session-start", "--plain"), "start"),
]
# Calls the client runs itself, never sent: Click prints help to the process's stdout.
NOT_SENT = {("search", "--help"), ("context", "-h")}


def _stdin(kind: str | None, tmp_path: Path) -> bytes | None:
    cwd = tmp_path / "testproj"  # the agent works in the project's directory
    cwd.mkdir(exist_ok=True)
    return {None: None, "stdin": b"which token does the deploy need?\n",
            "prompt": _prompt("how do I fix the staging deploy token?", cwd),
            "start": _start(cwd), "garbage": b"{not json\xff"}[kind]


def test_every_served_call_prints_what_the_call_prints_alone(store: Path | str,
                                                             tmp_path: Path) -> None:
    alone = {}
    for args, kind in CALLS:
        alone[args, kind] = hippo(store, *args, input=_stdin(kind, tmp_path), env=off())
    with serving(store):
        for args, kind in CALLS:
            before = calls(store)
            served = hippo(store, *args, input=_stdin(kind, tmp_path))
            sent = 0 if args in NOT_SENT else 1
            assert calls(store) == before + sent, (args, kind, served.stderr)
            expected = alone[args, kind]
            assert (served.returncode, served.stdout, served.stderr) == (
                expected.returncode, expected.stdout, expected.stderr), (args, kind)
    # What the cases cover really happened: output, stderr lines, a usage error.
    assert alone[CALLS[0]].stdout and alone[CALLS[7]].returncode == 2
    assert b"no result scored" in alone[CALLS[5]].stderr
    assert b"additionalContext" in alone[CALLS[17]].stdout
    assert b"hippo hook:" in alone[CALLS[20]].stderr
    assert alone[CALLS[21]].stdout == alone[CALLS[0]].stdout  # nothing replaced yet
    assert alone[CALLS[22]].returncode == 2 and b"--as-of" in alone[CALLS[22]].stderr
    assert b"deploy" in alone[CALLS[23]].stdout and not alone[CALLS[23]].stdout.startswith(b"{")
    assert b"Usage" in alone[CALLS[8]].stdout


def test_writes_and_other_commands_are_never_sent(store: Path | str) -> None:
    with serving(store):
        before = calls(store)
        for args in (("add", "a new fact about caching", "--type", "fact"), ("list",),
                     ("stats",), ("echo", "--forget-session", "nope"),
                     ("hook", "claude-code", "session-end")):
            hippo(store, "--embedder", "hash", *args, input=b"{}")
        assert calls(store) == before
