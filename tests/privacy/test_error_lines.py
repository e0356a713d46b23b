"""Error lines that echo user input mask secrets: the environment's credentials and every
shape the redactor knows (issue 17, item 13)."""

from __future__ import annotations

import json

import pytest

ENV_SECRET = "zq8Xw2LmP0vR7tKwQ9"  # no known shape: only the environment says it is secret
SHAPED = "ghp_" + "a1B2c3D4e5" * 4


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_SECRET)
    return {"MY_SERVICE_TOKEN": ENV_SECRET}


def test_add_stdin_line_errors_mask_secrets(cli, env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    lines = [{"text": "fine"}, {"text": "a", "type": ENV_SECRET},
             {"text": "b", "importance": SHAPED}]
    r = cli("add", "-", input="".join(json.dumps(x) + "\n" for x in lines), env=env)
    assert r.exit_code == 3 and len(r.records) == 1
    assert ENV_SECRET not in r.stderr and SHAPED[:12] not in r.stderr
    assert "line 2: unknown type '[redacted]'" in r.stderr
    assert "line 3: importance must be a number between 0 and 1, got " \
           "'[REDACTED:github_token]'" in r.stderr


def test_add_atomic_and_import_errors_mask_secrets(cli, env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    bad = json.dumps({"text": "a", "type": ENV_SECRET}) + "\n"
    r = cli("add", "-", "--atomic", input=bad, env=env)
    assert r.exit_code == 1 and ENV_SECRET not in r.stderr and "nothing stored" in r.stderr
    r = cli("import", "-", input=json.dumps({"id": 5, "text": "a", "author": SHAPED}) + "\n"
            + json.dumps({"id": 6, "text": "kept"}) + "\n", env=env)
    assert r.exit_code == 3 and SHAPED[:12] not in r.stderr and "[REDACTED:" in r.stderr


def test_the_hook_error_line_masks_secrets(cli, env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    assert cli("add", "The deploy runs from a clean tree.").exit_code == 0
    for event in (ENV_SECRET, SHAPED):
        r = cli("hook", "claude-code", input=json.dumps(
            {"hook_event_name": event, "prompt": "how do we deploy?"}), env=env)
        assert r.exit_code == 0 and r.stdout == ""
        assert r.stderr.startswith("hippo hook: unknown hook event '[")
        assert ENV_SECRET not in r.stderr and SHAPED[:12] not in r.stderr


def test_usage_errors_that_quote_an_argument_mask_it(cli, env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    r = cli("add", "a note", "--importance", SHAPED, env=env)
    assert r.exit_code == 2 and SHAPED[:12] not in r.stderr
    assert "Invalid value for '--importance': '[REDACTED:github_token]'" in r.stderr
    r = cli("search", "--limit", ENV_SECRET, "deploy", env=env)  # the fast path hands it on
    assert r.exit_code == 2 and ENV_SECRET not in r.stderr and "'[redacted]'" in r.stderr
    r = cli("project", "rename", "a", "b", SHAPED, env=env)  # a subcommand's usage error
    assert r.exit_code == 2 and SHAPED[:12] not in r.stderr
    assert "unexpected extra argument(s) ([REDACTED:github_token])" in r.stderr
