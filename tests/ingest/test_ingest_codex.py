"""Codex rollout reader on the real rollout (counts verified by reading it) and old layouts."""

from __future__ import annotations

import json
from pathlib import Path

from ingest_support import counts, read, real

from hippo.ingest.readers import detect, read_head
from hippo.ingest.readers.codex import READER

ROLLOUT = (
    "codex/codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
SESSION = "019e1625-789d-76c0-80ab-3724b5ddb799"
CWD = "/Users/Sample_User/repos/codemie-ai/codemie-code"


def test_real_rollout_counts_and_session() -> None:
    path = real(ROLLOUT)
    assert detect(path, read_head(path)).name == "codex"
    result = read(path)
    # 2 prompts and 13 answers, each also present as an event_msg copy that is not kept;
    # 99 function calls + 3 apply_patch custom calls + 3 web searches; of 102 outputs,
    # 50 are only the exec header of a still-running command and carry no output (2 more
    # carry none but exited with code 1: they are kept, as failures).
    assert counts(result) == {"user": 2, "assistant": 13, "tool_call": 105, "tool_result": 52}
    assert result.session.session_id == SESSION
    assert result.session.cwd == CWD
    assert result.session.agent == "codex 0.125.0"
    assert result.session.started_at == "2026-05-11T08:26:55.042Z"
    assert result.skipped == []
    assert (result.end_offset, result.end_line) == (path.stat().st_size, 386)
    assert all(m.session_id == SESSION and m.cwd == CWD for m in result.messages)


def test_a_command_that_exited_non_zero_is_marked_failed() -> None:
    results = [m.text for m in read(real(ROLLOUT)).messages if m.kind == "tool_result"]
    failed = [t for t in results if t.startswith("[error] Exit code ")]
    # the rollout's four exec outputs with "Process exited with code 1" (3) or 2 (1)
    assert [t.split("\n", 1)[0] for t in failed] == [
        "[error] Exit code 2", "[error] Exit code 1", "[error] Exit code 1", "[error] Exit code 1"]
    assert failed[0].startswith("[error] Exit code 2\nrg: node_modules/opencode-ai: No such file")


def test_injected_context_is_not_a_prompt() -> None:
    result = read(real(ROLLOUT))
    prompts = [m.text for m in result.messages if m.role == "user"]
    assert prompts == ["show tools", "let's update the defailt context compart to 90 in env var"]
    joined = "\n".join(m.text for m in result.messages if m.kind == "message")
    assert "<environment_context>" not in joined and "AGENTS.md instructions" not in joined
    assert "<permissions instructions>" not in joined


def test_tool_call_text_is_short_and_named() -> None:
    result = read(real(ROLLOUT))
    calls = [m.text for m in result.messages if m.kind == "tool_call"]
    assert calls[0].startswith("exec_command: sed -n '1,180p' ")
    # a patch reads as an edit: its first file, then the lines it changes
    patches = [c for c in calls if c.startswith("apply_patch: ")]
    assert len(patches) == 3 and patches[1].startswith(
        "apply_patch: src/agents/plugins/codemie-code.plugin.ts\n+ compaction: {\n+ auto: true,")
    assert sum(c.startswith("web_search: ") for c in calls) == 3
    assert all(len(m.text) <= (330 if not m.text.startswith("apply_patch") else 330 + 560)
               for m in result.messages if m.kind == "tool_call")
    assert all(len(m.text) <= 530 for m in result.messages if m.kind == "tool_result")
    assert not any(m.text.startswith("Chunk ID:") for m in result.messages)


def test_resume_mid_file_keeps_session_and_cwd(tmp_path: Path) -> None:
    source = real(ROLLOUT)
    lines = source.read_bytes().splitlines(keepends=True)
    path = tmp_path / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    path.write_bytes(b"".join(lines[:100]) + lines[100][:50])  # torn line 101
    first = READER.read(path)
    assert first.end_line == 100 and first.end_offset == sum(len(x) for x in lines[:100])
    path.write_bytes(b"".join(lines))
    rest = READER.read(path, first.end_offset, first.end_line)
    full = READER.read(path)
    assert first.messages + rest.messages == full.messages
    assert rest.session.session_id == SESSION and rest.session.cwd == CWD
    assert rest.session.started_at == "2026-05-11T08:26:55.042Z"  # from session_meta, line 1
    assert rest.messages[0].line_start > 100


def test_old_rollout_layout(tmp_path: Path) -> None:
    records = [
        {"id": "0a1b2c3d-0000-4000-8000-000000000001", "timestamp": "2025-04-01T10:00:00.000Z",
         "instructions": None, "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<user_instructions>be terse</user_instructions>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
        {"type": "function_call", "name": "shell", "call_id": "c1",
         "arguments": json.dumps({"command": ["bash", "-lc", "ls -la"]})},
        {"type": "function_call_output", "call_id": "c1",
         "output": json.dumps({"output": "README.md\nsrc\n", "metadata": {"exit_code": 0}})},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two entries."}]},
    ]  # fmt: skip
    path = tmp_path / "rollout-2025-04-01T10-00-00-0a1b2c3d-0000-4000-8000-000000000001.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert detect(path, read_head(path)).name == "codex"
    result = read(path)
    assert [(m.kind, m.role, m.text) for m in result.messages] == [
        ("message", "user", "list files"),
        ("tool_call", "assistant", "shell: ls -la"),
        ("tool_result", "tool", "README.md\nsrc"),
        ("message", "assistant", "Two entries."),
    ]
    assert result.session.session_id == "0a1b2c3d-0000-4000-8000-000000000001"
    assert result.session.started_at == "2025-04-01T10:00:00.000Z"


def test_compacted_is_a_summary(tmp_path: Path) -> None:
    path = tmp_path / "rollout-x.jsonl"
    record = {"timestamp": "2026-01-01T00:00:00Z", "type": "compacted",
              "payload": {"message": "Earlier: fixed the build.", "replacement_history": []}}  # fmt: skip
    path.write_text(json.dumps(record) + "\n")
    [msg] = READER.read(path).messages
    assert (msg.kind, msg.role, msg.text) == ("summary", "system", "Earlier: fixed the build.")
