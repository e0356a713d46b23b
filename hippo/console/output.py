"""Output: JSON lines (one encoder) for machines, a rich table for a person at a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.console.environment import Environment

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


def want_json(flag: bool | None, env: Environment | None = None) -> bool:
    """JSON when asked, and whenever stdout (the call's, `env`) is not a terminal."""
    return bool(flag) or not (env.stdout_isatty if env is not None else sys.stdout.isatty())


def write_json_lines(records: Iterable[dict[str, Any]], env: Environment | None = None) -> int:
    out = (env.stdout if env is not None else sys.stdout).buffer
    n = 0
    for rec in records:
        out.write(dumps(rec))
        n += 1
    out.flush()
    return n


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def flat(text: str) -> str:
    """Prose for one table cell: runs of whitespace and line breaks become one space, so
    the cell wraps as one paragraph (JSON lines keep the text as stored)."""
    return " ".join(text.split())


def day(stamp: Any, *, wide: bool = False) -> str:
    """A timestamp for a table: the day (`2026-12-01`), or with `wide` to the second."""
    if not stamp:
        return ""
    text = str(stamp)
    return text[:19].replace("T", " ") if wide else text[:10]


# The prose column takes the width the others leave and wraps between words (a word longer
# than the column folds); every other field stays on one line, whole: an id, a date or a
# score cut in two reads as two values. A project name gets at most PROJECT_WIDTH unless
# --wide (it ends in an ellipsis past that).
PROSE = frozenset({"text", "message", "detail"})
PROJECT_WIDTH = 18


def table(records: Sequence[dict[str, Any]], columns: Sequence[str], *,
          title: str | None = None, wide: bool = False, env: Environment | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console() if env is None else Console(file=env.stdout, _environ=env.environ)
    rows = [[flat(_cell(rec.get(c))) if c in PROSE else _cell(rec.get(c)) for c in columns]
            for rec in records]
    if _short_width(rows, columns, wide) + MIN_PROSE > console.width:
        _expanded(console, rows, columns, title)
        return
    # No borders (gh, ripgrep): one space each side of a column is all the frame costs.
    t = Table(title=title, box=None, padding=(0, 1), pad_edge=False, header_style="bold",
              show_edge=False)
    for col in columns:
        if col in PROSE:
            t.add_column(col, overflow="fold", min_width=MIN_PROSE)
        else:
            limit = PROJECT_WIDTH if col == "project" and not wide else None
            t.add_column(col, no_wrap=True, overflow="ellipsis", max_width=limit)
    for row in rows:
        t.add_row(*row)
    console.print(t)


MIN_PROSE = 24  # narrower than this, the text would read a few words a line


def _short_width(rows: list[list[str]], columns: Sequence[str], wide: bool) -> int:
    """What the one-line columns take, with the space between columns."""
    total = 0
    for i, col in enumerate(columns):
        if col in PROSE:
            continue
        width = max([len(col), *(len(r[i]) for r in rows)])
        total += min(width, PROJECT_WIDTH) if col == "project" and not wide else width
    return total + 2 * (len(columns) - 1)


def _expanded(console: Any, rows: list[list[str]], columns: Sequence[str],
              title: str | None) -> None:
    """Too many fields for the width (--wide at 80 columns): one block per record, a field
    a line, as psql's expanded display; the values wrap, nothing is cut."""
    from rich.table import Table

    if title:
        console.print(title, markup=False, highlight=False)
    for n, row in enumerate(rows):
        if n:
            console.print()
        t = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
        t.add_column("field", style="bold", no_wrap=True)
        t.add_column("value", overflow="fold")
        for col, value in zip(columns, row):
            t.add_row(col, value)
        console.print(t)


def emit(records: Iterable[dict[str, Any]], *, json_flag: bool | None,
         columns: Sequence[str], title: str | None = None, wide: bool = False,
         shown: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
         env: Environment | None = None) -> int:
    """Print records; no records means no output at all. `shown` turns a record into its
    table row (short dates, ...); JSON lines always carry the record itself. `env`: the
    call's streams (`hippo.console.environment`; default this process's)."""
    if want_json(json_flag, env):
        return write_json_lines(records, env)
    rows = [shown(r) for r in records] if shown else list(records)
    if rows:
        table(rows, columns, title=title, wide=wide, env=env)
    return len(rows)


def stderr(message: str, env: Environment | None = None) -> None:
    stream = env.stderr if env is not None else sys.stderr
    stream.write(message.rstrip("\n") + "\n")
    stream.flush()
