"""A failed command and what got it past its error (`hippo.extract.failures`)."""

from __future__ import annotations

from hippo.extract.conversation import error_line
from tests.extract.test_summary import conv, extracted


def fixes(found: dict[str, str]) -> list[str]:
    return sorted(t for t, kind in found.items() if " failed with " in t and kind == "insight")


def test_each_error_an_edit_got_past_is_a_fix_python() -> None:
    found = extracted(conv(
        ("user", "Add retries to the uploader."),
        ("call", "Bash: pytest -q"),
        ("tool", ("[error] Exit code 1\nTraceback (most recent call last):\n  File \"t.py\", "
                  "line 1, in <module>\nModuleNotFoundError: No module named 'httpx'")),
        ("call", "Edit: /w/alpha/requirements.txt\n+ httpx==0.27"),
        ("tool", "The file /w/alpha/requirements.txt has been updated."),
        ("call", "Bash: pytest -q"),
        ("tool", "[error] Exit code 1\nFAILED tests/test_up.py::test_retry - AssertionError: 2 != 3"),
        ("call", "Edit: /w/alpha/src/upload.py\n- tries = 2\n+ tries = 3"),
        ("tool", "The file /w/alpha/src/upload.py has been updated."),
        ("call", "Bash: pytest -q"),
        ("tool", "12 passed in 0.4s"),
    ))
    assert fixes(found) == [
        ('`pytest -q` failed with "FAILED tests/test_up.py::test_retry - AssertionError: 2 != '
         '3"; it passed after editing `alpha/src/upload.py`'),
        ("`pytest -q` failed with \"ModuleNotFoundError: No module named 'httpx'\"; editing "
         "`w/alpha/requirements.txt` (`httpx==0.27`) fixed it"),
    ]


def test_the_same_error_again_was_not_fixed_by_the_edit_before_it_go() -> None:
    panic = "[error] Exit code 2\npanic: runtime error: index out of range [3] with length 3"
    found = extracted(conv(
        ("call", "Bash: go test ./..."),
        ("tool", panic),
        ("call", "Edit: /w/beta/ring.go\n- return r.buf[i]\n+ return r.buf[i-1]"),
        ("tool", "The file /w/beta/ring.go has been updated."),
        ("call", "Bash: go test ./..."),
        ("tool", panic),
        ("call", "Edit: /w/beta/ring.go\n- for i := 0; i <= n; i++ {\n+ for i := 0; i < n; i++ {"),
        ("tool", "The file /w/beta/ring.go has been updated."),
        ("call", "Bash: go test ./..."),
        ("tool", "ok  \tbeta\t0.01s"),
    ))
    assert fixes(found) == [
        ('`go test` failed with "panic: runtime error: index out of range [3] with '
         'length 3"; it passed after editing `w/beta/ring.go`'),
    ]


def test_errors_that_never_pass_are_no_fix_javascript() -> None:
    found = extracted(conv(
        ("call", "Bash: npx vitest run"),
        ("tool", "Process exited with code 1\nTypeError: fmt is not a function"),
        ("call", "Edit: /w/gamma/src/date.js\n+ import { fmt } from './fmt.js'"),
        ("tool", "The file /w/gamma/src/date.js has been updated."),
        ("call", "Bash: npx vitest run"),
        ("tool", "Process exited with code 1\nReferenceError: window is not defined"),
    ))
    assert fixes(found) == []


def test_the_error_line_names_the_error_class_first() -> None:
    assert error_line("[error] Exit code 2\nCompiling 41 files (.ex)\n\n  1) test mount (X)\n"
                      "     ** (RuntimeError) Phoenix LiveView requires lazy_html as a test "
                      "dependency.") == ("** (RuntimeError) Phoenix LiveView requires lazy_html "
                                         "as a test dependency.")
    assert error_line("Traceback (most recent call last):\n  File \"a.py\", line 3\n"
                      "KeyError: 'id'") == "KeyError: 'id'"
    assert error_line("Traceback (most recent call last):\n  File \"a.py\", line 3") is None
    assert error_line("[error] Exit code 1\nImportError while importing test module\n"
                      "ModuleNotFoundError: No module named 'requests'") == (
        "ModuleNotFoundError: No module named 'requests'")
    assert error_line("error: no :secret_key…[truncated 9547 chars]") == "error: no :secret_key …"
    assert error_line("Getting extensions in current project...\nRunning setup") is None


def retried(found: dict[str, str]) -> list[str]:
    return sorted(t for t, kind in found.items() if t.endswith(" passed") and kind == "insight")


IGNORED = ("[error] Exit code 1\nThe following paths are ignored by one of your .gitignore "
           "files:\ndist/assets\nhint: Use -f if you really want to add them.")


def test_a_flag_that_got_one_command_of_a_line_past_its_failure_python() -> None:
    found = extracted(conv(
        ("call", "Bash: git add src/app.py dist/assets/app.css && git commit -m 'theme'"),
        ("tool", IGNORED),
        ("call", "Grep: dist/assets"),
        ("tool", ".gitignore:3:dist/assets/"),
        ("call", "Bash: git add -f dist/assets/app.css && git add src/app.py && git commit -m 'x'"),
        ("tool", "[main 1a2b3c4] x"),
    ))
    assert retried(found) == [
        ('`git add dist/assets/app.css …` failed with "The following paths are ignored by one '
        'of your .gitignore files: dist/assets"; `git add -f dist/assets/app.css` passed')]


def test_a_flag_that_got_a_command_past_its_error_javascript() -> None:
    found = extracted(conv(
        ("call", "Bash: cd web && npm install react-charts 2>&1 | tail -3"),
        ("tool", ("[error] Exit code 1\nnpm error code ERESOLVE\nnpm error ERESOLVE unable to "
                 "resolve dependency tree")),
        ("call", "Bash: cd web && npm install --legacy-peer-deps react-charts 2>&1 | tail -3"),
        ("tool", "added 12 packages in 3s"),
    ))
    assert retried(found) == [
        ('`npm install react-charts` failed with "npm error code ERESOLVE"; `npm install '
        '--legacy-peer-deps react-charts` passed')]


def test_git_says_fatal_and_the_rerun_that_passed_is_kept_go() -> None:
    found = extracted(conv(
        ("call", "Bash: go test ./... && git push"),
        ("tool", "ok  \tbeta\t0.01s"),
        ("call", "Bash: git push 2>&1"),
        ("tool", ("[error] Exit code 128\nfatal: The current branch feat-ring has no upstream "
                 "branch.")),
        ("call", "Bash: git push -u origin feat-ring 2>&1"),
        ("tool", "branch 'feat-ring' set up to track 'origin/feat-ring'."),
    ))
    assert retried(found) == [
        ('`git push` failed with "fatal: The current branch feat-ring has no upstream branch."; '
        '`git push -u origin feat-ring` passed')]


def test_no_retry_when_another_command_of_the_line_failed_or_a_file_was_edited() -> None:
    other = extracted(conv(  # the tests failed, not `git add`: `-A` fixed nothing
        ("call", "Bash: git add src/ring.go && go test ./..."),
        ("tool", "[error] Exit code 1\n--- FAIL: TestRing (0.00s)"),
        ("call", "Bash: git add -A src/ring.go"),
        ("tool", ""),
        ("call", "Bash: git status --short"),
        ("tool", "M  src/ring.go"),
    ))
    edited = extracted(conv(  # an edit between: the flag is not all that changed
        ("call", "Bash: npm install react-charts"),
        ("tool", "[error] Exit code 1\nnpm error code ERESOLVE"),
        ("call", "Edit: /w/web/package.json\n- \"react\": \"17\"\n+ \"react\": \"18\""),
        ("tool", "The file /w/web/package.json has been updated."),
        ("call", "Bash: npm install --legacy-peer-deps react-charts"),
        ("tool", "added 12 packages in 3s"),
    ))
    assert retried(other) == [] and retried(edited) == []


def test_what_a_failure_says_when_it_names_no_error() -> None:
    from hippo.extract.failures import said

    assert said(IGNORED) == ("The following paths are ignored by one of your .gitignore "
                             "files: dist/assets")
    assert said("[error] Exit code 2\nGetting extensions in current project...\n"
                "Compiling 3 files (.ex)") is None
    assert error_line("[error] Exit code 128\nfatal: not a git repository") == (
        "fatal: not a git repository")


def test_a_heredoc_s_lines_are_no_commands() -> None:
    message = "git commit -m \"$(cat <<'EOF'\nrm build/cache\nEOF\n)\""
    found = extracted(conv(
        ("call", f"Bash: {message}"),
        ("tool", "[error] Exit code 1\nrm: cannot remove 'build/cache': Is a directory"),
        ("call", "Bash: rm -r build/cache"),
        ("tool", ""),
        ("call", "Bash: git status --short"),
        ("tool", "?? notes.md"),
    ))
    assert retried(found) == []


def test_a_package_install_that_got_a_command_past_its_error_python() -> None:
    found = extracted(conv(
        ("call", "Bash: pytest -q tests/test_s3.py"),
        ("tool", ("[error] Exit code 1\nImportError while importing test module\n"
                  "ModuleNotFoundError: No module named 'tenacity'")),
        ("call", "Bash: pip install tenacity"),
        ("tool", "[error] Exit code 1\nerror: externally-managed-environment"),
        ("call", "Bash: pip install --break-system-packages tenacity"),
        ("tool", "Successfully installed tenacity-9.0.0"),
        ("call", "Bash: pytest -q tests/test_s3.py"),
        ("tool", "4 passed in 0.31s"),
    ))
    # the retry of the install says less than the fix and is folded into it
    assert fixes(found) == [
        ("`pytest -q` failed with \"ModuleNotFoundError: No module named 'tenacity'\"; it "
         "passed after running `pip install --break-system-packages tenacity`"),
    ]


def test_an_edit_and_an_install_between_are_the_fix_javascript() -> None:
    found = extracted(conv(
        ("call", "Bash: npx vitest run"),
        ("tool", "Process exited with code 1\nError: Cannot find package 'happy-dom'"),
        ("call", "Edit: /w/web/vitest.config.js\n+ environment: 'happy-dom',"),
        ("tool", "The file /w/web/vitest.config.js has been updated successfully."),
        ("call", "Bash: npm install --save-dev happy-dom 2>&1 | tail -2"),
        ("tool", "added 8 packages in 7s"),
        ("call", "Bash: npx vitest run"),
        ("tool", "Test Files  3 passed (3)"),
    ))
    assert fixes(found) == [
        ("`npx vitest run` failed with \"Error: Cannot find package 'happy-dom'\"; it passed "
         "after editing `w/web/vitest.config.js` (`environment: 'happy-dom',`) and running "
         "`npm install --save-dev happy-dom`"),
    ]


def test_a_codex_command_that_exited_non_zero_is_a_failure_its_rerun_got_past(
        cli, tmp_path) -> None:
    from tests.extract import excerpts as X
    from tests.extract.test_statements import nothing_invented

    folder = tmp_path / "in"
    folder.mkdir()
    X.codex(folder / "rollout.jsonl", "019e0000-0000-7000-8000-0000000000a1", "/home/dev/ring", [
        ("user", "Push the branch."),
        ("call", "exec_command", "git push"),
        ("result", "fatal: The current branch feat-size has no upstream branch.", 128),
        ("call", "exec_command", "git push -u origin feat-size"),
        ("result", "branch 'feat-size' set up to track 'origin/feat-size'."),
    ])
    assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    assert ('`git push` failed with "fatal: The current branch feat-size has no upstream '
            'branch."; `git push -u origin feat-size` passed') in [
        m["text"] for m in nothing_invented(cli)]


def test_a_gemini_shell_command_that_exited_non_zero_is_a_failure(cli, tmp_path) -> None:
    from tests.extract import excerpts as X
    from tests.extract.test_statements import nothing_invented

    def answer(command: str, output: str, code: int) -> str:  # run_shell_command's fields
        return (f"Command: {command}\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
                f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\n"
                "Process Group PGID: 4242")

    folder = tmp_path / "in"
    folder.mkdir()
    X.gemini(folder / "chat.json", "gem-fail-1", [
        ("user", "Install the charts package."),
        ("call", "run_shell_command", "npm install react-charts"),
        ("result", answer("npm install react-charts", "npm error code ERESOLVE", 1)),
        ("call", "run_shell_command", "npm install --legacy-peer-deps react-charts"),
        ("result", answer("npm install --legacy-peer-deps react-charts", "added 12 packages", 0)),
    ])
    assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    assert ('`npm install react-charts` failed with "npm error code ERESOLVE"; `npm install '
            '--legacy-peer-deps react-charts` passed') in [
        m["text"] for m in nothing_invented(cli)]
