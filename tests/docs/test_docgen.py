"""man pages, completions and docs/commands.md: generated from the Typer app, never stale."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hippo.docgen import REPO, STALE, render_all, stale, tree, write
from hippo.memory.memtypes import BUILTIN

ROOT = tree()
FILES = render_all(ROOT)
COMMANDS = [c.path[0] for c in ROOT.subcommands]
MACROS = {".TH", ".SH", ".SS", ".PP", ".TP", ".IP", ".B", ".I", ".nf", ".fi", ".RS", ".RE"}
ESCAPES = re.compile(r"\\(f[BIRP]|-|e|&|\(..)")


def test_committed_files_are_fresh() -> None:
    bad = stale(REPO, FILES)
    assert not bad, f"{STALE}: " + ", ".join(bad)


def test_check_and_write(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "hippo.docgen", "--check", "--out", str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 1 and "run `python -m hippo.docgen`" in r.stderr
    write(tmp_path, FILES)
    (tmp_path / "man" / "hippo-gone.1").write_text(".TH X 1\n")
    assert stale(tmp_path, FILES) == ["man/hippo-gone.1"]
    write(tmp_path, FILES)
    assert subprocess.run(cmd, capture_output=True, check=False).returncode == 0


@pytest.mark.parametrize("name", sorted(n for n in FILES if n.startswith("man/")))
def test_man_page_is_well_formed_roff(name: str) -> None:
    lines = FILES[name].splitlines()
    body = [ln for ln in lines if not ln.startswith('.\\"')]
    th = body[0].split('" "')
    page = Path(name).stem
    assert body[0].startswith(f'.TH "{page.upper()}" "1"') and len(th) == 5
    sections = [ln[4:] for ln in body if ln.startswith(".SH ")]
    assert sections[:3] == ["NAME", "SYNOPSIS", "DESCRIPTION"]
    assert body[body.index(".SH NAME") + 1].startswith(page.replace("-", "\\-") + " \\- ")
    for ln in body:
        assert not ln.startswith("'"), ln
        if ln.startswith("."):
            assert ln.split()[0] in MACROS, ln
        assert "\\" not in ESCAPES.sub("", ln), f"unknown escape in {ln!r}"
        fonts = re.findall(r"\\f[BIR]", ln)
        assert not fonts or fonts[-1] == "\\fR", f"font left open in {ln!r}"


def test_every_command_has_a_page_and_options() -> None:
    assert "add" in COMMANDS and "context" in COMMANDS
    for cmd in ROOT.walk():
        page = FILES["man/" + "-".join(("hippo", *cmd.path)) + ".1"]
        for opt in cmd.options:
            assert opt.opts[0].replace("-", "\\-") in page
    assert all(f"\\fBhippo\\-{c}\\fR(1)" in FILES["man/hippo.1"] for c in COMMANDS)
    assert ".SH EXIT STATUS" in FILES["man/hippo.1"] and "HIPPO_DB" in FILES["man/hippo.1"]


@pytest.mark.parametrize("command", ["add", "search", "context"])
def test_man_renders(command: str, tmp_path: Path) -> None:
    if command not in COMMANDS:
        pytest.skip(f"no `hippo {command}` command in this build")
    page = tmp_path / f"hippo-{command}.1"
    page.write_text(FILES[f"man/hippo-{command}.1"])
    if shutil.which("groff"):
        r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 0 and r.stderr == "", r.stderr
    if not shutil.which("man"):
        pytest.skip("man(1) is not installed; the roff structure test covers the page")
    r = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, check=False,
                       env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80"})
    assert r.returncode == 0, r.stderr
    assert "NAME" in r.stdout and "OPTIONS" in r.stdout
    assert re.search(rf"hippo-{command}\s+-\s+\S", r.stdout), r.stdout[:300]


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("completions") / "hippo.bash"
    path.write_text(FILES["completions/hippo.bash"])
    return path


def complete(script: Path, *words: str) -> list[str]:
    """Drive bash's completion function as `complete -F` would for `words` (last one: cursor)."""
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    prog = ('source "$1"; shift; complete -p hippo >/dev/null || exit 9; '
            'COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); '
            'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _hippo; printf "%s\\n" "${COMPREPLY[@]}"')
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", prog, "bash", str(script), *words],
                       capture_output=True, text=True, check=True)
    return [w for w in r.stdout.splitlines() if w]


def test_bash_completes_commands_options_and_types(bash_script: Path) -> None:
    types = sorted(BUILTIN)
    assert complete(bash_script, "hippo", "") == COMMANDS
    assert {"add", "context"} <= set(complete(bash_script, "hippo", "--db", "x.db", ""))
    if "search" in COMMANDS:
        assert "search" in complete(bash_script, "hippo", "se")
        assert complete(bash_script, "hippo", "search", "--type", "") == types
    assert complete(bash_script, "hippo", "add", "--type", "") == types
    assert complete(bash_script, "hippo", "add", "-t", "ru") == ["rule"]
    assert complete(bash_script, "hippo", "-p", "A", "list", "x", "--type", "d") == ["decision"]
    assert complete(bash_script, "hippo", "list", "--tier", "") == ["procedural", "semantic",
                                                                     "episodic"]
    assert "--type" in complete(bash_script, "hippo", "add", "--ty")
    assert complete(bash_script, "hippo", "hook", "") == ["claude-code", "codex"]
    assert complete(bash_script, "hippo", "hook", "codex", "") == ["session-start", "prompt",
                                                                   "session-end", "stop"]
    assert complete(bash_script, "hippo", "context", "--budget", "") == []


def test_zsh_and_fish_scripts(tmp_path: Path) -> None:
    zsh, fish = shutil.which("zsh"), shutil.which("fish")
    if not (zsh or fish):
        pytest.skip("neither zsh nor fish is installed")
    if zsh:
        (tmp_path / "_hippo").write_text(FILES["completions/_hippo"])
        subprocess.run([zsh, "-n", str(tmp_path / "_hippo")], check=True)
    if fish:
        script = tmp_path / "hippo.fish"
        script.write_text(FILES["completions/hippo.fish"])
        out = subprocess.run([fish, "--no-config", "-c",
                              f"source {script}; complete -C 'hippo add --type '"],
                             capture_output=True, text=True, check=True).stdout
        assert [ln.split("\t")[0] for ln in out.splitlines()] == sorted(BUILTIN)


def test_markdown_reference() -> None:
    md = FILES["docs/commands.md"]
    for c in COMMANDS:
        assert f"## `hippo {c}`" in md and f"(#hippo-{c})" in md
    assert "| `--type`, `-t` | `TEXT` |" in md
