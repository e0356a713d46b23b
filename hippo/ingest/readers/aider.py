"""aider chat history markdown (`.aider.chat.history.md`).

`# aider chat started at <time>` opens a session, so one file holds many: each message carries
`aider-<start time>` as its session id (SessionInfo describes the first session in the read).
Consecutive `#### ` lines are one user message; consecutive `> ` lines are one tool_result
(aider's own output, shortened); everything else, blank lines and fenced SEARCH/REPLACE blocks
included, is assistant text up to the next user/tool line (outside a code fence). Answers
to aider's `(Y)es/(N)o` questions are dropped; its unprefixed edit-failure feedback to the
model (`## SearchReplaceNoExactMatch...`) is a tool_result. The history has only session
start times, local and without zone: they are read as UTC and given to every message of the
session. A block is consumed only once all its lines are complete, and a final line without
a newline never is; a resumed read first re-scans the lines before `start_offset` for the
session header, version and working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

from hippo.ingest.model import Message, ReadResult, SessionInfo, Skip
from hippo.ingest.readers._base import Reader
from hippo.ingest.readers._common import Gathered, iso_utc
from hippo.ingest.readers._lines import decode, iter_lines

_MARK = b"# aider chat started at"
_HEADER = re.compile(r"# aider chat started at (.+?)\s*$")
_VERSION = re.compile(r"Aider v(\S+)")
_CWD = re.compile(r"(Cur|Git) working dir: (.+?)\s*$")
_ANSWER = re.compile(r"\(Y\)es/\(N\)o.*\]: ?\S*$", re.DOTALL)
_THINKING = re.compile(r"<thinking-content-\w+>.*?(?:</thinking-content-\w+>|\Z)", re.DOTALL)
_FENCE = re.compile(r"(`{3,}|~{3,})")
_REFLECTIONS = ("## SearchReplaceNoExactMatch", "# 1 SEARCH/REPLACE block failed")


class AiderReader(Reader):
    """Reads aider's markdown chat history, block by block."""

    name = "aider"

    def sniff(self, path: Path, head: bytes) -> bool:
        if path.name.endswith(".aider.chat.history.md"):
            return True
        return head.startswith(_MARK) or b"\n" + _MARK in head

    def read_from(self, path: Path, start_offset: int, start_line: int,
                  max_line_bytes: int) -> ReadResult:
        state = _State(start_offset, start_line)
        if start_offset > 0:
            state.prescan(path, start_offset, max_line_bytes)
        torn = False
        for line in iter_lines(path, start_offset, start_line, max_line_bytes):
            if not line.complete:
                torn = True  # the open block waits for the next run, unconsumed
                break
            text = None if line.data is None else decode(line.data, line.number)
            if text is None:
                reason = "line too long" if line.data is None else "invalid utf-8"
                state.skipped.append(Skip(line.number, reason))
                state.advance(line.end, line.number)
                continue
            state.line(text, line.number, line.end)
        if not torn:
            state.close_block()
        first = state.first_session or (state.session_id, state.started_at)
        session = SessionInfo(first[0], self.name, state.first_cwd, None, state.agent, first[1])
        return ReadResult(
            session,
            state.messages,
            state.skipped,
            state.end_offset,
            state.end_line,
            state.ignored,
            state.redactions,
        )


class _State(Gathered):
    """Current session, the open block and everything emitted so far."""

    def __init__(self, start_offset: int, start_line: int) -> None:
        super().__init__()
        self.session_id: str | None = None
        self.started_at: str | None = None
        self.first_session: tuple[str | None, str | None] | None = None
        self.cwd: str | None = None
        self.first_cwd: str | None = None
        self.agent = "aider"
        self.skipped: list[Skip] = []
        self.block: str | None = None  # "user" | "tool" | "assistant"
        self.lines: list[str] = []
        self.first = self.last = 0
        self.fence: str | None = None
        self.end_offset, self.end_line = start_offset, start_line  # up to the last closed block
        self.pending = (start_offset, start_line)  # last line seen; consumed when its block closes

    def prescan(self, path: Path, stop: int, max_line_bytes: int) -> None:
        """Replay session headers and banners before `stop` so a resumed read knows its session."""
        for line in iter_lines(path, 0, 0, max_line_bytes):
            if line.end > stop:
                break
            text = None if line.data is None else decode(line.data, line.number)
            if text is None:
                continue
            if text.startswith("# aider chat"):
                self._header(text)
            elif text.startswith("> "):
                self._banner(text[2:])
        self.first_session, self.first_cwd = None, self.cwd

    def _header(self, text: str) -> None:
        match = _HEADER.match(text)
        if not match:
            return
        self.started_at = iso_utc(match.group(1))
        self.session_id = f"aider-{self.started_at or match.group(1)}".removesuffix("Z")
        self.cwd = None
        if self.first_session is None:
            self.first_session = (self.session_id, self.started_at)

    def _banner(self, text: str) -> None:
        version = _VERSION.match(text)
        if version:
            self.agent = f"aider {version.group(1)}"
        cwd = _CWD.match(text)
        if cwd and (cwd.group(1) == "Cur" or self.cwd is None):
            self.cwd = cwd.group(2)
            self.first_cwd = self.first_cwd or self.cwd

    def advance(self, end: int, number: int) -> None:
        self.pending = (end, number)
        if self.block is None:
            self.end_offset, self.end_line = end, number

    def line(self, text: str, number: int, end: int) -> None:
        stripped = text.rstrip()
        kind = self._kind(stripped)
        if kind == "header":
            self.close_block()
            self._header(stripped)
        elif kind == "blank":
            if self.block in ("user", "tool"):
                self.close_block()
            elif self.block == "assistant":
                self.lines.append("")
        else:
            if kind != self.block:
                self.close_block()
                self.block, self.first = kind, number
            self.last = number
            if kind == "user":
                self.lines.append(stripped[5:])
            elif kind == "tool":
                body = stripped[2:]
                self._banner(body)
                self.lines.append(body)
            else:
                self._track_fence(stripped)
                self.lines.append(stripped)
        self.advance(end, number)

    def _kind(self, text: str) -> str:
        if text.startswith("# aider chat started at"):
            return "header"
        if self.block == "assistant" and self.fence:
            return "assistant"  # `#### ` or `> ` inside a fenced edit block is file content
        if not text:
            return "blank"
        if text == "####" or text.startswith("#### "):
            return "user"
        if text == ">" or text.startswith("> "):
            return "tool"
        return "assistant"

    def _track_fence(self, text: str) -> None:
        match = _FENCE.match(text)
        if not match:
            return
        if self.fence is None:
            self.fence = match.group(1)
        elif text == self.fence or (text.startswith(self.fence) and not text.strip("`~")):
            self.fence = None

    def close_block(self) -> None:
        block, lines = self.block, self.lines
        self.block, self.lines, self.fence = None, [], None
        self.end_offset, self.end_line = self.pending
        if block is None:
            return
        text = "\n".join(lines).strip()
        if block == "user":
            if _ANSWER.search(text):
                self.ignored += 1
                return
            self._emit("user", text, "message")
        elif block == "tool" or text.startswith(_REFLECTIONS):
            self._emit("tool", self.shortened(text), "tool_result")
        else:
            self._emit("assistant", _THINKING.sub("", text), "message")

    def _emit(self, role: str, text: str, kind: str) -> None:
        self.keep(Message(role, text, kind, self.started_at, self.first, self.last, None,
                          self.session_id, self.cwd))


READER = AiderReader()
