"""An edit that fixes what the session said was wrong: what the readers keep of an edit, and
which edits `hippo extract` reads as the fix of a stated problem (`hippo.extract.fixes`).

Hand-made excerpts (Claude Code about a JavaScript app, Gemini CLI about a Go service,
Claude Code about a Python API) run through `hippo ingest` and `hippo extract`: the fix is
one memory, the problem as said and the lines changed; every word is in the chunks it cites;
the problem's own memory is done; nothing when the edit did not hold (no check or commit
after it), when the prose before it only narrates, or when the edit failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.ingest.readers._common import EDIT_DIFF_CHARS, edit_diff, tool_call_text
from tests.extract import excerpts as X
from tests.extract.test_statements import nothing_invented

# -- what the readers keep of an edit ------------------------------------------------------------


def test_an_edit_keeps_the_lines_it_changed() -> None:
    text, _ = tool_call_text("Edit", {
        "file_path": "/home/dev/app/src/format.js",
        "old_string": "export function day(row) {\n  const d = new Date(row.at);\n  return d;\n}",
        "new_string": "export function day(row) {\n  const d = new Date(row.at + 'Z');\n"
                      "  return d;\n}"})
    assert text == ("Edit: /home/dev/app/src/format.js\n- const d = new Date(row.at);\n"
                    "+ const d = new Date(row.at + 'Z');")


def test_a_multi_edit_keeps_each_change_and_a_write_its_first_lines() -> None:
    diff = edit_diff({"file_path": "a.py", "edits": [
        {"old_string": "x = 1", "new_string": "x = 2"},
        {"old_string": "import os\n", "new_string": "import os\nimport sys\n"}]})
    assert diff == "- x = 1\n+ x = 2\n+ import sys"
    assert tool_call_text("Write", {"file_path": "/p/a.py", "content": "print(1)"})[0] == \
        "Write: /p/a.py\n+ print(1)"
    head = edit_diff({"file_path": "/p/b.py", "content": '"""Loads the config."""\n\n' +
                      "x = 1\n" * 400})
    assert head.startswith('+ """Loads the config."""\n+ x = 1') and head.endswith("\n…")
    assert edit_diff({"content": "no path: not a file written"}) == ""
    assert edit_diff('{"old_string": "a", "new_string": "a"}') == ""  # nothing changed


def test_a_long_edit_is_cut_at_whole_lines() -> None:
    old = "\n".join(f"old line number {i} of the function body" for i in range(40))
    diff = edit_diff({"old_string": old, "new_string": "pass"})
    lines = diff.splitlines()
    assert lines[-1] == "…" and all(ln.startswith("- old line number") for ln in lines[:-1])
    assert len(diff) <= EDIT_DIFF_CHARS + 40


# -- which edits are fixes -----------------------------------------------------------------------

JS_CAUSE = ("The dates shift by a day because `new Date(row.at)` reads the UTC timestamp as "
            "local time.")
JS_OLD = "const d = new Date(row.at);"
JS_NEW = "const d = new Date(row.at + 'Z');"
JS = [
    ("user", "The calendar shows events on the wrong day. Can you look?"),
    ("assistant", "Let me run the tests first."),
    ("call", "Bash", "npm test"),
    ("result", "FAIL src/format.test.js\n  x midnight event\nTests: 1 failed, 11 passed, 12 total"),
    ("assistant", "Let me read the formatter."),
    ("call", "Read", "/home/dev/cal/src/format.js"),
    ("result", "export function day(row) {\n  const d = new Date(row.at);\n  return d;\n}"),
    ("assistant", JS_CAUSE),
    ("edit", "Edit", "/home/dev/cal/src/format.js", f"export function day(row) {{\n  {JS_OLD}",
     f"export function day(row) {{\n  {JS_NEW}"),
    ("result", "The file /home/dev/cal/src/format.js has been updated successfully."),
    ("call", "Bash", "npm test"),
    ("result", "Tests: 12 passed, 12 total"),
]


def _run(cli, tmp_path: Path, write) -> list[dict]:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    write(folder)
    assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
    res = cli("extract")
    assert res.exit_code == 0, res.stderr
    return nothing_invented(cli)


def _fixes(mems: list[dict]) -> list[str]:
    return [m["text"] for m in mems if "fix" in m["tags"] and m["status"] == "active"]


def test_the_cause_said_before_an_edit_that_held_is_one_fix_memory(cli, tmp_path: Path) -> None:
    mems = _run(cli, tmp_path, lambda d: X.claude_code(
        d / "s1.jsonl", "aaaa1111-0000-4000-8000-000000000001", "/home/dev/cal", JS))
    assert _fixes(mems) == [f"{JS_CAUSE} Fixed in `cal/src/format.js`: `{JS_OLD}` → `{JS_NEW}`"]
    # the cause is not a second memory beside its fix
    assert [m["text"] for m in mems if m["status"] == "active" and JS_CAUSE in m["text"]] == \
        _fixes(mems)
    assert cli("extract").exit_code == 0  # a re-run adds nothing
    assert len(cli("list", "--all-projects", "--limit", "0", "--json").records) == \
        len([m for m in mems if m["status"] == "active"])


@pytest.mark.parametrize("turns, why", [
    (JS[:-2], "nothing checked or committed after the edit"),
    ([*JS[:7], ("assistant", "Now I'll update the formatter."), *JS[8:]], "narration only"),
    ([*JS[:9], ("error", "<tool_use_error>String to replace not found in file.</tool_use_error>"), *JS[10:]],
     "the edit failed"),
])
def test_no_fix_without_a_stated_problem_or_an_edit_that_held(cli, tmp_path: Path, turns,
                                                               why: str) -> None:
    mems = _run(cli, tmp_path, lambda d: X.claude_code(
        d / "s1.jsonl", "aaaa1111-0000-4000-8000-000000000002", "/home/dev/cal", turns))
    assert _fixes(mems) == [], why


GO_PROBLEM = ("The build fails with a type error at line 12: `fmt.Printf(\"%d\", name)` passes "
              "a string to a number verb.")
GO = [
    ("user", "go vet is failing on main, please fix it"),
    ("call", "run_shell_command", "go vet ./..."),
    ("result", "./cmd/main.go:12:2: fmt.Printf format %d has arg name of wrong type string"),
    ("assistant", GO_PROBLEM),
    ("assistant", "Let me open it."),
    ("call", "read_file", "/home/dev/svc/cmd/main.go"),
    ("result", "package main\n..."),
    ("edit", "replace", "/home/dev/svc/cmd/main.go", '\tfmt.Printf("%d", name)\n',
     '\tfmt.Printf("%s", name)\n'),
    ("result", "Successfully modified file: /home/dev/svc/cmd/main.go (1 replacements)."),
    ("call", "run_shell_command", "go vet ./... && go test ./..."),
    ("result", "ok  \texample.com/svc/cmd\t0.012s"),
]


def test_gemini_an_edit_that_removes_the_quoted_line_fixes_that_problem(cli, tmp_path) -> None:
    mems = _run(cli, tmp_path, lambda d: X.gemini(
        d / "session-2026-04-07T09-00-go.json", "bbbb2222-0000-4000-8000-000000000001", GO))
    (fix,) = _fixes(mems)
    assert fix.startswith(GO_PROBLEM[:-1]) and fix.endswith(
        'Fixed in `svc/cmd/main.go`: `fmt.Printf("%s", name)`')  # the old line: quoted before


GO_CAUSE = ("The worker drops jobs because `ack` is called before `handle` returns, so a crash "
            "loses the message.")
CODEX = [
    ("user", "jobs vanish when the worker crashes"),
    ("call", "exec_command", "sed -n 1,80p internal/worker/run.go"),
    ("result", "func run(msg *nats.Msg) {\n\tmsg.Ack()\n\thandle(msg)\n}"),
    ("assistant", GO_CAUSE),
    ("patch", ("*** Begin Patch\n*** Update File: internal/worker/run.go\n@@\n func run(msg "
               "*nats.Msg) {\n-\tmsg.Ack()\n \thandle(msg)\n"
               "+\tif err := handle(msg); err == nil {\n+\t\tmsg.Ack()\n+\t}\n }\n"
               "*** End Patch")),
    ("call", "exec_command", "go test ./internal/worker/..."),
    ("result", "ok  \texample.com/svc/internal/worker\t0.02s"),
]


def test_codex_a_patch_is_an_edit_too(cli, tmp_path: Path) -> None:
    mems = _run(cli, tmp_path, lambda d: X.codex(
        d / "rollout-2026-04-07T09-00-00-019e2b7c-0a41-7d55-8e21-5c3f9a0b1d99.jsonl",
        "019e2b7c-0a41-7d55-8e21-5c3f9a0b1d99", "/home/dev/svc", CODEX))
    assert _fixes(mems) == [(f"{GO_CAUSE} Fixed in `internal/worker/run.go`: "
                            "`if err := handle(msg); err == nil {`")]


PY_CAUSE = "The refund test hangs because the `db_session` fixture never closes the pool."
PY_PART1 = [
    ("user", "tests/test_refunds.py hangs forever"),
    ("call", "Bash", "pytest -q tests/test_refunds.py -x --timeout 5"),
    ("result", "FAILED tests/test_refunds.py::test_partial_refund - Timeout\n1 failed, 4 passed"),
    ("assistant", PY_CAUSE),
]
PY_PART2 = [
    ("assistant", "Let me look at the fixture."),
    ("call", "Read", "/home/dev/ledger/tests/conftest.py"),
    ("result", "def db_session():\n    yield Session()\n"),
    ("edit", "Edit", "/home/dev/ledger/tests/conftest.py", "    yield Session()\n",
     "    yield Session()\n    engine.dispose()\n"),
    ("result", "The file /home/dev/ledger/tests/conftest.py has been updated successfully."),
    ("call", "Bash", "git commit -am 'tests: close the pool after each test'"),
    ("result", "[main 1a2b3c4] tests: close the pool after each test\n 1 file changed"),
]


def test_a_later_run_marks_the_problem_done_and_undo_restores_it(cli, tmp_path: Path) -> None:
    session = "cccc3333-0000-4000-8000-000000000001"
    path = tmp_path / "in" / "s.jsonl"
    mems = _run(cli, tmp_path, lambda d: X.claude_code(d / "s.jsonl", session, "/home/dev/ledger",
                                                       PY_PART1))
    # the person's report, then the cause (`hippo.extract.rules.report`)
    (cause,) = [m for m in mems if m["text"] == f"tests/test_refunds.py hangs forever: {PY_CAUSE}"]
    X.claude_code(path, session, "/home/dev/ledger", [*PY_PART1, *PY_PART2])
    assert cli("ingest", str(path.parent), "--idle-minutes", "0").exit_code == 0
    res = cli("extract", "--json")
    assert res.exit_code == 0, res.stderr
    run_id = next(r["run_id"] for r in res.records if r.get("event") == "summary")
    shown = cli("show", str(cause["id"]), "--json").records[0]
    (fix,) = _fixes(nothing_invented(cli))
    assert fix == (f"{PY_CAUSE} Fixed in `ledger/tests/conftest.py`: `engine.dispose()`")
    assert shown["status"] == "done" and shown["superseded_by"] is not None
    assert cli("undo", run_id).exit_code == 0
    assert cli("show", str(cause["id"]), "--json").records[0]["status"] == "active"


def test_a_fix_names_lines_that_show_something_not_one_name_of_a_list() -> None:
    """`TranscriptRenderer,` (an item of an alias list) or a bracket shows nothing of the
    change: with nothing else changed there is no fix line to name."""
    from hippo.extract.conversation import Call
    from hippo.extract.fixes import _text

    def edit(diff: str) -> Call:
        return Call("Edit", "lib/app/live.ex", (1,), "ok", (2,), diff)

    problem = "The compile error: the renderer alias is missing."
    assert _text(problem, edit("- TranscriptRenderer,\n+ Renderer,\n+ }")) is None
    got = _text(problem, edit("- TranscriptRenderer,\n+ alias App.TranscriptRenderer"))
    assert got == (f"{problem} Fixed in `lib/app/live.ex`: `alias App.TranscriptRenderer`")


@pytest.mark.parametrize("said, problem", [
    ("TranscriptSelection is not referenced from any template anymore.", False),
    ("The old hook isn't used since the merge.", False),
    ("The hook is not registered, so the selection never fires.", True),
    ("`render_row` is not defined in the view.", True),
])
def test_a_finding_of_disuse_is_no_problem_an_edit_fixes(said: str, problem: bool) -> None:
    from hippo.extract.fixes import _problem

    assert _problem(said) is problem
