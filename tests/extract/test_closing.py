"""A task shown done: which ids a close or a commit names, and which memories that retires."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.extract.closing import ids_in_commit, names, retired
from hippo.extract.conversation import Call, commit_message
from hippo.extract.evidence import closes


@pytest.mark.parametrize("message, ids", [
    ("feat: close review session by closing all open annotations (proj-abc.6)", ["proj-abc.6"]),
    ("feat: unified transcript view (proj-dov)", ["proj-dov"]),
    ("fix: retry uploads\n\nCloses #12 and fixes #13", ["#12", "#13"]),
    ("PAY-42: charge in cents", ["PAY-42"]),
    ("feat: add project-level review page for the dashboard-app", []),  # words, not ids
    ("feat: add project-level review page for ongoing annot…[truncated 389 chars]", []),
])
def test_ids_a_commit_names(message: str, ids: list[str]) -> None:
    assert ids_in_commit(message) == ids


@pytest.mark.parametrize("text, task, named", [
    ("Proj-abc.6 (in_progress): close the review session", "proj-abc.6", True),
    ("Complete abc.6 by adding the tests", "proj-abc.6", True),  # the id past its prefix
    ("Proj-abc.61 (open): export the review", "proj-abc.6", False),
    ("Proj-abc.6.1 (open): a sub-task", "proj-abc.6", False),
    ("Proj-abc (epic): reviews", "proj-abc.6", False),
    ("Proj-abc.6 (open)", "proj-abc", False),  # an epic's close is not its tasks'
    ("Fix #12 before the release", "#12", True),
    ("Fix #123 before the release", "#12", False),
])
def test_an_id_is_named_as_a_whole_token(text: str, task: str, named: bool) -> None:
    assert names(text, task) is named


def _row(i: int, text: str, *, type_: str = "task", author: str = "machine",
         status: str = "active", tags: tuple[str, ...] = ()) -> dict:
    return {"id": i, "text": text, "type": type_, "author": author, "status": status,
            "tags": list(tags)}


def test_only_earlier_pending_machine_memories_that_name_the_id_retire() -> None:
    rows = [
        _row(1, "Proj-abc.6 (in_progress): close the review session"),
        _row(2, "Proj-abc.7 (open): launch the review conversation"),  # another task
        _row(3, "Proj-abc.6 needs tests", author="human"),  # a person's: never changed
        _row(4, "`lib/review.ex`: the close handler (proj-abc.6)", type_="fact"),  # no task
        _row(5, "Proj-abc.6 status: in progress", type_="fact", tags=("pending",)),
        _row(9, "Proj-abc.6 (open): written after the close"),
    ]
    assert retired(rows, ["proj-abc.6"], before=8) == [1, 5]


def test_a_tracker_close_and_a_commit_naming_a_task_are_what_closes_it(tmp_path: Path) -> None:
    seq = [
        Call("Bash", 'bd close proj-abc.6 --reason="close handler with tests"', (1,), "✓ Closed",
             (2,)),
        Call("Bash", "git commit -m \"$(cat <<'EOF'\nfeat: launch review (proj-abc.7)\n\nbody\n"
                     "EOF\n)\"", (3,), "[main 1a2b3c] feat: launch review", (4,)),
        Call("Bash", 'gh issue close 12 -c "fixed in 1a2b3c by retrying"', (5,), "[error] Exit code 1",
             (6,)),  # it failed: nothing closed
        Call("Bash", 'git commit -m "wip"', (7,), "[main 4d5e6f] wip", (8,)),  # names nothing
    ]
    got = [(s.text, ids) for s, ids, _ in closes(seq)]
    assert got == [("Closed proj-abc.6: close handler with tests", ("proj-abc.6",)),
                   ("Committed 1a2b3c on main: feat: launch review (proj-abc.7)", ("proj-abc.7",))]
    assert commit_message('git commit -m "fix: x (#3)"') == "fix: x (#3)"


def test_a_session_that_closes_its_task_retires_the_task_and_undo_restores_it(
        cli, tmp_path: Path) -> None:
    from tests.extract.excerpts import claude_code

    path = claude_code(tmp_path / "s.jsonl", "9f0c3a52-1111-4222-8333-444455556666", "/w/api", [
        ("user", "TODO: finish api-x1.3 with tests for the retry loop"),
        ("user", "TODO: look at api-x1.31 after that"),
        ("assistant", "The retry loop gives up after 3 attempts because `MAX_TRIES` is 3."),
        ("call", "Bash", 'bd close api-x1.3 --reason="retry loop covered by three tests"'),
        ("result", "✓ Closed api-x1.3"),
        ("assistant", "Closed."),
    ])
    assert cli("ingest", str(path), "--idle-minutes", "0").exit_code == 0
    before = cli("export").stdout
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    done = [e for e in r.records if e.get("action") == "done"]
    mems = {m["text"]: m for m in cli("list", "--all-projects", "--status", "all",
                                      "--json").records}
    task = mems["TODO: finish api-x1.3 with tests for the retry loop"]
    close = mems["Closed api-x1.3: retry loop covered by three tests"]
    assert [(e["id"], e["by"]) for e in done] == [(task["id"], close["id"])]
    assert task["status"] == "done" and task["superseded_by"] == close["id"]
    assert mems["TODO: look at api-x1.31 after that"]["status"] == "active"  # a near-miss
    assert cli("undo", r.records[-1]["run_id"]).exit_code == 0
    assert cli("export").stdout == before


def _gated(checks: list[str], n: int = 2) -> list[tuple[str, ...]]:
    turns: list[tuple[str, ...]] = [("user", "Ship the two fixes, one commit each.")]
    for i in range(n):
        turns += [("call", "Edit", f"src/app{i}.py"), ("result", "ok")]
        for check in checks:
            turns += [("call", "Bash", check), ("result", "all good")]
        turns += [("call", "Bash", f'git commit -m "fix {i}"'), ("result", f"[main a{i}] fix {i}")]
    return turns


FIRST, SECOND = "9f0c3a52-1111-4222-8333-000000000001", "9f0c3a52-1111-4222-8333-000000000002"


def _gated_session(cli, tmp_path: Path, session: str, checks: list[str],
                   day: str | None = None) -> None:
    """Write a session of the api project that runs `checks` before each of two commits,
    and ingest it (extract is the caller's)."""
    from tests.extract.excerpts import claude_code

    kw = {"day": day} if day else {}
    path = claude_code(tmp_path / f"{session[-1]}.jsonl", session, "/w/api", _gated(checks), **kw)
    assert cli("ingest", str(path), "--idle-minutes", "0").exit_code == 0


def test_the_newest_gate_replaces_the_older_and_a_persons_gate_stays(cli, tmp_path: Path) -> None:
    human = "Before committing, run: `make check`"
    assert cli("add", human, "--type", "procedure", "--tag", "gate",
               "--project", "api").exit_code == 0
    _gated_session(cli, tmp_path, FIRST, ["ruff check", "pytest -q"])
    assert cli("extract").exit_code == 0
    _gated_session(cli, tmp_path, SECOND, ["ruff check", "mypy src", "pytest -q"])
    before = cli("export").stdout
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    mems = {m["text"]: m for m in cli("list", "--all-projects", "--json").records}
    old = mems["Before committing, run: `ruff check`, `pytest -q`"]
    new = mems["Before committing, run: `ruff check`, `mypy src`, `pytest -q`"]
    assert old["superseded_by"] == new["id"] and old["valid_to"] is not None
    assert mems[human]["superseded_by"] is None  # a person's gate is never changed
    assert [e["id"] for e in r.records if e.get("action") == "superseded"] == [old["id"]]
    assert r.records[-1]["superseded"] == 1
    found = [x["text"] for x in cli("search", "--project", "api", "--json",
                                    "before committing run").records]
    assert old["text"] not in found and new["text"] in found
    assert cli("undo", r.records[-1]["run_id"]).exit_code == 0
    assert cli("export").stdout == before


def test_the_newest_gate_keeps_what_an_earlier_session_checked(cli, tmp_path: Path) -> None:
    """One session ran the strict type check, the next the linter of the front end: the
    project's gate is both, the stricter form of a check kept; undo restores the old one."""
    _gated_session(cli, tmp_path, FIRST, ["ruff check", "mypy --strict", "pytest -q"])
    assert cli("extract").exit_code == 0
    _gated_session(cli, tmp_path, SECOND, ["ruff check", "mypy", "npm run lint"], day="2026-04-09")
    before = cli("export").stdout
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    current = [m for m in cli("list", "--all-projects", "--json").records
               if m["superseded_by"] is None and "gate" in m["tags"]]
    assert [m["text"] for m in current] == [
        "Before committing, run: `ruff check`, `mypy --strict`, `npm run lint`, `pytest -q`"]
    # it cites both sessions (every check stays shown), and holds from the second
    assert sorted(current[0]["source"]["session"]) == [FIRST, SECOND]
    older = [m for m in cli("list", "--all-projects", "--json").records
             if m["superseded_by"] == current[0]["id"]]
    assert len(older) == 1 and current[0]["valid_from"] > older[0]["valid_from"]
    assert r.records[-1]["superseded"] == 1
    assert cli("undo", r.records[-1]["run_id"]).exit_code == 0
    assert cli("export").stdout == before


def test_an_old_session_extracted_late_does_not_replace_the_newer_gate(cli, tmp_path) -> None:
    _gated_session(cli, tmp_path, SECOND, ["ruff check", "mypy src", "pytest -q"], day="2026-04-09")
    assert cli("extract").exit_code == 0
    _gated_session(cli, tmp_path, FIRST, ["ruff check", "pytest -q"])
    assert cli("extract").exit_code == 0
    mems = {m["text"]: m for m in cli("list", "--all-projects", "--json").records}
    new = mems["Before committing, run: `ruff check`, `mypy src`, `pytest -q`"]
    old = mems["Before committing, run: `ruff check`, `pytest -q`"]
    assert new["superseded_by"] is None and old["superseded_by"] == new["id"]


def test_a_gate_extracted_late_gives_the_newer_gate_the_checks_it_lacks(cli, tmp_path) -> None:
    _gated_session(cli, tmp_path, SECOND, ["ruff check", "pytest -q"], day="2026-04-09")
    assert cli("extract").exit_code == 0
    _gated_session(cli, tmp_path, FIRST, ["ruff check", "bandit -q", "pytest -q"])
    before = cli("export").stdout
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    gates = [m for m in cli("list", "--all-projects", "--json").records if "gate" in m["tags"]]
    current = [m for m in gates if m["superseded_by"] is None]
    assert [m["text"] for m in current] == [
        "Before committing, run: `ruff check`, `pytest -q`, `bandit -q`"]
    assert current[0]["valid_from"].startswith("2026-04-09")  # still the newer session's
    assert sorted(current[0]["source"]["session"]) == [FIRST, SECOND]
    assert [e["action"] for e in r.records if e.get("action") in ("merged", "superseded")] == [
        "merged", "superseded"]
    found = cli("search", "--project", "api", "--json", "bandit before committing").records
    assert found and found[0]["id"] == current[0]["id"]
    assert cli("undo", r.records[-1]["run_id"]).exit_code == 0
    assert cli("export").stdout == before


P_NEST = ("`lib/app/view.ex`: Credo error at line 152: nested too deep in `compute_groups` "
          "case expression")
P_GUARD = "CURRENT: Cannot invoke Access.get/2 inside guard in `render_row`. Need to restructure."


@pytest.mark.parametrize("problem, evidence, solved_", [
    (P_NEST, "Fixed the nesting in `compute_groups` by extracting a helper.", True),
    (P_GUARD, "Fixed the nesting in `compute_groups` by extracting a helper.", False),
    (P_GUARD, "proj-a.3 closed: Fixed guard clause in render_row and the credo nesting.", True),
    (P_GUARD, "The guard clause in render_row is documented in the README.", False),  # no fix
    ("`render_row` renders one line of the transcript", "Fixed `render_row` padding.", False),
    ("Fixed: Access.get in a guard; now pattern-matches", "Fixed the guard in render_row.",
     False),  # it was never open
    (P_NEST, "Fixed the error in the parser.", False),  # shares only what every problem says
])
def test_a_problem_is_solved_only_by_a_fix_that_names_it(problem: str, evidence: str,
                                                          solved_: bool) -> None:
    from hippo.extract.closing import solves

    assert solves(problem, evidence) is solved_


def test_only_this_sessions_open_problems_are_solved() -> None:
    from hippo.extract.closing import solved

    rows = [
        {**_row(1, P_NEST, type_="fact"), "source": {"session": "s1"}},
        {**_row(2, P_NEST, type_="fact"), "source": {"session": "s0"}},  # another session
        {**_row(3, P_NEST, type_="fact", author="human"), "source": {"session": "s1"}},
    ]
    assert solved(rows, "Fixed the nesting in `compute_groups`.", "s1", before=9) == [1]


def test_the_files_a_problem_names() -> None:
    from hippo.extract.closing import files_named

    assert files_named("`lib/app/view.ex`: Compile error: Access.get can't be in a guard") == \
        {"view.ex"}
    assert files_named("`subagent_live.ex:25:guard_fail` and src/deep/file.weird") == \
        {"subagent_live.ex", "file.weird"}
    assert files_named("Use os.path and e.g. version 1.2.3") == set()


def test_a_task_is_about_the_first_id_it_names() -> None:
    from hippo.extract.closing import about

    blocked = "Spotter-fum.4 (OPEN, was blocked by fum.2 and fum.3): add regression coverage"
    assert about(blocked, "spotter-fum.4")
    assert not about(blocked, "spotter-fum.2")  # closing a blocker does not close the task
    assert about("Complete gqc.6 with tests, then proceed to gqc.7", "spotter-gqc.6")
    assert not about("TODO: look at api-x1.31 after that", "api-x1.3")
    assert about("Fix #12 before #13", "#12") and not about("Fix #12 before #13", "#13")


def test_as_of_before_a_later_sessions_close_the_task_is_open(cli, tmp_path: Path) -> None:
    from tests.extract.excerpts import claude_code

    one = claude_code(tmp_path / "a.jsonl", "9f0c3a52-1111-4222-8333-444455556666", "/w/api", [
        ("user", "TODO: finish api-x1.3 with tests for the retry loop"),
        ("assistant", "Noted: api-x1.3 stays open until the retry loop has its tests.")])
    two = claude_code(tmp_path / "b.jsonl", "9f0c3a52-2222-4222-8333-444455556666", "/w/api", [
        ("call", "Bash", 'bd close api-x1.3 --reason="retry loop covered by three tests"'),
        ("result", "✓ Closed api-x1.3"), ("assistant", "Closed.")], day="2026-04-08")
    for path in (one, two):
        assert cli("ingest", str(path), "--idle-minutes", "0").exit_code == 0
        assert cli("extract").exit_code == 0
    task = "TODO: finish api-x1.3 with tests for the retry loop"
    close = "Closed api-x1.3: retry loop covered by three tests"
    then = [x["text"] for x in cli("search", "--all-projects", "retry loop tests", "--as-of",
                                   "2026-04-07T23:00:00Z", "--json").records]
    assert task in then and close not in then  # a done memory answers what was held then
    now = [x["text"] for x in cli("search", "--all-projects", "retry loop tests",
                                  "--json").records]
    assert task not in now and close in now


@pytest.mark.parametrize("text, open_", [
    ("Fix the two errors in `transcript_components.ex`", True),  # a task to fix is open
    ("Fix the flaky test failures in `test_io.py`", True),
    ("Fix typo in README", False),  # no problem named
    ("Fix the credo nesting issue. Fixed in `view.ex`: `a` → `b`", False),  # shown solved
    ("`pytest -q` failed with \"X\"; it passed after running `pip install y`", False),
])
def test_a_task_to_fix_errors_is_an_open_problem_and_a_passing_install_solves(
        text: str, open_: bool) -> None:
    from hippo.extract.closing import SOLVED, is_problem

    assert is_problem(text) is open_
    # a fix by an install shows the problems it names solved, as a fix by an edit does
    assert SOLVED.search("`pytest -q` failed with \"X\"; it passed after running `pip install y`")


def test_a_task_to_fix_a_files_errors_is_done_once_the_file_is_edited_then_committed() -> None:
    from hippo.extract.closing import fixed

    rows = [{**_row(1, "Fix the two errors in `lib/app/view.ex`", type_="task"),
             "source": {"session": "s1", "chunks": [3]}}]
    assert fixed(rows, [("view.ex", 5)], "s1", before=9) == [1]
    assert fixed(rows, [("view.ex", 2)], "s1", before=9) == []  # edited before it was said
