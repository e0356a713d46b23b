"""Small helpers every reader shares: text cleanup, shortening tool I/O, timestamps, and
`Gathered`, the state every reader gathers messages into."""

from __future__ import annotations

import difflib
import json
import re
from datetime import UTC, datetime
from typing import Any

from hippo.ingest.model import Message
from hippo.ingest.redact import redact

TOOL_CALL_LIMIT = 300
TOOL_RESULT_LIMIT = 500
#: An edit call keeps the lines it changed, beside its file, up to this many characters
#: (whole lines, each at most `DIFF_LINE_CHARS`): what a fix changed is worth finding.
EDIT_DIFF_CHARS = 400
DIFF_LINE_CHARS = 160

# The argument that says most about a call, in order of preference.
_SALIENT_ARGS = (
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "pattern",
    "query",
    "url",
    "path",
    "description",
    "objective",
    "prompt",
    "skill",
    "chars",
)
_ISO_Z = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z")
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL)


def clean(text: str) -> str:
    """Strip, drop NULs and system-reminder blocks, and make the text encodable as UTF-8."""
    if "<system-reminder>" in text:
        text = _SYSTEM_REMINDER.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from JSON escapes of cut emoji
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.strip()


class Gathered:
    """What a read gathers: its messages, the records it dropped on purpose (`ignored`) and
    the secrets it masked in text it cut (`redactions`): every reader's state is one."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.ignored = 0
        self.redactions = 0

    def masked(self, shortened: tuple[str, int]) -> str:
        """The text of a `(text, secrets masked)` pair (`shorten`, `tool_call_text`), its
        secrets counted."""
        text, found = shortened
        self.redactions += found
        return text

    def shortened(self, text: str, limit: int = TOOL_RESULT_LIMIT) -> str:
        """`text` shortened to `limit` (a tool's output, by default), its secrets counted."""
        return self.masked(shorten(text, limit))

    def keep(self, message: Message, *, cleaned: bool = False) -> Message | None:
        """Keep `message` unless its text, cleaned first (unless `cleaned`), is empty."""
        if not cleaned:
            message.text = clean(message.text)
        if not message.text:
            return None
        self.messages.append(message)
        return message


def shorten(text: str, limit: int) -> tuple[str, int]:
    """Cut text to `limit` chars plus a marker; secrets are masked first so none is cut in half."""
    text = clean(text)
    if len(text) <= limit:
        return text, 0
    text, found = redact(text)
    if len(text) <= limit:
        return text, found
    return f"{text[:limit].rstrip()}…[truncated {len(text) - limit} chars]", found


def format_tool_call(name: str, args: Any) -> str:
    """Render a call as `Name: salient argument` (e.g. `Bash: git status`), else compact JSON."""
    if isinstance(args, str):
        parsed = loads_or_none(args)
        if parsed is None:
            return f"{name}: {args}" if args.strip() else name
        args = parsed
    if isinstance(args, dict):
        for key in _SALIENT_ARGS:
            value = args.get(key)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                value = _command_list(value)
            if isinstance(value, str) and value.strip():
                return f"{name}: {value.strip()}"
    if not args:
        return name
    return f"{name}: {json.dumps(args, ensure_ascii=False, separators=(',', ':'), default=str)}"


def tool_call_text(name: str, args: Any) -> tuple[str, int]:
    """A call as Echo keeps it: `format_tool_call` shortened to `TOOL_CALL_LIMIT`, and for
    an edit (`old_string`/`new_string`, or a list of them under `edits`) the lines it
    changed below, `- old` / `+ new`. Returns the text and how many secrets were masked."""
    return _with_diff(format_tool_call(name, args), edit_diff(args))


def _with_diff(head: str, diff: str) -> tuple[str, int]:
    """`head` shortened to `TOOL_CALL_LIMIT` and, below a one-line head, the changed lines
    (already cut at whole lines; shortened once more only to mask a secret in them)."""
    text, found = shorten(head, TOOL_CALL_LIMIT)
    if diff and "\n" not in text:
        shown, more = shorten(diff, EDIT_DIFF_CHARS + DIFF_LINE_CHARS)
        text, found = f"{text}\n{shown}", found + more
    return text, found


_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (\S.*)$", re.MULTILINE)


def patch_call_text(name: str, patch: str) -> tuple[str, int] | None:
    """A patch call (Codex's `apply_patch`: `*** Begin Patch`, `*** Update File: PATH`,
    `-`/`+` lines) as an edit: `name: PATH` and the lines its first file changes, like
    `tool_call_text` renders an edit; None when `patch` is not one."""
    start = patch.find("*** Begin Patch")
    if not 0 <= start <= 100:  # a patch, or `apply_patch <<'EOF'` run in a shell
        return None
    if start:
        name, patch = "apply_patch", patch[start:]
    files = list(_PATCH_FILE.finditer(patch))
    if not files:
        return None
    end = files[1].start() if len(files) > 1 else len(patch)
    lines = []
    for raw in patch[files[0].end():end].splitlines():
        body = raw[1:].strip()
        if raw[:1] in "-+" and body and not raw.startswith(("***", "---", "+++")):
            lines.append(f"{raw[0]} {_cut(body)}")
    return _with_diff(f"{name}: {files[0].group(1).strip()}", _capped(lines))


def edit_diff(args: Any) -> str:
    """The lines an edit call changes, `- removed` then `+ added` per change (a file written
    whole, `content` beside its path: its lines, all added), blank lines and indentation
    dropped, cut at whole lines after `EDIT_DIFF_CHARS` (`…` marks a cut)."""
    if isinstance(args, str):
        args = loads_or_none(args)
    if not isinstance(args, dict):
        return ""
    pairs = [args, *(e for e in args.get("edits") or [] if isinstance(e, dict))]
    lines: list[str] = []
    for pair in pairs:
        old, new = pair.get("old_string"), pair.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            lines += _changed(old, new)
    content = args.get("content")
    if not lines and isinstance(content, str) and any(
            isinstance(args.get(k), str) for k in ("file_path", "path", "filename")):
        lines = _changed("", content)  # a file written whole: its first lines, all added
    return _capped(lines)


def _capped(lines: list[str]) -> str:
    """Whole lines up to `EDIT_DIFF_CHARS`, then `…`."""
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > EDIT_DIFF_CHARS and out:
            out.append("…")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def _cut(line: str) -> str:
    return line if len(line) <= DIFF_LINE_CHARS else line[:DIFF_LINE_CHARS - 1] + "…"


def _changed(old: str, new: str) -> list[str]:
    a = [ln.strip() for ln in old.splitlines() if ln.strip()]
    b = [ln.strip() for ln in new.splitlines() if ln.strip()]
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out += [f"- {_cut(x)}" for x in a[i1:i2]] + [f"+ {_cut(x)}" for x in b[j1:j2]]
    return out


def _command_list(argv: list[str]) -> str:
    """`["bash", "-lc", "ls -la"]` -> `ls -la`; other argv lists are joined with spaces."""
    if len(argv) == 3 and argv[1] in ("-lc", "-c") and argv[0].endswith("sh"):
        return argv[2]
    return " ".join(argv)


def exited(code: int | str, text: str) -> str:
    """A command's output marked failed, `[error] Exit code N` as its first line: how every
    reader marks a failed call for `hippo.extract` (Claude Code's own results say `Exit
    code N` after the mark)."""
    return f"[error] Exit code {code}\n{text}"


def content_text(content: Any) -> str:
    """Text of a string, a list of text/image blocks, or a nested `content` field."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        if content.get("type") == "image":
            return "[image]"
        return content_text(content.get("content") or content.get("output") or "")
    if isinstance(content, list):
        parts = (content_text(item) for item in content)
        return "\n".join(p for p in parts if p)
    return "" if content is None else str(content)


def iso_utc(value: Any) -> str | None:
    """Normalise an ISO string or epoch seconds/ms to `YYYY-MM-DDTHH:MM:SS(.fff)Z`; naive = UTC."""
    if isinstance(value, str):
        if _ISO_Z.fullmatch(value):
            return value
        try:
            dt = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value
        try:
            dt = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    else:
        return None
    try:
        dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    # f"{year:04d}": strftime's %Y does not pad years below 1000 (text order = time order)
    head = (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
            f"{dt.second:02d}")
    return f"{head}.{dt.microsecond // 1000:03d}Z" if dt.microsecond else f"{head}Z"


def str_or_none(value: Any) -> str | None:
    """The value if it is a non-empty string, else None (file fields are untrusted)."""
    return value if isinstance(value, str) and value else None


def loads_or_none(text: str) -> Any:
    """Parse JSON embedded in a string field; None when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
