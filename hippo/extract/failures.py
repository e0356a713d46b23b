"""A shell command that failed, and what made it pass: an edit, or running it another way.

- **Error → fix.** A command fails, files are edited, and it runs again. When the next run
  passes, or fails on another error (the edit got it past the first one: a missing
  dependency, then a missing setting, then a wrong assertion), the edits between fixed the
  first error: one insight naming the command, its error line, the files changed and, for
  one small edit, the line it added. A run that fails on the same error again fixed
  nothing; a chain of runs that never passes is no fix at all.
- **Retry.** A command fails and passes run another way (a flag, another directory) with
  no file edited between: the way that works, and the error the other way gives.

Only structure is read (exit status, the order of calls); tool output only for its one
error line (`hippo.extract.conversation.error_line`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hippo.extract.conversation import (
    _FAILED,
    _GIT,
    _PATHISH,
    EDIT_RESULT_CHARS,
    Call,
    _is_file,
    _program,
    _short,
    brief,
    command,
    error_line,
    is_commit,
)
from hippo.extract.summary import Statement

RETRY_WINDOW = 4
# An edit small enough that the line it adds says what the fix was (`{:lazy_html, ...}`).
SHOWN_LINES = 2
SHOWN_CHARS = 120


def shell_tools(seq: Sequence[Call]) -> set[str]:
    """The names of the session's shell tools: the one that committed, else every tool
    whose argument reads as a command line."""
    return {c.name for c in seq if is_commit(c)} or {
        c.name for c in seq if command(c.arg) and not _PATHISH.search(c.arg.split(" ", 1)[0])}


def _edits(call: Call, shell: set[str]) -> bool:
    """An edit that went through: an edit answers with a short confirmation, a read with
    the file itself."""
    return (call.name not in shell and _is_file(call.arg) and call.result is not None
            and len(call.result) < EDIT_RESULT_CHARS and not _FAILED.search(call.result[:200]))


def error_fixes(seq: Sequence[Call]) -> Iterator[Statement]:
    """Each error a shell command failed with that edits got it past (`calls` of a
    session), once the command passed at last."""
    shell = shell_tools(seq)
    runs: dict[str, list[int]] = {}  # a command -> its failed runs since it last passed
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(seq):
        if c.name not in shell or c.result is None:
            continue
        cmd = command(c.arg)
        if cmd is None or _GIT.search(c.arg):
            continue  # a line that also runs git: its failure may be git's, not the check's
        if _FAILED.search(c.result[:200]):
            runs.setdefault(cmd, []).append(i)
            continue
        failed = runs.pop(cmd, None)
        if not failed:
            continue
        for error, stmt in _chain(seq, shell, cmd, [*failed, i]):
            if (cmd, error) not in seen:
                seen.add((cmd, error))
                yield stmt


def _chain(seq: Sequence[Call], shell: set[str], cmd: str, at: list[int]
           ) -> Iterator[tuple[str, Statement]]:
    """The fixes of one run of failures that ends in a pass (`at`: their places in `seq`,
    the pass last). A failure whose output names no error is read as the one before it."""
    cur = at[0]
    for nxt in at[1:]:
        error = error_line(seq[cur].result or "")
        passed = nxt == at[-1]
        after = None if passed else error_line(seq[nxt].result or "")
        if not passed and after is None:
            continue  # says nothing of what failed: the same failure, maybe
        edits = [e for e in seq[cur + 1:nxt] if _edits(e, shell)]
        if error and after != error and edits:
            yield error, _fixed(seq[cur], seq[nxt], cmd, error, edits, passed)
        cur = nxt


def _fixed(bad: Call, nxt: Call, cmd: str, error: str, edits: list[Call],
           passed: bool) -> Statement:
    by_file = {e.arg.split()[0]: e for e in edits}
    files = ", ".join(f"`{_short(f)}`" for f in list(by_file)[-3:])
    shown = _added(edits)
    if shown:
        files = f"{files} ({shown})"
    done = f"it passed after editing {files}" if passed else f"editing {files} fixed it"
    evidence = (*bad.chunk_ids, *bad.result_chunks, *nxt.chunk_ids,
                *(ch for e in by_file.values() for ch in e.chunk_ids))
    return Statement("insight", f"`{cmd}` failed with \"{error}\"; {done}", 0.55, (),
                     evidence=tuple(dict.fromkeys(evidence)))


def _added(edits: list[Call]) -> str:
    """The lines one small edit added, quoted, when they say what it changed: only an
    edit that adds at most `SHOWN_LINES` lines and removes none."""
    if len(edits) != 1:
        return ""
    lines = [ln for ln in edits[0].diff.splitlines() if ln != "…"]
    added = [ln[2:].strip().replace("`", "'") for ln in lines if ln.startswith("+ ")]
    if not added or len(added) > SHOWN_LINES or len(added) != len(lines):
        return ""
    shown = "; ".join(f"`{ln}`" for ln in added if ln)
    return shown if len(shown) <= SHOWN_CHARS else ""


def retries(seq: Sequence[Call]) -> Iterator[Statement]:
    """A shell command that failed, then passed run another way (a flag, another directory)
    with no file edited between: the way that works, and the error the other way gives."""
    shell = shell_tools(seq)
    seen: set[str] = set()
    for i, bad in enumerate(seq):
        if bad.name not in shell or bad.result is None or not _FAILED.search(bad.result[:200]):
            continue
        prog = _program(bad.arg)
        if prog is None:
            continue
        for good in seq[i + 1:i + 1 + RETRY_WINDOW]:
            if _edits(good, shell) or good.result is None:
                break
            if good.name not in shell or _program(good.arg) != prog:
                continue
            if _FAILED.search(good.result[:200]) or brief(good.arg) == brief(bad.arg):
                break
            error = error_line(bad.result)
            if error and prog not in seen:
                seen.add(prog)
                text = f"`{brief(bad.arg)}` failed with \"{error}\"; `{brief(good.arg)}` passed"
                yield Statement("insight", text, 0.55, (), evidence=tuple(dict.fromkeys(
                    (*bad.chunk_ids, *bad.result_chunks, *good.chunk_ids))))
            break
