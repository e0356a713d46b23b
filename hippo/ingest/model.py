"""Plain records every transcript reader returns, so the pipeline never sees a file format."""

from __future__ import annotations

from dataclasses import dataclass

ROLES = ("user", "assistant", "tool", "system")
KINDS = ("message", "tool_call", "tool_result", "summary")


@dataclass(slots=True)
class Message:
    """One conversational unit, already cleaned of injected context and shortened if a tool I/O."""

    role: str  # "user" | "assistant" | "tool" | "system"
    text: str
    kind: str = "message"  # "message" | "tool_call" | "tool_result" | "summary"
    timestamp: str | None = None  # ISO-8601 UTC, "YYYY-MM-DDTHH:MM:SS(.fff)Z"
    line_start: int = 0  # 1-based physical lines in the source (message index for whole-file JSON)
    line_end: int = 0
    message_id: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    is_sidechain: bool = False


@dataclass(slots=True)
class Skip:
    """A record the reader could not use; counted, never fatal."""

    line: int | None
    reason: str  # short and stable: "malformed json", "invalid utf-8", "line too long", ...


@dataclass(slots=True)
class SessionInfo:
    """What the file says about the session it records."""

    session_id: str | None
    format: str  # "claude-code" | "codex" | "gemini-cli" | "aider" | "generic-jsonl" | "text"
    cwd: str | None = None
    parent_session_id: str | None = None  # subagent files point at the session that spawned them
    agent: str | None = None  # e.g. "claude-code 2.1.7"
    started_at: str | None = None  # None when this read cannot know it (e.g. a resumed read)


@dataclass(slots=True)
class ReadResult:
    """Messages from one read plus where the next read should resume."""

    session: SessionInfo
    messages: list[Message]
    skipped: list[Skip]
    end_offset: int  # byte offset just past the last complete record consumed
    end_line: int  # physical lines consumed in total (message count for whole-file JSON)
    ignored: int = 0  # known non-conversation records dropped (progress, snapshots, meta, ...)
    redactions: int = 0  # secrets masked by the reader inside text it truncated; add to your count
