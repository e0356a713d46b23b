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
# "unit" (a number in 0..1), "many" (repeatable text, collected in a list).
ROOT: dict[str, tuple[str, str]] = {
    "--db": ("db", "path"),
    "--project": ("project", "text"),
    "-p": ("project", "text"),
    "--embedder": ("embedder", "text"),
    "--debug": ("debug", "flag"),
}
SEARCH: dict[str, tuple[str, str]] = {
    "--limit": ("limit", "count"),
    "-n": ("limit", "count"),
    "--type": ("type_", "many"),
    "-t": ("type_", "many"),
    "--tier": ("tier", "many"),
    "--tag": ("tag", "many"),
    "--since": ("since", "text"),
    "--until": ("until", "text"),
    "--all-projects": ("all_projects", "flag"),
    "--include-superseded": ("include_superseded", "flag"),
    "--explain": ("explain", "flag"),
    "--rerank": ("rerank", "flag"),
    "--no-rerank": ("rerank", "off"),
    "--format": ("format_", "text"),
    "-f": ("format_", "text"),
    "--budget": ("budget", "count"),
    "-b": ("budget", "count"),
    "--min-score": ("min_score", "unit"),
    "--project": ("project", "text"),
    "-p": ("project", "text"),
    "--db": ("db", "path"),
    "--embedder": ("embedder", "text"),
    "--json": ("json", "flag"),
    "--wide": ("wide", "flag"),
    "-w": ("wide", "flag"),
}


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


def run(call: Call) -> None:
    from hippo.cli.search_run import run as search

    if call.root.get("debug"):
        os.environ["HIPPO_DEBUG"] = "1"
    root = {key: call.root.get(key) for key in ("db", "project", "embedder")}
    search(root, call.query, **call.params)


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
    elif kind == "count":
        try:
            number = int(value)
        except ValueError:
            raise _Defer from None
        if number < 1:
            raise _Defer
        out[dest] = number
    elif kind == "unit":
        try:
            unit = float(value)
        except ValueError:
            raise _Defer from None
        if not 0.0 <= unit <= 1.0:  # NaN too
            raise _Defer
        out[dest] = unit
    elif kind == "path":
        if not value or _refused(value):
            raise _Defer
        from pathlib import Path

        out[dest] = str(Path(value))
    else:
        out[dest] = value
    return after


def _refused(path: str) -> bool:
    """Typer's file check: an existing directory, or a file it may not read."""
    try:
        st = os.stat(path)
    except OSError:
        return False  # not there yet: hippo creates it
    import stat

    return stat.S_ISDIR(st.st_mode) or not os.access(path, os.R_OK)


__all__ = ["ROOT", "SEARCH", "Call", "parse", "run"]
