"""What tool results state: a commit, a test suite's counts, a work tree, a push (each read
from the shape the tool prints), and the newer state superseding the older one."""

from __future__ import annotations

from pathlib import Path

from hippo.extract.conversation import Call
from hippo.extract.evidence import closes, count_claim, runner, states, subject_of

STATUS_DIRTY = """On branch feat-x
Your branch is up to date with 'origin/feat-x'.

Changes not staged for commit:
  (use "git add <file>..." to update what will be committed)
\tmodified:   src/app.py
\tmodified:   tests/test_app.py
"""
STATUS_CLEAN = """On branch feat-x
Your branch is ahead of 'origin/feat-x' by 2 commits.

nothing to commit, working tree clean
"""
PUSH_NEW = """remote:
To github.com:acme/app.git
 * [new branch]      feat-x -> feat-x
branch 'feat-x' set up to track 'origin/feat-x'.
"""


def call(arg: str, result: str | None, n: int = 1) -> Call:
    return Call("Bash", arg, (n,), result, (n + 1,))


def test_a_suite_run_is_its_last_count_line_and_a_file_run_is_its_own_subject() -> None:
    seq = [
        call("cd /w/app && pytest -q 2>&1 | tail -5", "....F\n1 failed, 41 passed in 0.52s\n"),
        call("pytest -q tests/test_app.py", "===== 3 passed in 0.10s =====\n", 3),
        call("pytest -q", "........\n42 passed in 0.61s\n", 5),
        call("mix test", "Finished in 5.3 seconds (2.5s async, 2.7s sync)\n"
             "14 doctests, 87 tests, 0 failures\n", 7),
        call("npx vitest run", " ❯ src/a/b.test.ts (16 tests | 1 failed) 13ms\n"
             " Test Files  1 failed (1)\n      Tests  1 failed | 15 passed (16)\n", 9),
        call("cargo test", "test result: ok. 9 passed; 0 failed; 0 ignored; finished in 0.01s",
             11),
    ]
    got = {s.subject: s.text for s in states(seq)}
    assert got == {
        "`pytest -q tests/test_app.py`": "`pytest -q tests/test_app.py`: 3 passed",
        "`pytest -q`": "`pytest -q`: 42 passed",  # the later run of the same command
        "`mix test`": "`mix test`: 14 doctests, 87 tests, 0 failures",
        "`npx vitest run`": "`npx vitest run`: Tests  1 failed | 15 passed (16)",
        "`cargo test`": "`cargo test`: test result: ok. 9 passed; 0 failed; 0 ignored",
    }
    # what is not a suite's run: a count in a file listing, an argument that is not a shell line
    assert states([call("ls tests", "3 tests/\n"),
                   call('{"session_id":1,"chars":""}', "12 tests | 1 failed")]) == []


def test_a_work_tree_and_a_push_are_states_of_their_branch() -> None:
    seq = [call("pytest -q", "3 passed in 0.1s", 0), call("git status", STATUS_DIRTY),
           call("git push 2>&1", PUSH_NEW, 3), call("git status 2>&1", STATUS_CLEAN, 5)]
    got = {s.subject: s.text for s in states(seq)}
    assert got == {
        # a test run is a state of the branch it ran on (the first git names, if none before)
        "`pytest -q` on feat-x": "`pytest -q` on feat-x: 3 passed",
        "`git push` of feat-x": "`git push` of feat-x: feat-x -> feat-x at github.com:acme/app.git;"
                                " branch 'feat-x' set up to track 'origin/feat-x'",
        "`git status` on feat-x": "`git status` on feat-x: ahead of 'origin/feat-x' by 2 commits;"
                                  " nothing to commit, working tree clean",
    }
    (dirty,) = states([call("git status", STATUS_DIRTY)])
    assert dirty.text.endswith("Changes not staged for commit: src/app.py, tests/test_app.py")
    # a push that failed states nothing
    assert states([call("git push", "[error] Exit code 128\nfatal: no upstream branch")]) == []
    assert subject_of(dirty.text) == "`git status` on feat-x"
    assert subject_of("Use `git status` before committing: it is cheap") is None


def test_a_commit_names_its_hash_and_branch() -> None:
    seq = [call('git commit -m "fix: retry on timeout (app-k2.4)"',
                "[feat-x 05fd186] fix: retry on timeout (app-k2.4)\n 2 files changed")]
    ((stmt, ids, _),) = list(closes(seq))
    assert (stmt.text, ids) == ("Committed 05fd186 on feat-x: fix: retry on timeout (app-k2.4)",
                                ("app-k2.4",))
    assert stmt.evidence == (1, 2)  # the call and what git answered


def test_runner_is_the_command_that_printed_the_result() -> None:
    assert runner("cd /home/u/app && FOO=1 mix test test/a_test.exs 2>&1 | tail -20") == \
        "mix test test/a_test.exs"
    assert runner("sleep 2; cargo test") == "cargo test"
    assert runner("cd /tmp") is None


def test_count_claims_in_prose() -> None:
    assert count_claim("All 49 tests passed, zero credo issues")
    assert count_claim("Progress. 10 of 12 pass now.")
    assert count_claim("41 passed, 1 failed")
    assert not count_claim("The suite has 3 tests for parsing")
    assert not count_claim("Tests live in tests/ and run with pytest")


def test_a_newer_state_supersedes_the_older_one_across_sessions(cli, tmp_path: Path) -> None:
    from tests.extract.excerpts import claude_code

    one = claude_code(tmp_path / "a.jsonl", "11111111-1111-4111-8111-111111111111", "/w/app", [
        ("user", "Run the tests please"),
        ("assistant", "All 40 tests passed on the first run, nothing else to fix here."),
        ("call", "Bash", "pytest -q"),
        ("result", "40 passed in 0.50s"),
        ("call", "Bash", "pytest -q tests/test_io.py"),
        ("result", "5 passed in 0.10s"),
        ("assistant", "Done."),
    ])
    two = claude_code(tmp_path / "b.jsonl", "22222222-2222-4222-8222-222222222222", "/w/app", [
        ("user", "Add the retry tests"),
        ("call", "Bash", "pytest -q"),
        ("result", "1 failed, 42 passed in 0.61s"),
        ("assistant", "Done."),
    ], day="2026-04-08")
    assert cli("ingest", str(one), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    assert cli("ingest", str(two), "--idle-minutes", "0").exit_code == 0
    before = cli("export").stdout
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    mems = {m["text"]: m for m in cli("list", "--all-projects", "--status", "all",
                                      "--json").records}
    new = mems["`pytest -q`: 1 failed, 42 passed"]
    old = mems["`pytest -q`: 40 passed"]
    assert old["superseded_by"] == new["id"] and old["valid_to"] == new["valid_from"]
    # another subject (one file's run) is not the same thing: it stays
    assert mems["`pytest -q tests/test_io.py`: 5 passed"]["superseded_by"] is None
    # the first session's prose claim was already replaced by its own run
    claim = mems["All 40 tests passed on the first run, nothing else to fix here."]
    assert claim["superseded_by"] == old["id"]
    search = cli("search", "--all-projects", "how many tests pass with pytest -q", "--json")
    texts = [x["text"] for x in search.records]
    assert "`pytest -q`: 1 failed, 42 passed" in texts and "`pytest -q`: 40 passed" not in texts
    assert cli("undo", r.records[-1]["run_id"]).exit_code == 0
    assert cli("export").stdout == before


def test_a_commit_answer_pairs_with_the_commit_when_a_call_beside_it_printed_nothing() -> None:
    from hippo.extract.blocks import Message
    from hippo.extract.conversation import calls

    msgs = [Message("assistant", "Bash: git add src/a.py", [1], tool_call=True),
            Message("assistant", 'Bash: git commit -m "feat: retry the upload (app-1.2)"', [2], tool_call=True),
            # git add's empty answer was dropped by the reader: only the commit's is here
            Message("tool", "[main abc1234] feat: retry the upload (app-1.2)", [3])]
    add, commit = calls(msgs)
    assert add.result is None and commit.result == "[main abc1234] feat: retry the upload (app-1.2)"
    ((stmt, _, _),) = list(closes([add, commit]))
    assert stmt.text == "Committed abc1234 on main: feat: retry the upload (app-1.2)"


def test_a_problem_in_a_file_is_done_once_the_file_is_edited_then_committed(
        cli, tmp_path: Path) -> None:
    from tests.extract.excerpts import claude_code

    path = claude_code(tmp_path / "s.jsonl", "33333333-3333-4333-8333-333333333333", "/w/app", [
        ("user", "Fix the build please"),
        ("assistant", "The build fails: `src/render.py:171: TypeError` in `render_row`."),
        ("call", "Edit", "/w/app/src/render.py"),
        ("result", "The file /w/app/src/render.py has been updated successfully."),
        ("call", "Bash", 'git commit -am "fix: render rows again (app-3.1)"'),
        ("result", "[main 9c1d2e3] fix: render rows again (app-3.1)\n 1 file changed"),
        ("assistant", "Done."),
    ])
    assert cli("ingest", str(path), "--idle-minutes", "0").exit_code == 0
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    mems = {m["text"]: m for m in cli("list", "--all-projects", "--status", "all",
                                      "--json").records}
    problem = next(m for t, m in mems.items() if t.startswith("The build fails"))
    commit = mems["Committed 9c1d2e3 on main: fix: render rows again (app-3.1)"]
    assert (problem["status"], problem["superseded_by"]) == ("done", commit["id"])
    # a problem in a file that was not edited stays open, and one in two files of which
    # only one was edited
    path2 = claude_code(tmp_path / "t.jsonl", "44444444-4444-4444-8444-444444444444", "/w/app", [
        ("user", "And the parser?"),
        ("assistant", "The parser still fails: `src/parse.py:12: SyntaxError` in the header."),
        ("user", "What else?"),
        ("assistant", ("The table view fails: `src/render.py:40: IndexError` since "
                      "`src/table.py` passes an empty list.")),
        ("call", "Edit", "/w/app/src/render.py"),
        ("result", "The file /w/app/src/render.py has been updated successfully."),
        ("call", "Bash", 'git commit -am "fix: render padding for wide rows (app-3.2)"'),
        ("result", "[main 1a2b3c4] fix: render padding for wide rows (app-3.2)"),
    ], day="2026-04-08")
    assert cli("ingest", str(path2), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    active = [m["text"] for m in cli("list", "--all-projects", "--json").records]
    assert any(t.startswith("The parser still fails") for t in active)
    assert any(t.startswith("The table view fails") for t in active)


def test_a_test_runs_counts_pair_with_the_test_command_beside_a_silent_build() -> None:
    from hippo.extract.blocks import Message
    from hippo.extract.conversation import calls

    msgs = [Message("assistant", "Bash: make build", [1], tool_call=True),
            Message("assistant", "Bash: make test", [2], tool_call=True),
            Message("tool", "ok\n12 tests, 0 failures", [3])]  # the build printed nothing
    build, test = calls(msgs)
    assert build.result is None and test.result is not None
    assert [s.text for s in states([build, test])] == ["`make test`: 12 tests, 0 failures"]
    # counts a command that runs no tests printed are not its state
    assert states([call("make build", "12 tests, 0 failures")]) == []


def test_states_of_other_numbers_are_not_repeats(cli, tmp_path: Path) -> None:
    from tests.extract.excerpts import claude_code

    runs = []
    for n, (branch, count) in enumerate((("feat-a", 87), ("feat-b", 127))):
        runs.append(claude_code(
            tmp_path / f"{n}.jsonl", f"5555555{n}-5555-4555-8555-555555555555", "/w/app", [
                ("user", "Run the suite"),
                ("call", "Bash", "git status"),
                ("result", f"On branch {branch}\nnothing to commit, working tree clean"),
                ("call", "Bash", "pytest -q"), ("result", f"{count} passed in 1.20s")],
            day=f"2026-04-0{n + 7}"))
    assert cli("ingest", *map(str, runs), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    texts = {m["text"] for m in cli("list", "--all-projects", "--json").records}
    assert {"`pytest -q` on feat-a: 87 passed", "`pytest -q` on feat-b: 127 passed"} <= texts


def test_only_a_whole_suite_run_replaces_what_was_said_of_how_many_pass() -> None:
    from hippo.extract.evidence import whole_suite

    assert whole_suite("`mix test` on main: 14 doctests, 410 tests, 0 failures")
    assert whole_suite("`go test ./...`: ok")  is False  # no count: not a suite's state
    assert whole_suite("`go test ./...`: 12 passed")
    assert not whole_suite("`mix test test/a_test.exs` on main: 72 tests, 0 failures")
    assert not whole_suite("`pytest -q tests/test_io.py`: 5 passed")
