"""`hippo search` without Typer, for the calls agents make on every task.

Importing Typer and building its command takes about 90 ms, more than a search with a
cached query embedding. `parse` reads argv the way Click would for the root options and
`hippo search`, and returns None — so the Typer app handles the call — whenever anything
is outside what it knows for certain: another command, --help, --version, a short option
with its value attached, a number out of range, a directory given as --db, a missing or
second query. The Typer declaration in `hippo.cli.search` stays the one definition of the
command: tests/foundation/test_fastpath.py checks that the tables below match its options and
that both parsers give the same values for the same argv.
"""

from __future__ import annotations

import os
from typing import Any

# option → (parameter, kind). Kinds: "flag" (no value; True), "off" (no value; False),
# "text", "path" (a file: not an existing directory, readable if it exists), "count" (an int ≥ 1),
# "unit" (a number in 0..1), "many" (repeatable text, collected in a list). The search
# command's table comes from `hippo.cli.search_options`, the one list of its options.
ROOT: dict[str, tuple[str, str]] = {
    "--db": ("db", "text"),
    "--project": ("project", "text"),
    "-p": ("project", "text"),
    "--embedder": ("embedder", "text"),
    "--debug": ("debug", "flag"),
}


def _search_table() -> dict[str, tuple[str, str]]:
    """option → (parameter, kind), from the one table of search options; a toggle's
    second name (--no-rerank) is its "off"."""
    from hippo.cli.search_options import OPTIONS

    table: dict[str, tuple[str, str]] = {}
    for dest, names, kind, _default, _help in OPTIONS:
        if kind == "toggle":
            table[names[0]], table[names[1]] = (dest, "flag"), (dest, "off")
        else:
            table.update((name, (dest, kind)) for name in names)
    return table


SEARCH = _search_table()


class _Defer(Exception):
    """This argv is for the Typer app."""


class Call:
    """A parsed `hippo search`: the root's flags, the command's parameters and the query.

    A plain class: importing dataclasses (it imports inspect) would cost `hippo --help`,
    which passes through here, about 20 ms.
    """

    def __init__(self) -> None:
        self.root: dict[str, Any] = {}
        self.params: dict[str, Any] = {}
        self.query = ""


def parse(argv: list[str]) -> Call | None:
    """The search call `argv` makes, or None when the Typer app should handle it."""
    try:
        return _parse(argv)
    except _Defer:
        return None


def run(call: Call, env: Any) -> None:
    """Run the search in `env` (`hippo.console.environment.Environment`: the call's streams,
    variables and cwd)."""
    from hippo.cli.search_run import run as search

    if call.root.get("debug"):
        env.set_debug()
    root = {key: call.root.get(key) for key in ("db", "project", "embedder")}
    search(root, call.query, env=env, **call.params)


def _parse(argv: list[str]) -> Call:
    call = Call()
    i = 0
    # Root options come first; the first other word must be the command (Click groups do
    # not intersperse arguments).
    while True:
        if i == len(argv):
            raise _Defer
        if argv[i] == "search":
            break
        i = _option(ROOT, argv, i, call.root)
    i += 1
    words: list[str] = []
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            words.extend(argv[i + 1:])
            break
        if arg[:1] != "-" or arg == "-":
            words.append(arg)
            i += 1
        else:
            i = _option(SEARCH, argv, i, call.params)
    if len(words) != 1:
        raise _Defer
    call.query = words[0]
    return call


def _option(table: dict[str, tuple[str, str]], argv: list[str], i: int,
            out: dict[str, Any]) -> int:
    """Read the option at argv[i] into `out`; the index after it."""
    arg = argv[i]
    name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
    if name not in table:
        raise _Defer
    dest, kind = table[name]
    if kind in ("flag", "off"):
        if eq:
            raise _Defer
        out[dest] = kind == "flag"
        return i + 1
    if eq:
        value, after = attached, i + 1
    elif i + 1 < len(argv):
        value, after = argv[i + 1], i + 2
    else:
        raise _Defer
    if kind == "many":
        out.setdefault(dest, []).append(value)
    else:
        out[dest] = VALUES[kind](value)
    return after


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise _Defer from None
    if number < 1:
        raise _Defer
    return number


def _unit(value: str) -> float:
    try:
        unit = float(value)
    except ValueError:
        raise _Defer from None
    if not 0.0 <= unit <= 1.0:  # NaN too
        raise _Defer
    return unit


def _path(value: str) -> str:
    if not value or _refused(value):
        raise _Defer
    from pathlib import Path

    return str(Path(value))


# kind → the value it reads from one argument (or _Defer: Click's own message is needed).
VALUES: dict[str, Any] = {"count": _count, "unit": _unit, "path": _path, "text": str}


def _refused(path: str) -> bool:
    """Typer's file check: an existing directory, or a file it may not read."""
    try:
        st = os.stat(path)
    except OSError:
        return False  # not there yet: hippo creates it
    import stat

    return stat.S_ISDIR(st.st_mode) or not os.access(path, os.R_OK)


__all__ = ["ROOT", "SEARCH", "Call", "parse", "run"]
