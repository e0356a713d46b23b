"""Man pages carry EXAMPLES and EXIT STATUS, from the same source as `--help`."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from hippo.cli.app import app
from hippo.docgen.roff import EXIT_CODES, pages
from hippo.docgen.tree import split_examples, tree

EXAMPLED = ("search", "list", "echo", "show", "stats", "ingest", "extract", "consolidate",
            "retire", "undo")


def test_examples_come_from_the_help_and_every_command_page_has_exit_status() -> None:
    root = tree()
    man = pages(root, "test")
    by_name = {c.path: c for c in root.walk()}
    for name in EXAMPLED:
        cmd = by_name[(name,)]
        assert cmd.examples, name
        assert all(ex.startswith("hippo ") for ex in cmd.examples), cmd.examples
        help_text = CliRunner().invoke(app, [name, "--help"]).stdout
        for ex in cmd.examples:  # --help shows them as written, one a line
            assert f"    {ex}\n" in help_text, (name, ex)
        page = man[f"hippo-{name}.1"]
        assert ".SH EXAMPLES" in page
        for ex in cmd.examples:
            assert ex.replace("\\", "\\e").replace("-", "\\-") in page
    for c in root.walk():
        if c.path and not c.subcommands:
            page = man["-".join(("hippo", *c.path)) + ".1"]
            assert ".SH EXIT STATUS" in page, c.name
            for code, _ in EXIT_CODES:
                assert f"\\fB{code}\\fR" in page


def test_split_examples_leaves_the_rest_of_the_help() -> None:
    text = "Do a thing.\n\nMore about it.\n\nExamples:\n  hippo a\n  hippo b --c"
    assert split_examples(text) == ("Do a thing.\n\nMore about it.", ("hippo a", "hippo b --c"))
    assert split_examples("No examples.") == ("No examples.", ())


def test_the_committed_pages_have_the_sections() -> None:
    man = Path(__file__).resolve().parents[2] / "man"
    assert ".SH EXAMPLES" in (man / "hippo-ingest.1").read_text()
    assert ".SH EXIT STATUS" in (man / "hippo-undo.1").read_text()
