"""Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

`response_item` records are the conversation; the `event_msg` copies of prompts and answers
(user_message / agent_message) are dropped so nothing is stored twice. Developer messages and
user messages that only carry injected context (AGENTS.md, `<environment_context>`, ...) are
not prompts. `compacted` restates earlier turns and comes out as kind "summary". Older
rollouts (bare `{id, timestamp, instructions}` header, unwrapped items, `record_type` markers)
are read too. A resumed read takes the session id and cwd from the file's first line.
Records of an unknown top-level type are reported as Skip "unknown record".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hippo.ingest.model import Message, ReadResult, SessionInfo
from hippo.ingest.readers._base import Reader
from hippo.ingest.readers._common import (
    TOOL_CALL_LIMIT,
    Gathered,
    content_text,
    exited,
    format_tool_call,
    iso_utc,
    loads_or_none,
    patch_call_text,
    shorten,
    str_or_none,
)
from hippo.ingest.readers._lines import JsonlScan

_UUID_IN_NAME = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$"
)
_HEAD = re.compile(rb'"type"\s*:\s*"(?:session_meta|response_item|event_msg|turn_context)"')
_OLD_HEAD = re.compile(rb'^\{"id"\s*:\s*"[^"]*"\s*,\s*"timestamp"[^\n]*"instructions"')
_INJECTED = re.compile(
    r"^\s*(?:# AGENTS\.md instructions|<(environment_context|user_instructions|INSTRUCTIONS"
    r"|permissions instructions|collaboration_mode|skills_instructions|plugins_instructions"
    r"|user_shell_command|turn_aborted|subagent_notification|apps_instructions)>)"
)
_EXEC_HEADER = re.compile(
    r"\A(?:Chunk ID: \S+\n)?Wall time: [^\n]*\n(?:Process [^\n]*\n)?"
    r"(?:Original token count: [^\n]*\n)?Output:\n?"
)
_EXITED = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)
_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
        "web_search_call",
        "local_shell_call",
    }
)
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


class CodexReader(Reader):
    """Reads Codex CLI rollouts, new (`{timestamp, type, payload}`) and old layouts."""

    name = "codex"

    def sniff(self, path: Path, head: bytes) -> bool:
        if path.suffix != ".jsonl":
            return False
        if ".codex" in path.parts or path.name.startswith("rollout-"):
            return True
        first = head.split(b"\n", 1)[0]
        return bool(_HEAD.search(first) or _OLD_HEAD.search(first))

    def read_from(self, path: Path, start_offset: int, start_line: int,
                  max_line_bytes: int) -> ReadResult:
        state = _State(path)
        if start_offset > 0:
            state.header(path, max_line_bytes)
        scan = JsonlScan(path, start_offset, start_line, max_line_bytes).feed(state.feed)
        for m in state.messages:
            m.session_id = state.session_id
        session = SessionInfo(
            state.session_id, "codex", state.first_cwd, None, state.agent, state.started_at
        )
        return scan.result(session, state.messages, state.ignored, state.redactions)


class _State(Gathered):
    """Session metadata and messages gathered while the rollout streams past."""

    def __init__(self, path: Path):
        super().__init__()
        match = _UUID_IN_NAME.search(path.name)
        self.session_id: str | None = match.group(1) if match else None
        self.cwd: str | None = None
        self.first_cwd: str | None = None
        self.agent = "codex"
        self.started_at: str | None = None

    def header(self, path: Path, max_line_bytes: int) -> None:
        """On a resumed read, learn session id and cwd from line 1 without emitting anything."""
        scan = JsonlScan(path, 0, 0, max_line_bytes)
        for _, record in scan:
            self._meta(record)
            break

    def _meta(self, record: dict[str, Any]) -> bool:
        """Take session fields from a session_meta or old-style header; True if it was one."""
        payload = record.get("payload") if record.get("type") == "session_meta" else None
        if payload is None and "instructions" in record and "id" in record:
            payload = record  # pre-2025 rollouts start with a bare header object
        if not isinstance(payload, dict):
            return False
        self.session_id = str_or_none(payload.get("id")) or self.session_id
        self._set_cwd(payload.get("cwd"))
        version = str_or_none(payload.get("cli_version"))
        self.agent = f"codex {version}" if version else self.agent
        self.started_at = iso_utc(payload.get("timestamp")) or iso_utc(record.get("timestamp"))
        return True

    def _set_cwd(self, value: Any) -> None:
        cwd = str_or_none(value)
        if cwd:
            self.cwd = cwd
            self.first_cwd = self.first_cwd or cwd

    def feed(self, line: int, record: dict[str, Any]) -> bool:
        """Take one record; False when it is of no kind this reader knows."""
        kind = str_or_none(record.get("type"))
        if kind == "session_meta" or (kind is None and "instructions" in record):
            if not self._meta(record):
                self.ignored += 1
            return True
        ts = iso_utc(record.get("timestamp"))
        payload = record.get("payload")
        if kind == "turn_context" and isinstance(payload, dict):
            self._set_cwd(payload.get("cwd"))
            self.ignored += 1
        elif kind == "response_item" and isinstance(payload, dict):
            self._item(line, ts, payload)
        elif kind == "compacted" and isinstance(payload, dict):
            self._emit(line, ts, "system", content_text(payload.get("message")), "summary")
        elif kind in _ITEM_TYPES and "payload" not in record:
            self._item(line, ts, record)  # older rollouts write items unwrapped
        elif kind in ("event_msg", "turn_context", "response_item", "compacted"):
            self.ignored += 1  # event_msg copies of the conversation, UI events
        elif "record_type" in record:
            self.ignored += 1  # old `{"record_type": "state"}` markers
        else:
            return False
        return True

    def _item(self, line: int, ts: str | None, item: dict[str, Any]) -> None:
        kind = str_or_none(item.get("type"))
        call_id = str_or_none(item.get("call_id")) or str_or_none(item.get("id"))
        if kind == "message":
            self._message(line, ts, item)
        elif kind in _CALLS:
            text = _call_text(item)
            patch = patch_call_text(text.partition(": ")[0], text.partition(": ")[2])
            short = self.masked(patch or shorten(text, TOOL_CALL_LIMIT))
            self._emit(line, ts, "assistant", short, "tool_call", call_id)
        elif kind in _OUTPUTS:
            text = _output_text(item.get("output"))
            short = self.shortened(text)
            self._emit(
                line, ts, "tool", short, "tool_result", f"{call_id}:result" if call_id else None
            )
        else:
            self.ignored += 1  # reasoning (usually encrypted) and unknown item types

    def _message(self, line: int, ts: str | None, item: dict[str, Any]) -> None:
        role = item.get("role")
        content = item.get("content")
        parts = content if isinstance(content, list) else [content]
        texts = [content_text(p) for p in parts]
        if role == "user":
            texts = [t for t in texts if not _INJECTED.match(t)]
        text = "\n\n".join(t for t in texts if t.strip())
        if role not in ("user", "assistant") or not text.strip():
            self.ignored += 1  # developer/system instructions and pure context injections
            return
        self._emit(line, ts, role, text, "message", str_or_none(item.get("id")))

    def _emit(
        self, line: int, ts: str | None, role: str, text: str, kind: str, mid: str | None = None
    ) -> None:
        self.keep(Message(role, text, kind, ts, line, line, mid, None, self.cwd))


def _call_text(item: dict[str, Any]) -> str:
    """`exec_command: git status`, `apply_patch: *** Begin Patch ...`, `web_search: query`."""
    kind = item.get("type")
    if kind == "web_search_call":
        action = item.get("action")
        query = action.get("query") if isinstance(action, dict) else None
        return f"web_search: {query}" if isinstance(query, str) else "web_search"
    if kind == "local_shell_call":
        action = item.get("action")
        return format_tool_call("shell", action if isinstance(action, dict) else {})
    name = str_or_none(item.get("name")) or "tool"
    args = item.get("arguments") if kind == "function_call" else item.get("input")
    return format_tool_call(name, args)


def _output_text(output: Any) -> str:
    """Tool output without the exec header; `{"output": ...}` JSON strings are unwrapped. A
    command that exited non-zero keeps that as its first line, `[error] Exit code N`, as the
    Claude Code reader marks a failed call (what `hippo.extract` reads failures by)."""
    code: Any = None
    if isinstance(output, str) and output.startswith('{"output"'):
        parsed = loads_or_none(output)
        if isinstance(parsed, dict):
            output = parsed.get("output", output)
            meta = parsed.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
    text = content_text(output)
    header = _EXEC_HEADER.match(text)
    if header is not None:
        status = _EXITED.search(header.group(0))
        code = int(status.group(1)) if status else code
        text = text[header.end():]
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return exited(code, text)
    return text


READER = CodexReader()
