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
