"""Streaming physical-line iteration with byte offsets, shared by the line-oriented readers.

A line longer than the limit is skipped without ever being held whole in memory, and the
final line is reported as incomplete when the file does not end in a newline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hippo.ingest.model import Message, ReadResult, SessionInfo, Skip

try:  # orjson is a declared dependency; the stdlib is the fallback, not the norm
    import orjson

    _ORJSON_ERROR: type[Exception] = orjson.JSONDecodeError
except ImportError:  # pragma: no cover
    orjson = None  # type: ignore[assignment]
    _ORJSON_ERROR = ValueError

_DISCARD_BLOCK = 1 << 20


@dataclass(slots=True)
class Line:
    """One physical line: its 1-based number, bytes (None when too long) and end offset."""

    number: int
    data: bytes | None
    end: int  # byte offset just past this line, newline included
    complete: bool  # False only for a final line with no trailing newline


def iter_lines(
    path: Path, start_offset: int, start_line: int, max_line_bytes: int
) -> Iterator[Line]:
    """Yield lines from start_offset on; `data` excludes the newline (and a CR before it)."""
    with path.open("rb") as fh:
        fh.seek(start_offset)
        offset, number = start_offset, start_line
        while True:
            raw = fh.readline(max_line_bytes + 1)
            if not raw:
                return
            number += 1
            if raw.endswith(b"\n"):
                offset += len(raw)
                yield Line(number, raw[:-1].removesuffix(b"\r"), offset, True)
                continue
            if len(raw) <= max_line_bytes:  # short read without newline: end of file
                offset += len(raw)
                yield Line(number, raw.removesuffix(b"\r"), offset, False)
                return
            # Over the limit: stream past the rest of the line in bounded blocks.
            size, complete = len(raw), False
            del raw
            while True:
                block = fh.readline(_DISCARD_BLOCK)
                if not block:
                    break
                size += len(block)
                if block.endswith(b"\n"):
                    complete = True
                    break
            offset += size
            yield Line(number, None, offset, complete)
            if not complete:
                return


def decode(data: bytes, number: int) -> str | None:
    """UTF-8 decode one line (BOM on line 1 dropped); None when the bytes are not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if number == 1 and text.startswith("\ufeff"):
        text = text[1:]
    return text


def loads(text: str) -> Any:
    """Parse JSON fast; fall back to the stdlib for lone surrogate escapes orjson rejects."""
    if orjson is not None:
        try:
            return orjson.loads(text)
        except _ORJSON_ERROR:
            pass
    return json.loads(text)


class JsonlScan:
    """Iterate the JSON objects of a JSONL file, recording skips and how far it got.

    A final line with no newline is consumed only when it parses as a complete JSON object;
    anything else there is a torn write left for the next run.
    """

    def __init__(self, path: Path, start_offset: int, start_line: int, max_line_bytes: int):
        self.path, self.max_line_bytes = path, max_line_bytes
        self.start_offset, self.start_line = start_offset, start_line
        self.end_offset, self.end_line = start_offset, start_line
        self.skipped: list[Skip] = []

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for line in iter_lines(self.path, self.start_offset, self.start_line, self.max_line_bytes):
            obj, reason = _parse(line)
            if obj is None and not line.complete:
                return  # torn tail: not consumed
            self.end_offset, self.end_line = line.end, line.number
            if reason:
                self.skipped.append(Skip(line.number, reason))
            elif obj is not None:
                yield line.number, obj

    def feed(self, take: Callable[[int, dict[str, Any]], bool]) -> JsonlScan:
        """Give `take` every object with its line number; one it does not know (False) is
        a Skip "unknown record"."""
        for number, record in self:
            if not take(number, record):
                self.skipped.append(Skip(number, "unknown record"))
        return self

    def result(self, session: SessionInfo, messages: list[Message], ignored: int = 0,
               redactions: int = 0) -> ReadResult:
        """The read's result: these messages, and what the scan skipped and consumed."""
        return ReadResult(session, messages, self.skipped, self.end_offset, self.end_line,
                          ignored, redactions)


def _parse(line: Line) -> tuple[dict[str, Any] | None, str | None]:
    """Classify one line as an object, a skip reason, or (None, None) for a blank line."""
    if line.data is None:
        return None, "line too long"
    text = decode(line.data, line.number)
    if text is None:
        return None, "invalid utf-8"
    if not text.strip():
        return None, None
    try:
        obj = loads(text)
    except (ValueError, RecursionError):
        return None, "malformed json"
    if not isinstance(obj, dict):
        return None, "not an object"
    return obj, None
