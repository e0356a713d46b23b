"""Gemini CLI reader on the real chat file: counts, message-index resume, unfinished files."""

from __future__ import annotations

import json
from pathlib import Path

from ingest_support import counts, read, real

from hippo.ingest.readers import detect, read_head
from hippo.ingest.readers.gemini import READER

CHAT = "gemini-cli/codemie-code__session-2026-01-16T11-01-file-ops-37b7abef.json"


def test_real_chat_counts() -> None:
    path = real(CHAT)
    assert detect(path, read_head(path)).name == "gemini-cli"
    result = read(path)
    # 14 records: 5 user, 9 gemini (4 of them only tool calls: 9 + 1 + 2 + 2 = 14 calls).
    assert counts(result) == {"user": 5, "assistant": 5, "tool_call": 14, "tool_result": 14}
    assert result.session.session_id == "37b7abef-713d-4522-85f0-8ff15a4e6d17"
    assert result.session.started_at == "2026-01-16T11:01:22.281Z"
    assert result.session.cwd is None  # only a hash of the project path is recorded
    assert (result.end_offset, result.end_line) == (path.stat().st_size, 14)
    prompts = [m.text for m in result.messages if m.role == "user"]
    assert prompts == [
        "show tools",
        "expore repository and figure out issues. focus on adaptability and security",
        "create hello.md file",
        "add 5 lines of random text",
        "remove 2 and 3 line",
    ]
    assert [m.text for m in result.messages if m.kind == "tool_call"][3] == "read_file: SECURITY.md"


def test_resume_by_message_index() -> None:
    path = real(CHAT)
    full = read(path)
    rest = READER.read(path, full.end_offset, 10)
    assert rest.messages == [m for m in full.messages if m.line_start > 10]
    assert [m.text for m in rest.messages if m.role == "user"] == ["remove 2 and 3 line"]
    assert READER.read(path, full.end_offset, full.end_line).messages == []


def test_growing_chat_file_yields_only_new_messages(tmp_path: Path) -> None:
    doc = json.loads(real(CHAT).read_text())
    path = tmp_path / "session-x.json"
    messages = doc["messages"]
    path.write_text(json.dumps({**doc, "messages": messages[:5]}))
    first = READER.read(path)
    path.write_text(json.dumps(doc))
    second = READER.read(path, first.end_offset, first.end_line)
    assert first.messages + second.messages == READER.read(path).messages
    assert second.messages[0].line_start == 6


def test_half_written_file_consumes_nothing(tmp_path: Path) -> None:
    text = real(CHAT).read_text()
    path = tmp_path / "session-x.json"
    path.write_text(text[: len(text) // 2])
    result = READER.read(path, 1234, 7)
    assert result.messages == [] and (result.end_offset, result.end_line) == (1234, 7)
    assert [s.reason for s in result.skipped] == ["malformed json"]


def test_a_shell_command_s_output_and_its_failure(tmp_path: Path) -> None:
    def call(i: int, command: str, output: str, tool: str = "run_shell_command") -> dict:
        return {"id": f"g{i}", "timestamp": f"2026-04-07T10:00:0{i}Z", "type": "gemini",
                "content": "", "toolCalls": [{
                    "id": f"c{i}", "name": tool, "args": {"command": command},
                    "status": "success", "timestamp": f"2026-04-07T10:00:0{i}Z",
                    "result": [{"functionResponse": {"id": f"c{i}", "name": tool,
                                                     "response": {"output": output}}}]}]}

    doc = {"sessionId": "gem-exit", "projectHash": "9" * 64,
           "startTime": "2026-04-07T10:00:00Z", "lastUpdated": "2026-04-07T10:00:09Z",
           "messages": [
               {"id": "g0", "timestamp": "2026-04-07T10:00:00Z", "type": "user",
                "content": "Install the charts package."},
               call(1, "npm install react-charts", "Command: npm install react-charts\n"
                    "Directory: (root)\nOutput: npm error code ERESOLVE\nError: (none)\n"
                    "Exit Code: 1\nSignal: (none)"),
               call(2, "npm install --legacy-peer-deps react-charts",
                    "Command: npm install --legacy-peer-deps react-charts\nDirectory: (root)\n"
                    "Output: added 12 packages in 3s\nError: (none)\nExit Code: 0\n"
                    "Signal: (none)"),
               # a file that happens to hold such a line is no failed command
               call(3, "ci.log", "step 3 done\nExit Code: 1\n", tool="read_file")]}
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    results = [m.text for m in read(path).messages if m.kind == "tool_result"]
    # what the command printed, as the other CLIs record it; the fields that repeat the call
    # or say nothing ("Error: (none)") dropped, a non-zero exit first
    assert results[0] == "[error] Exit code 1\nnpm error code ERESOLVE"
    assert results[1] == "added 12 packages in 3s"
    assert results[2].startswith("step 3 done\nExit Code: 1")  # a file, as it is
