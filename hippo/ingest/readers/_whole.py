"""Whole-file JSON loading for formats that rewrite one document (Gemini chats, JSON arrays).

Such files have no stable byte positions, so readers use the message index as the "line":
`end_line` is the number of messages seen and a resumed read returns only messages whose
index is at or past `start_line`. An unreadable or half-written file consumes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hippo.ingest.model import ReadResult, SessionInfo, Skip
from hippo.ingest.readers._lines import loads

MAX_WHOLE_FILE_BYTES = 512 * 1024 * 1024


def load(path: Path) -> tuple[Any, str | None, int]:
    """Parse the file as one JSON document: (value, skip reason or None, size in bytes)."""
    size = path.stat().st_size
    if size > MAX_WHOLE_FILE_BYTES:
        return None, "file too large", size
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None, "invalid utf-8", size
    if not text.strip():
        return None, "empty file", size
    try:
        return loads(text), None, size
    except (ValueError, RecursionError):
        return None, "malformed json", size


def nothing_consumed(
    session: SessionInfo, start_offset: int, start_line: int, reason: str
) -> ReadResult:
    """The result for a file that cannot be used yet: retry from the same place next run."""
    return ReadResult(session, [], [Skip(None, reason)], start_offset, start_line)
