"""Small helpers every reader shares: text cleanup, shortening tool I/O, timestamps."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from hippo.ingest.redact import redact

TOOL_CALL_LIMIT = 300
TOOL_RESULT_LIMIT = 500

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


def _command_list(argv: list[str]) -> str:
    """`["bash", "-lc", "ls -la"]` -> `ls -la`; other argv lists are joined with spaces."""
    if len(argv) == 3 and argv[1] in ("-lc", "-c") and argv[0].endswith("sh"):
        return argv[2]
    return " ".join(argv)


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
