"""Generic chat logs: JSON lines or a JSON array of `{role, content, timestamp?}`, and plain text.

JSON: `content` may be a string or a list of `{type: "text", text}` parts (`text` is accepted
for `content`, and `{message: {role, content}}` is unwrapped). Roles are normalised (human ->
user, ai/bot/model -> assistant, developer -> system, tool/function -> tool as a shortened
tool_result); OpenAI-style `tool_calls` become tool_call messages. A `.json` file, or one that
starts with `[`, is a whole document (an array, or an object with a `messages` array) whose
positions are message indexes, as for Gemini; anything else is read line by line.

Plain text: one message per paragraph (lines up to a blank line). A paragraph that starts with
`User:`, `Human:`, `Assistant:`, `AI:`, `System:` ... (optionally in `**bold**`) takes that role,
prefix removed; other paragraphs keep the previous speaker's role, "user" at first. A paragraph
is consumed only when all its lines are complete.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hippo.ingest.model import Message, ReadResult, SessionInfo, Skip
from hippo.ingest.readers import _whole
from hippo.ingest.readers._base import Reader
from hippo.ingest.readers._common import (
    Gathered,
    clean,
    content_text,
    iso_utc,
    str_or_none,
    tool_call_text,
)
from hippo.ingest.readers._lines import JsonlScan, decode, iter_lines

ROLE_ALIASES = {
    "user": "user",
    "human": "user",
    "you": "user",
    "customer": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "gpt": "assistant",
    "claude": "assistant",
    "gemini": "assistant",
    "codex": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "tool_result": "tool",
    "observation": "tool",
}
_ROLE_KEY = re.compile(rb'"(?:role|speaker|author)"\s*:')
_TEXT_SPEAKERS = (
    "user",
    "human",
    "you",
    "assistant",
    "ai",
    "bot",
    "claude",
    "codex",
    "gemini",
    "system",
)
_SPEAKER = re.compile(
    r"^\s*(?:\*\*)?(" + "|".join(_TEXT_SPEAKERS) + r")(?:\*\*)?\s*:(?:\*\*)?\s*", re.IGNORECASE
)


class GenericJsonReader(Reader):
    """Reads `{role, content}` records from JSON lines, a JSON array or `{messages: [...]}`."""

    name = "generic-jsonl"

    def sniff(self, path: Path, head: bytes) -> bool:
        return path.suffix in (".jsonl", ".json", ".ndjson") and bool(_ROLE_KEY.search(head))

    def read_from(self, path: Path, start_offset: int, start_line: int,
                  max_line_bytes: int) -> ReadResult:
        if _is_document(path):
            return self._read_document(path, start_offset, start_line)
        out = _Out()
        scan = JsonlScan(path, start_offset, start_line, max_line_bytes).feed(out.record)
        if start_offset > 0:  # a resumed read cannot know when the session started
            out.started_at = None
        return scan.result(out.session(self.name), out.messages, 0, out.redactions)

    def _read_document(self, path: Path, start_offset: int, start_line: int) -> ReadResult:
        doc, error, size = _whole.load(path)
        if error:
            return _whole.nothing_consumed(
                SessionInfo(None, self.name), start_offset, start_line, error
            )
        out = _Out()
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            out.note(doc)
            doc = doc["messages"]
        if not isinstance(doc, list):
            return _whole.nothing_consumed(
                SessionInfo(None, self.name), start_offset, start_line, "unknown record"
            )
        skipped: list[Skip] = []
        for index in range(start_line, len(doc)):
            record = doc[index]
            if not isinstance(record, dict) or not out.record(index + 1, record):
                skipped.append(Skip(index + 1, "unknown record"))
        end_line = max(len(doc), start_line)
        return ReadResult(
            out.session(self.name), out.messages, skipped, size, end_line, 0, out.redactions
        )


def _is_document(path: Path) -> bool:
    """A `.json` file or one whose first non-blank byte is `[` is one JSON document."""
    if path.suffix == ".json":
        return True
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b"[")


class _Out(Gathered):
    """Messages and session fields gathered from generic records."""

    def __init__(self) -> None:
        super().__init__()
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.started_at: str | None = None

    def session(self, fmt: str) -> SessionInfo:
        return SessionInfo(self.session_id, fmt, self.cwd, None, None, self.started_at)

    def note(self, record: dict[str, Any]) -> None:
        for key in ("session_id", "sessionId", "conversation_id"):
            self.session_id = self.session_id or str_or_none(record.get(key))
        self.cwd = self.cwd or str_or_none(record.get("cwd"))

    def record(self, line: int, record: dict[str, Any]) -> bool:
        """Turn one record into messages; False when it is not a chat message at all."""
        inner = record.get("message")
        body = inner if isinstance(inner, dict) and "role" in inner else record
        role = ROLE_ALIASES.get(str(body.get("role") or body.get("speaker") or "").lower())
        content = body.get("content", body.get("text"))
        calls = body.get("tool_calls")
        if role is None or (content is None and not calls):
            return False
        self.note(record)
        ts = iso_utc(_first(record, "timestamp", "created_at", "time", "ts", "date"))
        self.started_at = self.started_at or ts
        mid = str_or_none(record.get("id")) or str_or_none(body.get("id"))
        if role == "tool":
            text = self.shortened(content_text(content))
            self._add(role, text, "tool_result", ts, line, mid)
        else:
            self._add(role, clean(content_text(content)), "message", ts, line, mid)
        for call in calls if isinstance(calls, list) else []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                name = str_or_none(fn.get("name")) or "tool"
                text = self.masked(tool_call_text(name, fn.get("arguments")))
                self._add(role, text, "tool_call", ts, line, str_or_none(call.get("id")))
        return True

    def _add(
        self, role: str, text: str, kind: str, ts: str | None, line: int, mid: str | None
    ) -> None:
        self.keep(Message(role, text, kind, ts, line, line, mid, self.session_id, self.cwd),
                  cleaned=True)


def _first(record: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if record.get(key) is not None:
            return record[key]
    return None


class TextReader(Reader):
    """Reads plain text as one message per paragraph; the fallback for anything unrecognised."""

    name = "text"

    def sniff(self, path: Path, head: bytes) -> bool:
        return True

    def read_from(self, path: Path, start_offset: int, start_line: int,
                  max_line_bytes: int) -> ReadResult:
        messages: list[Message] = []
        skipped: list[Skip] = []
        role = "user"
        para: list[str] = []
        first = last = 0
        end_offset, end_line = start_offset, start_line  # consumed: up to the last closed paragraph

        def close() -> None:
            nonlocal role, para
            text = "\n".join(para).strip()
            para = []
            speaker = _SPEAKER.match(text)
            if speaker:
                role = ROLE_ALIASES[speaker.group(1).lower()]
                text = text[speaker.end() :]
            text = clean(text)
            if text:
                messages.append(Message(role, text, "message", None, first, last))

        torn, seen = False, (start_offset, start_line)
        for line in iter_lines(path, start_offset, start_line, max_line_bytes):
            if not line.complete:
                torn = True  # its paragraph is read again next run
                break
            seen = (line.end, line.number)
            text = None if line.data is None else decode(line.data, line.number)
            if text is None:
                skipped.append(
                    Skip(line.number, "line too long" if line.data is None else "invalid utf-8")
                )
            elif text.strip():
                if not para:
                    first = line.number
                para.append(text.rstrip())
                last = line.number
            elif para:
                close()
            if not para:
                end_offset, end_line = seen
        if para and not torn:
            close()
            end_offset, end_line = seen
        return ReadResult(SessionInfo(None, self.name), messages, skipped, end_offset, end_line)


GENERIC = GenericJsonReader()
TEXT = TextReader()
