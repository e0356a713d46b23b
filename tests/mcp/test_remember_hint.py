"""The MCP `remember` tool says when to remember (`hippo.layers.hint`, the same text as
the session start); what an agent stores stays machine-written, deduplicated, masked and
bounded per session."""

from __future__ import annotations

from pathlib import Path

import anyio

from hippo.layers.hint import REMEMBER_HINT


def _remember_description(server: object) -> str:
    from mcp import Client

    async def run() -> str:
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
        return next(t.description for t in tools if t.name == "remember")

    return anyio.run(run)


def test_the_remember_tool_says_the_same(make_server, isolated_home: Path) -> None:
    server = make_server()
    described = _remember_description(server)
    assert REMEMBER_HINT in described and "a session has a bounded" in described
    assert REMEMBER_HINT in server.instructions  # the server's instructions say it too
    (isolated_home / "config.toml").write_text("[agents]\nremember_hint = false\n")
    server = make_server()
    plain = _remember_description(server)
    assert REMEMBER_HINT not in plain and "One statement per call" in plain
    assert REMEMBER_HINT not in server.instructions and "`remember`" in server.instructions


def test_what_an_agent_remembers_stays_machine_deduplicated_redacted_and_bounded(
        make_server, db_path: Path) -> None:
    from hippo.store import connect
    from tests.mcp.conftest import calls, data

    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    first, again, masked, refused = calls(
        make_server(max_writes=3),
        ("remember", {"text": "The flaky test needs TZ=UTC; fixed by setting it in "
                              "conftest.py", "type": "insight"}),
        ("remember", {"text": "the flaky test needs TZ=UTC; fixed by setting it in "
                              "conftest.py.", "type": "insight"}),
        ("remember", {"text": f"The deploy token is {secret}", "type": "config"}),
        ("remember", {"text": "A fourth write in one session", "type": "fact"}))
    assert data(first)["action"] == "added" and data(again)["action"] == "reinforced"
    assert data(masked)["redacted"] == 1
    assert refused.is_error and "max_writes" in refused.content[0].text
    db = connect(db_path)
    rows = db.rows("SELECT author, text FROM memories ORDER BY id")
    db.close()
    assert [r["author"] for r in rows] == ["machine", "machine"]
    assert secret not in rows[1]["text"]
