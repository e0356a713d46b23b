"""The Typer-free `hippo search` path (`hippo.cli.fastpath`) against the Typer command.

The Typer declaration is the definition: the fast path's option tables must list exactly
its options, any argv the fast path accepts must parse to the same values under Click, and
a search must print the same bytes and exit the same way on either path.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hippo.cli import fastpath

# Click parameters the fast path leaves to Typer on purpose: they print and exit.
EAGER = {"version", "help"}


def click_commands() -> tuple[Any, Any]:
    import typer.main

    from hippo.cli.app import app

    group = typer.main.get_command(app)
    return group, group.get_command(None, "search")


def kind_of(param: Any, opt: str) -> str:
    from typer._click import types
    from typer.models import TyperPath

    if param.is_flag:
        return "off" if opt in param.secondary_opts else "flag"
    if param.multiple:
        return "many"
    if isinstance(param.type, types.IntRange):
        assert param.type.min == 1 and not param.type.min_open
        return "count"
    if isinstance(param.type, types.FloatRange):
        assert (param.type.min, param.type.max) == (0.0, 1.0)
        assert not param.type.min_open and not param.type.max_open
        return "unit"
    if isinstance(param.type, TyperPath):
        t = param.type
        assert (t.file_okay, t.dir_okay, t.exists, t.readable, t.writable, t.resolve_path,
                t.allow_dash) == (True, False, False, True, False, False, False)
        return "path"
    assert param.type is types.STRING, param
    return "text"


def table_of(command: Any) -> dict[str, tuple[str, str]]:
    table = {}
    for param in command.params:
        if param.param_type_name != "option" or param.name in EAGER:
            continue
        for opt in (*param.opts, *param.secondary_opts):
            table[opt] = (param.name, kind_of(param, opt))
    return table


def test_tables_list_exactly_the_typer_options() -> None:
    group, search = click_commands()
    assert fastpath.ROOT == table_of(group)
    assert fastpath.SEARCH == table_of(search)
    arguments = [p.name for p in search.params if p.param_type_name == "argument"]
    assert arguments == ["query"]


def click_parse(argv: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What Click makes of argv: the root's parameters and the search command's."""
    group, _ = click_commands()
    ctx = group.make_context("hippo", list(argv))
    name, command, rest = group.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
    assert name == "search"
    sub = command.make_context(name, rest, parent=ctx)
    return dict(ctx.params), dict(sub.params)


def normal(value: Any, kind: str) -> Any:
    if kind == "many":
        return list(value) or None
    if kind == "path":
        return str(Path(value)) if value is not None else None
    return value


def same_call(call: fastpath.Call, argv: list[str]) -> None:
    root, params = click_parse(argv)
    for table, got, want in ((fastpath.ROOT, call.root, root),
                             (fastpath.SEARCH, call.params, params)):
        for dest, kind in set(table.values()):
            default = False if kind in ("flag", "off") else None
            if kind in ("flag", "off") and dest == "rerank":
                default = None
            expected = normal(want[dest], kind)
            # Options whose default is a value: what run() takes when the fast path leaves
            # them out.
            default = {"budget": 800}.get(dest, default)
            assert got.get(dest, default) == expected, (argv, dest)
    assert call.query == params["query"]


COMMON = [
    ["search", "how do I deploy?", "--json"],
    ["--db", "x.db", "search", "--json", "deploy"],
    ["--db=x.db", "-p", "web", "--embedder", "hash", "search", "deploy", "--limit", "3"],
    ["search", "-n", "7", "-t", "fact", "--type", "rule", "--tag", "a", "--tag", "b", "q"],
    ["search", "q", "--since", "7d", "--until", "2026-01-01", "--all-projects"],
    ["search", "q", "--format", "markdown", "--budget", "40", "--explain", "--no-rerank"],
    ["search", "q", "--rerank", "--include-superseded", "-f", "json", "-b", "9"],
    ["search", "--", "--force is a flag"],
    ["search", "-"],
    ["search", "--project", "p2", "--db", "y.db", "--embedder=local", "q"],
    ["--debug", "search", "q"],
    ["search", "src/app.py \"unbalanced", "--limit=2"],
    ["search", "q", "--limit", " 4"],
    ["search", "q", "--min-score", "0.3", "--json"],
    ["search", "--min-score=1", "q"],
    ["search", "q", "--min-score", "0"],
]


@pytest.mark.parametrize("argv", COMMON, ids=lambda a: " ".join(a))
def test_common_calls_take_the_fast_path_with_clicks_values(argv: list[str]) -> None:
    call = fastpath.parse(argv)
    assert call is not None
    same_call(call, argv)


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["search", "--help"], ["search", "-h"], ["--version"], ["search"],
    ["search", "a", "b"], ["add", "x"], ["list"], ["search", "q", "--limit", "0"],
    ["search", "q", "--limit", "x"], ["search", "q", "-n5"], ["search", "q", "--json=1"],
    ["search", "q", "--unknown"], ["search", "q", "--limit"], ["search", "-5"], ["--json", "search", "q"],
    ["search", "q", "--bm25-only"], ["--", "search", "q"],
    ["search", "q", "--min-score", "2"], ["search", "q", "--min-score", "-0.1"],
    ["search", "q", "--min-score", "nan"], ["search", "q", "--min-score", "x"],
], ids=lambda a: " ".join(a) or "nothing")
def test_anything_in_doubt_goes_to_typer(argv: list[str]) -> None:
    assert fastpath.parse(argv) is None


VALUES = ["5", "0", "-1", " 3", "x", "", "a=b", "fact", "é", "two words", "/", "7d", "--",
          "-", "--json", "search"]
NOISE = ["--", "-", "search", "--help", "-h", "-n5", "--limit=3", "--json=1", "--rerank=",
         "-x", "--unknown", "--version"]


@st.composite
def argvs(draw: Any) -> list[str]:
    """Mostly well-formed calls (the fast path's business), with a little noise."""

    def options(table: dict[str, tuple[str, str]]) -> list[str]:
        out: list[str] = []
        for _ in range(draw(st.integers(0, 4))):
            name = draw(st.sampled_from(sorted(table)))
            if table[name][1] in ("flag", "off"):
                out.append(name)
                continue
            value = draw(st.sampled_from(VALUES))
            out += [f"{name}={value}"] if name.startswith("--") and draw(st.booleans()) \
                else [name, value]
        return out

    tail = options(fastpath.SEARCH)
    query = draw(st.sampled_from(["deploy", "two words", "-", "--force", "é", ""]))
    if query.startswith("--"):
        tail += ["--", query]
    else:
        tail.insert(draw(st.integers(0, len(tail))), query)
    argv = [*options(fastpath.ROOT), "search", *tail]
    for _ in range(draw(st.integers(0, 1))):
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(NOISE)))
    return argv


@given(argvs())
def test_whatever_the_fast_path_accepts_click_parses_the_same(argv: list[str]) -> None:
    call = fastpath.parse(argv)
    if call is not None:
        same_call(call, argv)


def seeded(cli: Any) -> None:
    for text, kind in (("Deploy with make ship from a clean tree", "procedure"),
                       ("ERR_SSL_PROTOCOL_ERROR means the proxy strips TLS", "fact"),
                       ("Always run the linter before pushing", "rule")):
        assert cli("add", text, "--type", kind).exit_code == 0


@pytest.mark.parametrize("args", [
    ["search", "deploy", "--json"],
    ["search", "deploy", "--explain", "--format", "table"],
    ["search", "ERR_SSL_PROTOCOL_ERROR", "--format", "markdown", "--budget", "40"],
    ["search", "linter", "-t", "rule", "--json"],
    ["search", "nothing matches zzzz", "--json"],
    ["search", "deploy", "--format", "yaml"],
    ["search", "deploy", "--since", "soon"],
    ["search", "-", "--json"],
    ["search", "deploy", "--min-score", "0.5", "--json"],
    ["search", "deploy", "--min-score", "0.99", "--json"],
], ids=lambda a: " ".join(a))
def test_both_paths_print_the_same(cli: Any, db_path: Path, args: list[str]) -> None:
    from typer.testing import CliRunner

    from hippo.cli.app import app

    seeded(cli)
    argv = ["--db", str(db_path), "--embedder", "hash", *args]
    assert fastpath.parse(argv) is not None
    fast = cli(*args, input="deploy")
    slow = CliRunner().invoke(app, argv, input="deploy")
    assert (fast.exit_code, steady(fast.stdout), fast.stderr) == (
        slow.exit_code, steady(slow.stdout), slow.stderr)
    assert fast.stdout.strip() or fast.stderr.strip()


def steady(out: str) -> str:
    """`out` with long decimals cut to 6 places: freshness moves between the two calls."""
    return re.sub(r"(\d\.\d{6})\d+", r"\1", out)


def test_a_search_process_does_not_import_typer(db_path: Path) -> None:
    probe = ("import atexit, sys; atexit.register(lambda: sys.stderr.write("
             "'TYPER %s\\n' % ('typer' in sys.modules))); from hippo.cli.main import main; "
             "main()")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", probe, "--db", str(db_path),
                               "--embedder", "hash", *args],
                              capture_output=True, text=True, check=False, timeout=120)

    assert run("add", "Deploy with make ship").returncode == 0
    fast = run("search", "deploy", "--json")
    assert fast.returncode == 0 and "make ship" in fast.stdout
    assert "TYPER False" in fast.stderr
    helped = run("search", "--help")
    assert helped.returncode == 0 and "--budget" in helped.stdout
    assert "TYPER True" in helped.stderr


def test_the_console_process_flushes_everything_and_leaves_the_database_sound(
        cli: Any, db_path: Path) -> None:
    """`python -m hippo search` ends with os._exit: its output must be whole, its exit code
    0, atexit handlers run, and the database closed cleanly behind it."""
    for i in range(8):
        assert cli("add", f"Deploy note {i}: ship with make release-{i}").exit_code == 0
    base = [sys.executable, "-m", "hippo", "--db", str(db_path), "--embedder", "hash"]
    out = subprocess.run([*base, "search", "deploy", "--json", "--limit", "8"],
                         capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 8 and all(json.loads(line)["id"] for line in lines)
    assert out.stderr == ""
    with subprocess.Popen([*base, "search", "deploy", "--json", "--limit", "8"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(5)
        proc.stdout.close()  # the reader goes away, as `| head -c 5` would
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 0 and b"Traceback" not in err
    hook = ("import atexit, runpy, sys; atexit.register(lambda: print('ATEXIT RAN', "
            "file=sys.stderr)); sys.argv = ['hippo', *sys.argv[1:]]; "
            "runpy.run_module('hippo', run_name='__main__')")
    ran = subprocess.run([sys.executable, "-c", hook, "--db", str(db_path), "--embedder",
                          "hash", "search", "deploy"], capture_output=True, text=True,
                         check=False, timeout=120)
    assert ran.returncode == 0 and "ATEXIT RAN" in ran.stderr
    if isinstance(db_path, Path):  # the file itself, read without hippo
        conn = apsw.Connection(str(db_path))
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
    else:  # a server: the store's own check
        from hippo.store import connect

        assert connect(db_path).health.integrity(10) == ["ok"]
    assert cli("search", "deploy", "--json").exit_code == 0


def test_the_search_options_are_the_search_request_fields() -> None:
    """Every option of `hippo search` that is the search's own maps to a field of the one
    request type; the request's other fields are the Python API's (a clock, the settings)
    or `--all-projects` (projects=None)."""
    from hippo.cli.search_options import OPTIONS, REQUEST
    from hippo.retrieve.request import OPTIONS as FIELDS

    assert set(REQUEST) <= {dest for dest, *_ in OPTIONS}
    assert set(REQUEST.values()) | {"projects", "params", "now"} == set(FIELDS)
