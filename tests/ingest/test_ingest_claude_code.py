"""Claude Code reader on real session files (counts verified by reading them) and fixtures."""

from __future__ import annotations

from pathlib import Path

from ingest_support import FIXTURES, counts, read, real

from hippo.ingest.readers import detect, read_head
from hippo.ingest.readers.claude_code import READER, compact_summary

CC = "claude-code/"


def user_texts(path: Path) -> list[str]:
    return [m.text for m in read(path).messages if m.kind == "message" and m.role == "user"]


def test_spotter_short_counts_and_session() -> None:
    path = real(CC + "spotter__short.jsonl")
    result = read(path)
    assert detect(path, read_head(path)).name == "claude-code"
    assert counts(result) == {"user": 1, "assistant": 1, "tool_call": 2, "tool_result": 2}
    assert result.session.session_id == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert result.session.cwd == "/home/marco/projects/spotter"
    assert result.session.agent == "claude-code 2.1.38"
    assert result.skipped == []
    assert (result.end_offset, result.end_line) == (path.stat().st_size, 15)
    calls = [m.text for m in result.messages if m.kind == "tool_call"]
    assert calls == ["Bash: mix phx.server 2>&1 | head -80", "Glob: mix.exs"]
    # Both calls were rejected by the user; the reason is kept, marked as an error.
    assert all(m.text.startswith("[error] ") for m in result.messages if m.kind == "tool_result")
    assert all(m.session_id == result.session.session_id for m in result.messages)
    assert all(m.cwd == "/home/marco/projects/spotter" for m in result.messages)


def test_spotter_tool_heavy_drops_meta_commands_and_interruptions() -> None:
    path = real(CC + "spotter__tool_heavy.jsonl")
    result = read(path)
    assert counts(result) == {"user": 2, "assistant": 1, "tool_call": 6, "tool_result": 6}
    prompts = user_texts(path)
    assert prompts[0] == "start phoenix in background"
    assert prompts[1].startswith("scrolling back in xterm.js still does not work")
    everything = "\n".join(m.text for m in result.messages)
    assert "local-command-caveat" not in everything and "Caveat:" not in everything
    assert "/mcp" not in everything and "Request interrupted" not in everything
    assert result.ignored > 0  # progress, snapshots, queue operations: dropped, not skipped
    assert result.skipped == []


def test_viewer_inline_sidechains_and_slash_command_prompt() -> None:
    path = real(CC + "claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    result = read(path)
    main = [m for m in result.messages if not m.is_sidechain]
    side = [m for m in result.messages if m.is_sidechain]
    assert counts(result) == {"user": 1, "assistant": 7, "tool_call": 23, "tool_result": 21}
    assert len(main) == 1 + 3 + 13 + 13 and len(side) == 4 + 10 + 8
    # A sidechain's prompt is the agent's Task input: a call of the agent's, not the
    # person's words (the main chain's Task call holds only its title).
    prompts = [m for m in side if m.kind == "tool_call" and m.text.startswith("Task: ")]
    assert [(m.role, m.kind) for m in prompts] == [("assistant", "tool_call")] * 2
    assert prompts[0].text.startswith("Task: Examine the package.json file(s)")
    assert not any(m.role == "user" for m in side)
    assert result.session.agent == "claude-code 1.0.108"
    # The slash command's arguments are the user's prompt; the isMeta skill body is not.
    first = result.messages[0]
    assert (first.role, first.text) == (
        "user",
        "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください",
    )
    assert not any("Split complex tasks" in m.text for m in result.messages if m.role == "user")
    assert {m.session_id for m in result.messages} == {"5c0375b4-57a5-4f26-b12d-d022ee4e51b7"}


def test_codemie_main_session_counts() -> None:
    path = real(CC + "codemie-code__-tmp-private__4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl")
    result = read(path)
    # 6 tool results in the file, one of them (`rm hello.js`) has empty output and is dropped.
    assert counts(result) == {"user": 3, "assistant": 4, "tool_call": 6, "tool_result": 5}
    assert user_texts(path) == [
        "create hello.py, md and js",
        "update py with one liner comment",
        "delete js",
    ]
    # The Read result carried an appended <system-reminder>; it is stripped.
    assert not any("system-reminder" in m.text for m in result.messages)


def test_codemie_subagent_file_links_to_parent_and_drops_warmup() -> None:
    path = real(CC + "codemie-code__-tmp-private__agent-36541525.jsonl")
    result = read(path)
    parent = "4c2ddfdc-b619-4525-8d03-1950fb1b0257"
    assert result.session.parent_session_id == parent
    assert result.session.session_id == f"{parent}/agent-36541525"
    assert result.session.agent == "claude-code 2.0.64"
    # A "Warmup" subagent: the prompt and its hallucinated reply are noise, not conversation.
    assert result.messages == []
    assert result.ignored == 2 and result.end_line == 2


def test_incremental_turn1_prefix_resume_yields_only_new_messages() -> None:
    turn1 = real(CC + "codemie-code__incremental-simple__turn-1.jsonl")
    turn2 = real(CC + "codemie-code__incremental-simple__turn-2.jsonl")
    assert turn2.read_bytes().startswith(turn1.read_bytes())
    first = read(turn1)
    assert counts(first) == {"user": 1, "assistant": 1}
    assert first.end_offset == turn1.stat().st_size and first.end_line == 20
    full = read(turn2)
    assert counts(full) == {"user": 4, "assistant": 6, "tool_call": 2, "tool_result": 2}
    rest = READER.read(turn2, first.end_offset, first.end_line)
    assert first.messages + rest.messages == full.messages
    assert [m.text for m in rest.messages if m.role == "user"] == [
        "hi",
        "expore current repo and provide highlevel information",
        "tell me more about agent module",
    ]
    assert rest.messages[0].line_start == 22  # line numbers continue from the first read
    assert rest.session.session_id == first.session.session_id
    assert rest.session.started_at is None  # unknown to a read that starts mid-file
    assert (rest.end_offset, rest.end_line) == (turn2.stat().st_size, 45)


def test_summaries_of_other_sessions_are_dropped() -> None:
    path = real(CC + "codemie-code__incremental-simple__turn-1.jsonl")
    result = read(path)
    # 15 `summary` lines, none of whose leafUuid is in this file.
    assert not any(m.kind == "summary" for m in result.messages)
    assert result.ignored >= 15


def test_features_fixture() -> None:
    result = read(FIXTURES / "claude_features.jsonl")
    by_kind = [(m.kind, m.role, m.text[:40]) for m in result.messages]
    assert by_kind == [
        ("summary", "system", "Fix the flaky login test"),  # its leafUuid is in the file
        ("message", "user", "Why does test_login fail on CI?"),  # reminder stripped
        ("message", "assistant", "The test depends on wall-clock time.\n\nI "),
        ("tool_call", "assistant", "Bash: pytest tests/test_login.py -x -k l"),
        ("tool_result", "tool", "[error] FAILED tests/test_login.py::test"),
        ("tool_call", "user", "Bash: git status"),  # shell mode (`!git status`)
        ("tool_result", "tool", "On branch main\nnothing to commit"),
        ("summary", "system", "Summary: the login test was fixed."),  # compaction, unwrapped
        ("message", "user", "/fix the flaky clock test"),
    ]
    merged = result.messages[2]
    assert (
        merged.text
        == "The test depends on wall-clock time.\n\nI will freeze the clock with a fixture."
    )
    assert (merged.line_start, merged.line_end, merged.message_id) == (7, 9, "msg_A")
    call, output = result.messages[3], result.messages[4]
    assert call.text.endswith("…[truncated 275 chars]") and len(call.text) < 330
    assert "…[truncated " in output.text and len(output.text) < 530
    assert output.message_id == "toolu_1:result"
    assert result.redactions == 1  # the key sat in the cut-off part: masked before the cut
    assert result.messages[1].timestamp == "2026-03-01T10:00:01.000Z"


def test_subagent_in_subagents_dir() -> None:
    parent = "11111111-2222-4333-8444-555555555555"
    path = FIXTURES / "claude_project" / parent / "subagents" / "agent-a1b2c3d.jsonl"
    assert detect(path, read_head(path)).name == "claude-code"
    result = read(path)
    assert result.session.parent_session_id == parent
    assert result.session.session_id == f"{parent}/agent-a1b2c3d"
    assert [(m.role, m.is_sidechain) for m in result.messages] == [
        ("user", True),
        ("assistant", True),
    ]
    assert {m.session_id for m in result.messages} == {f"{parent}/agent-a1b2c3d"}


def test_compaction_agent_run_is_not_a_source(tmp_path: Path) -> None:
    """The compaction agent's prompt is harness text and its answer is the summary the parent
    session holds already: nothing of the file is emitted, all of it is counted as ignored."""
    source = FIXTURES / "claude_project" / "11111111-2222-4333-8444-555555555555" / "subagents"
    path = tmp_path / "agent-acompact-5f3a.jsonl"
    path.write_bytes((source / "agent-a1b2c3d.jsonl").read_bytes())
    plain = READER.read(source / "agent-a1b2c3d.jsonl")
    result = READER.read(path)
    assert result.messages == []
    assert result.ignored == plain.ignored + len(plain.messages)


def test_compaction_wrapper_is_dropped() -> None:
    text = ("This session is being continued from a previous conversation that ran out of "
            "context. The summary below covers the earlier portion of the conversation.\n\n"
            "Summary:\n1. Primary Request and Intent:\n   Fix the login test.\n\n"
            "If you need specific details from before compaction (like exact code snippets), "
            "read the full transcript at: /home/u/.claude/projects/p/s.jsonl\n"
            "Please continue the conversation from where we left off without asking the user "
            "any further questions. Continue with the last task that you were asked to work on.")
    assert compact_summary(text) == (
        "Summary:\n1. Primary Request and Intent:\n   Fix the login test.")
