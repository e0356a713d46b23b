"""Output: JSON lines (one encoder) for machines, a rich table for a person at a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

_OPTS: int | None = None
# Line breaks besides \n that JSON leaves raw but some line readers split on (Python's
# str.splitlines, JavaScript): escaped, so one record is one line for every reader.
_BREAKS = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"),
           (b"\xe2\x80\xa9", b"\\u2029"))


def dumps(obj: Any) -> bytes:
    import orjson

    global _OPTS
    if _OPTS is None:
        _OPTS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    out = orjson.dumps(obj, option=_OPTS, default=str)
    for raw, escaped in _BREAKS:
        if raw in out:
            out = out.replace(raw, escaped)
    return out


def want_json(flag: bool | None) -> bool:
    """JSON when asked, and whenever stdout is not a terminal."""
    return bool(flag) or not sys.stdout.isatty()


def write_json_lines(records: Iterable[dict[str, Any]]) -> int:
    out = sys.stdout.buffer
    n = 0
    for rec in records:
        out.write(dumps(rec))
        n += 1
    out.flush()
    return n


def _cell(value: Any, width: int = 80) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    text = str(value).replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


# In a narrow terminal the prose column takes the width the others leave, and short
# fixed-width fields (ids, scores, types, dates) stay on one line.
PROSE = frozenset({"text", "message", "detail"})
ONE_LINE = frozenset({"id", "score", "type", "date", "status", "tier"})


def table(records: Sequence[dict[str, Any]], columns: Sequence[str], *,
          title: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, show_lines=False, header_style="bold")
    for col in columns:
        if col in PROSE:  # the free text takes what width the short fields leave
            t.add_column(col, overflow="fold", ratio=1)
        else:
            t.add_column(col, overflow="fold", no_wrap=col in ONE_LINE)
    for rec in records:
        t.add_row(*(_cell(rec.get(c)) for c in columns))
    Console().print(t)


def emit(records: Iterable[dict[str, Any]], *, json_flag: bool | None,
         columns: Sequence[str], title: str | None = None) -> int:
    """Print records; no records means no output at all."""
    if want_json(json_flag):
        return write_json_lines(records)
    rows = list(records)
    if rows:
        table(rows, columns, title=title)
    return len(rows)


def stderr(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
