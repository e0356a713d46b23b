"""Numbers and names out of range are refused with exit 2 and one line, never read as
something else (a negative limit as one result, an unknown role as none)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args", [
    ("echo", "q", "--limit", "-1"), ("echo", "q", "--limit", "0"), ("echo", "q", "-n", "-1"),
    ("echo", "q", "--context", "-3"), ("echo", "q", "--role", "robot"),
    ("echo", "q", "--role", "user", "--role", "system"),
    ("list", "--limit", "-1"), ("ingest", "--idle-minutes", "-5"),
])
def test_out_of_range_values_are_usage_errors(cli, args: tuple[str, ...]) -> None:
    r = cli(*args)
    assert r.exit_code == 2, (args, r.exit_code, r.stdout, r.stderr)
    assert r.stdout == ""
    assert r.stderr.strip(), args


def test_the_unknown_role_error_names_the_valid_ones(cli) -> None:
    r = cli("echo", "q", "--role", "robot")
    assert r.stderr == ("hippo: unknown role 'robot'; choose user, assistant, tool, "
                        "summary\n")


def test_every_valid_role_and_list_limit_zero_are_accepted(cli) -> None:
    for role in ("user", "assistant", "tool", "summary"):
        assert cli("echo", "q", "--role", role).exit_code == 0
    assert cli("add", "one").exit_code == 0 and cli("add", "two").exit_code == 0
    assert len(cli("list", "--limit", "0").records) == 2  # 0: no limit, as documented
    assert len(cli("list", "--limit", "1").records) == 1


@pytest.mark.parametrize("args, says", [
    (("echo", "q", "--limit", "-1"), ("hippo: Invalid value for '--limit' / '-n': -1 is not "
                                      "in the range x>=1. (`hippo echo --help` for usage)")),
    (("list", "--bogus"), "hippo: No such option: --bogus (`hippo list --help` for usage)"),
    (("bogus",), "hippo: No such command 'bogus'. (`hippo --help` for usage)"),
    (("search",), "hippo: Missing argument 'query'. (`hippo search --help` for usage)"),
])
def test_a_usage_error_is_one_hippo_line(cli, args: tuple[str, ...], says: str) -> None:
    """Click's Usage / Try / Error block is one line, like every other hippo error."""
    r = cli(*args)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", says + "\n")


def test_help_and_exit_codes_pass_through(cli) -> None:
    assert cli("--help").exit_code == 0
    r = cli("show", "999")
    assert (r.exit_code, r.stderr) == (1, "hippo: no memory with id 999\n")
