"""A session's chunks back into messages, and messages into the prose lines worth reading.

Echo stores each chunk as `role: text` blocks separated by blank lines; a message too long
for one chunk was split into consecutive single-block chunks with the same role, lines and
message ids, which are joined again here (so a code fence opened in one piece closes in
the next). Tool calls are rendered by the readers as `Name: argument` (`Bash: make test`,
`exec_command: ...`) and tool results carry the `tool` role: both are marked so no
extractor mistakes a tool's words for a person's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from hippo.extract.base import EchoChunk

ROLES = ("user", "assistant", "tool", "system", "summary")
_BLOCK_SPLIT = re.compile(r"\n\n(?=(?:user|assistant|tool|system|summary): )")
_BLOCK_HEAD = re.compile(r"^(user|assistant|tool|system|summary): ", re.DOTALL)

# Tool names the readers render as `Name: argument` (Claude Code, Codex, Gemini CLI, ...).
KNOWN_TOOLS = frozenset({
    "Agent", "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep", "KillShell", "LS",
    "MultiEdit", "NotebookEdit", "NotebookRead", "Read", "Skill", "SlashCommand", "Task",
    "TodoRead", "TodoWrite", "WebFetch", "WebSearch", "Write", "AskUserQuestion",
    "shell", "exec_command", "apply_patch", "update_plan", "write_stdin", "view_image",
    "web_search", "local_shell", "container.exec", "read_file", "write_file", "replace",
    "run_shell_command", "list_directory", "glob", "search_file_content", "google_web_search",
    "web_fetch", "read_many_files", "save_memory", "write_todos", "delegate_to_agent",
    "activate_skill", "tool",
})
_CALL_HEAD = re.compile(r"^([A-Za-z_][\w.\-]*)(?::\s|$)")
_CAMEL = re.compile(r"^[A-Z][a-z]+[A-Z]")

# Text a tool or harness put into the user's turn; never a person's statement.
_INJECTED = re.compile(
    r"^\s*(?:<(?:system-reminder|environment_context|user_instructions|INSTRUCTIONS|"
    r"command-name|command-message|command-args|local-command-[a-z]+|bash-[a-z]+|"
    r"user-prompt-submit-hook|permissions instructions|collaboration_mode|"
    r"skills_instructions|turn_aborted|subagent_notification|task-notification)\b"
    r"|# AGENTS\.md instructions|Caveat: The messages below|\[Request interrupted"
    r"|This session is being continued from a previous conversation"
    r"|Find the \"AI\" comments below)",
    re.IGNORECASE,
)
_INLINE_TAGS = re.compile(
    r"<(system-reminder|environment_context|user_instructions)>.*?(?:</\1>|\Z)", re.DOTALL)
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
SKIP_LINE = re.compile(r"^\s*(?:>|[│█⋮|]|<{7}|={7}|>{7}|\+{3}|-{3} |@@)")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_SENTENCE_END = re.compile(
    r"(?<![.\s][a-z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<!\bcf\.)"
    r"(?<=[.!?])\s+(?=[\"'`(\[A-Z0-9])"
)


@dataclass(slots=True)
class Message:
    """One message of the session: its role, text and the chunks it came from."""

    role: str
    text: str
    chunk_ids: list[int] = field(default_factory=list)
    tool_call: bool = False
    injected: bool = False

    @property
    def is_prose(self) -> bool:
        """Something a person or the assistant said (not a tool's I/O, not injected text)."""
        return self.role in ("user", "assistant") and not self.tool_call and not self.injected


def split_blocks(text: str) -> list[tuple[str, str]]:
    """`role: text` blocks of one chunk as (role, text); text without a role is `assistant`."""
    out = []
    for block in _BLOCK_SPLIT.split(text):
        m = _BLOCK_HEAD.match(block)
        if m:
            out.append((m.group(1), block[m.end():]))
        elif block.strip():
            out.append(("assistant", block))
    return out


def is_tool_call(role: str, text: str) -> bool:
    """A reader-rendered tool call (`Bash: make test`, `exec_command: {...}`, `mcp__x__y: ..`)."""
    if role not in ("user", "assistant"):
        return False
    m = _CALL_HEAD.match(text)
    if not m:
        return False
    name = m.group(1)
    return (name in KNOWN_TOOLS or name.startswith("mcp__") or "_" in name
            or bool(_CAMEL.match(name)))


def is_injected(text: str) -> bool:
    return bool(_INJECTED.match(text))


def _continues(prev: EchoChunk, cur: EchoChunk) -> bool:
    """`cur` is the next piece of a message split over several chunks."""
    return (len(prev.roles) == 1 and prev.roles == cur.roles
            and prev.line_start == cur.line_start and prev.line_end == cur.line_end
            and prev.message_ids == cur.message_ids
            and len(split_blocks(prev.text)) == 1 and len(split_blocks(cur.text)) == 1)


def messages(chunks: Sequence[EchoChunk]) -> list[Message]:
    """The session's messages in order, split pieces joined, each marked prose or not."""
    out: list[Message] = []
    prev: EchoChunk | None = None
    for chunk in chunks:
        blocks = split_blocks(chunk.text)
        if prev is not None and out and _continues(prev, chunk):
            out[-1].text += "\n\n" + blocks[0][1]
            out[-1].chunk_ids.append(chunk.id)
        else:
            for role, text in blocks:
                out.append(Message(role, text, [chunk.id]))
        prev = chunk
    for msg in out:
        msg.tool_call = is_tool_call(msg.role, msg.text)
        msg.injected = is_injected(msg.text)
    return out


def prose_lines(text: str) -> Iterator[str]:
    """Lines of prose: code fences, quotes, diffs, tables and code-ish indents left out."""
    text = _INLINE_TAGS.sub("", text)
    fence: str | None = None
    for raw in text.splitlines():
        m = FENCE.match(raw)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
            elif mark.startswith(fence):
                fence = None
            continue
        if fence is not None or not raw.strip() or SKIP_LINE.match(raw):
            continue
        if raw.startswith(("    ", "\t")) and not _BULLET.match(raw):
            continue
        line = _HEADING.sub("", _BULLET.sub("", raw, count=1), count=1)
        line = EMPHASIS.sub(r"\2", line).strip()
        if line:
            yield line


_CODE_SPAN = re.compile(r"`[^`\n]+`")


def sentences(line: str) -> list[str]:
    """Split one prose line into sentences (abbreviations, `a.b` names and code spans kept
    whole: "(e.g., `1.  ` with two spaces)" ends no sentence)."""
    spans = [m.span() for m in _CODE_SPAN.finditer(line)]
    out, start = [], 0
    for m in _SENTENCE_END.finditer(line):
        if not any(a < m.start() < b for a, b in spans):
            out.append(line[start:m.start()])
            start = m.end()
    out.append(line[start:])
    return [s.strip() for s in out if s.strip()]
