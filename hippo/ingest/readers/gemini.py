"""Gemini CLI chat files (`~/.gemini/tmp/<projectHash>/chats/session-*.json`).

The file is one JSON document rewritten on every turn, so positions are message indexes:
message i (0-based) has line_start = line_end = i + 1, `end_line` is the message count and a
resumed read with start_line = N returns messages N+1... only. `end_offset` is the file size.
Thoughts are dropped; each tool call becomes a tool_call plus a tool_result message. The file
records no working directory (only a hash of it), so cwd stays None.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hippo.ingest.model import Message, ReadResult, SessionInfo
from hippo.ingest.readers import _whole
from hippo.ingest.readers._base import Reader
from hippo.ingest.readers._common import (
    Gathered,
    content_text,
    exited,
    iso_utc,
    str_or_none,
    tool_call_text,
)

_HEAD = re.compile(rb'"(?:sessionId|projectHash)"\s*:')
_ROLES = {"user": "user", "gemini": "assistant", "model": "assistant", "assistant": "assistant"}


class GeminiReader(Reader):
    """Reads Gemini CLI chat JSON."""

    name = "gemini-cli"

    def sniff(self, path: Path, head: bytes) -> bool:
        if path.suffix != ".json":
            return False
        if ".gemini" in path.parts and path.name.startswith("session-"):
            return True
        return b'"messages"' in head and bool(_HEAD.search(head))

    def read_from(self, path: Path, start_offset: int, start_line: int,
                  max_line_bytes: int) -> ReadResult:
        doc, error, size = _whole.load(path)
        empty = SessionInfo(None, self.name)
        if error:
            return _whole.nothing_consumed(empty, start_offset, start_line, error)
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            return _whole.nothing_consumed(empty, start_offset, start_line, "unknown record")
        session_id = str_or_none(doc.get("sessionId"))
        session = SessionInfo(
            session_id, self.name, None, None, "gemini-cli", iso_utc(doc.get("startTime"))
        )
        out = _Out(session_id)
        records: list[Any] = doc["messages"]
        for index in range(start_line, len(records)):
            record = records[index]
            if isinstance(record, dict):
                out.record(index + 1, record)
            else:
                out.ignored += 1
        return ReadResult(
            session,
            out.messages,
            [],
            size,
            max(len(records), start_line),
            out.ignored,
            out.redactions,
        )


class _Out(Gathered):
    """Collects the messages of one read."""

    def __init__(self, session_id: str | None):
        super().__init__()
        self.session_id = session_id

    def record(self, line: int, record: dict[str, Any]) -> None:
        role = _ROLES.get(str(record.get("type")))
        if role is None:  # info / error / warning notices of the CLI itself
            self.ignored += 1
            return
        ts = iso_utc(record.get("timestamp"))
        mid = str_or_none(record.get("id"))
        self.add(role, content_text(record.get("content")), "message", ts, line, mid)
        calls = record.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                self.tool_call(line, ts, call)

    def tool_call(self, line: int, ts: str | None, call: dict[str, Any]) -> None:
        ts = iso_utc(call.get("timestamp")) or ts
        cid = str_or_none(call.get("id"))
        name = str_or_none(call.get("name")) or "tool"
        text = self.masked(tool_call_text(name, call.get("args")))
        self.add("assistant", text, "tool_call", ts, line, cid, cleaned=True)
        result = _result_text(call.get("result")) or content_text(call.get("resultDisplay"))
        if call.get("status") in ("error", "cancelled"):
            result = f"[{call['status']}] {result}"
        elif result.startswith("Command: "):
            result = _shell_output(result)
        text = self.shortened(result)
        self.add(
            "tool", text, "tool_result", ts, line, f"{cid}:result" if cid else None, cleaned=True
        )

    def add(
        self,
        role: str,
        text: str,
        kind: str,
        ts: str | None,
        line: int,
        mid: str | None,
        *,
        cleaned: bool = False,
    ) -> None:
        self.keep(Message(role, text, kind, ts, line, line, mid, self.session_id), cleaned=cleaned)


# run_shell_command's answer: labelled fields, one a line ("Command: …", "Directory: …",
# "Output: …" or "Stdout: …" / "Stderr: …" with the output's own lines after it, "Error: …",
# "Exit Code: …", "Signal: …", "Background PIDs: …", "Process Group PGID: …").
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_ECHOED = re.compile(r"^(?:Command|Directory|Process Group PGID|Exit Code): ")
_NOTHING = re.compile(r"^(?:Output|Stdout|Stderr|Error|Signal|Background PIDs): "
                      r"\((?:none|empty)\)\s*$")
_OUTPUT = re.compile(r"^(?:Output|Stdout|Stderr): ")


def _shell_output(text: str) -> str:
    """A shell command's answer as the other CLIs record one: what it printed (and its
    error, when it names one); the fields that repeat the call or say nothing dropped, and a
    non-zero exit (Gemini CLI calls the tool call itself a success) as the first line,
    `[error] Exit code N`, as the other readers mark a failed call."""
    kept = [_OUTPUT.sub("", ln) for ln in text.split("\n")
            if not _ECHOED.match(ln) and not _NOTHING.match(ln)]
    out = "\n".join(kept).strip("\n")
    code = _EXIT_CODE.search(text)
    return exited(code.group(1), out) if code is not None and code.group(1) != "0" else out


def _result_text(result: Any) -> str:
    """Text of `[{functionResponse: {response: {output | error}}}]`, the shape Gemini records."""
    if not isinstance(result, list):
        return content_text(result)
    parts: list[str] = []
    for item in result:
        wrapper = item.get("functionResponse") if isinstance(item, dict) else None
        response = wrapper.get("response") if isinstance(wrapper, dict) else None
        if isinstance(response, dict):
            value = response.get("output", response.get("error", ""))
            parts.append(value if isinstance(value, str) else content_text(value))
        else:
            parts.append(content_text(item))
    return "\n".join(p for p in parts if p)


READER = GeminiReader()
