"""A shell command that failed, and what made it pass: an edit, or running it another way.

- **Error → fix.** A command fails, files are edited or packages installed (`pip install X`,
  `npm install --save-dev X`, `mix deps.get`), and it runs again. When the next run passes,
  or fails on another error (the change got it past the first one: a missing dependency,
  then a missing setting, then a wrong assertion), the edits and installs between fixed the
  first error: one insight naming the command, its error line, the files changed (for one
  small edit, the line it added) and the installs run. A run that fails on the same error again fixed
  nothing; a chain of runs that never passes is no fix at all.
- **Retry.** A command fails and passes run another way (a flag, another directory) with
  no file edited between: the way that works, and the error the other way gives. Inside a
  line of several commands, a command run again on some of its arguments with a flag it
  lacked (`git add -f FILE`) is that way, when the failure's output names those arguments.

Only structure is read (exit status, the order of calls); tool output only for its one
error line (`hippo.extract.conversation.error_line`), or, when it names none, its first
line that is no progress report (`said`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hippo.extract.conversation import (
    _FAILED,
    _GIT,
    _HEREDOC,
    _PATHISH,
    _SEGMENTS,
    EDIT_RESULT_CHARS,
    Call,
    _is_file,
    _program,
    _short,
    brief,
    clip,
    command,
    error_line,
    is_commit,
    output_lines,
    segment_words,
)
from hippo.extract.summary import Statement

RETRY_WINDOW = 4
FLAG_WINDOW = 12
# Package managers and the words that make them install (`pip install`, `uv pip install`,
# `npm add`, `go get`, `mix deps.get`): an install between a failure and a pass fixed it.
_MANAGERS = frozenset(["pip", "pip3", "uv", "pipenv", "poetry", "conda", "npm", "pnpm", "yarn",
                       "bun", "cargo", "go", "mix", "bundle", "gem", "composer", "brew", "apt",
                       "apt-get", "dotnet"])
_INSTALL = frozenset(["install", "add", "i", "get", "deps.get", "sync"])
# A line of more commands than this is a script: its first ones are read.
MAX_SEGMENTS = 40
# A folder shorter than this is no evidence the output names it (`a`, `src`).
MIN_NAMED = 6
_PROGRESS = re.compile(r"[A-Z][a-z]+ing\b")
_REDIRECT = re.compile(r"^(?:\d?>|<)")
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
        installs = {seg: c for c in seq[cur + 1:nxt] for seg in _installs(c, shell)}
        if error and after != error and (edits or installs):
            yield error, _fixed(seq[cur], seq[nxt], cmd, error, edits, installs, passed)
        cur = nxt


def _installs(call: Call, shell: set[str]) -> list[str]:
    """The package installs of a shell call that went through (`pip install X`, `npm add X`,
    `mix deps.get`), as written."""
    if call.name not in shell or call.result is None or _FAILED.search(call.result[:200]):
        return []
    return [brief(seg.text) for seg in _segments(call.arg)
            if seg.prog in _MANAGERS and _INSTALL.intersection(seg.args[:2])]


def _fixed(bad: Call, nxt: Call, cmd: str, error: str, edits: list[Call],
           installs: dict[str, Call], passed: bool) -> Statement:
    by_file = {e.arg.split()[0]: e for e in edits}
    files = ", ".join(f"`{_short(f)}`" for f in list(by_file)[-3:])
    shown = _added(edits)
    if shown:
        files = f"{files} ({shown})"
    done = " and ".join(part for part in (
        f"editing {files}" if by_file else "",
        "running " + ", ".join(f"`{i}`" for i in list(installs)[-2:]) if installs else "")
        if part)
    done = f"it passed after {done}" if passed else f"{done} fixed it"
    evidence = (*bad.chunk_ids, *bad.result_chunks, *nxt.chunk_ids,
                *(ch for e in (*by_file.values(), *installs.values()) for ch in e.chunk_ids))
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
    """A shell command that failed, then passed run another way with no file edited
    between: the way that works, and the error the other way gives. Run another way is
    the same one-command line changed (a flag, another directory, within `RETRY_WINDOW`
    calls), or, inside any line, a command run again on some of the same arguments with a
    flag it lacked (`git add -f FILE` after `git add FILE ... && git commit` failed, within
    `FLAG_WINDOW` calls)."""
    shell = shell_tools(seq)
    seen: set[str] = set()
    for i, bad in enumerate(seq):
        if bad.name not in shell or bad.result is None or not _FAILED.search(bad.result[:200]):
            continue
        stmt = _rerun(seq, i, shell, seen) or _flagged(seq, i, shell, seen)
        if stmt is not None:
            yield stmt


def _rerun(seq: Sequence[Call], i: int, shell: set[str], seen: set[str]) -> Statement | None:
    """The one-command line `seq[i]` that failed, passing changed in the calls after it."""
    bad = seq[i]
    prog = _program(bad.arg)
    if prog is None:
        return None
    for good in seq[i + 1:i + 1 + RETRY_WINDOW]:
        if _edits(good, shell) or good.result is None:
            return None
        if good.name not in shell or _program(good.arg) != prog:
            continue
        if _FAILED.search(good.result[:200]) or brief(good.arg) == brief(bad.arg):
            return None
        error = error_line(bad.result or "")
        if not error or prog in seen:
            return None
        seen.add(prog)
        return _retried(bad, good, brief(bad.arg), brief(good.arg), error)
    return None


def _flagged(seq: Sequence[Call], i: int, shell: set[str], seen: set[str]) -> Statement | None:
    """A command of the line `seq[i]` that failed, passing later with a flag it lacked."""
    bad = seq[i]
    tried = _segments(bad.arg)
    by_prog: dict[str, list[Segment]] = {}
    for was in tried:
        by_prog.setdefault(was.prog, []).append(was)
    for good in seq[i + 1:i + 1 + FLAG_WINDOW]:
        if _edits(good, shell):
            return None
        if (good.name not in shell or good.result is None
                or _FAILED.search(good.result[:200])):
            continue
        for seg in _segments(good.arg):
            for was in by_prog.get(seg.prog, ()):
                added = seg.flags - was.flags
                if not seg.args or not added or not set(seg.args) <= set(was.args):
                    continue
                # In a line of several commands, the one that failed is the one its
                # output names by a path (`priv/static/assets` for `git add … priv/static/assets/x.css`).
                if len(tried) > 1 and not any(_named(a, bad.result or "") for a in seg.args
                                              if _PATHISH.search(a)):
                    continue
                key = f"{seg.prog} {' '.join(sorted(added))}"
                if key in seen:
                    return None
                seen.add(key)
                rest = " …" if len(was.args) > len(seg.args) else ""
                quoted = brief(" ".join((seg.prog, *sorted(was.flags), *seg.args))) + rest
                error = error_line(bad.result or "") or said(bad.result or "")
                return _retried(bad, good, quoted, brief(seg.text), error)
    return None


def _retried(bad: Call, good: Call, tried: str, worked: str, error: str | None) -> Statement:
    failed = f"failed with \"{error}\"" if error else "failed"
    return Statement("insight", f"`{tried}` {failed}; `{worked}` passed", 0.55, (),
                     evidence=tuple(dict.fromkeys((*bad.chunk_ids, *bad.result_chunks,
                                                   *good.chunk_ids))))


@dataclass(frozen=True, slots=True)
class Segment:
    """One command of a shell line: its text, program, flags and other words."""

    text: str
    prog: str
    flags: frozenset[str]
    args: tuple[str, ...]


def _segments(arg: str) -> list[Segment]:
    """The commands of a shell line (`a && b; c`, the first `MAX_SEGMENTS`, once each), each
    up to its first pipe, with their flags (`-f`, `--force`) apart from their other words;
    heredoc texts, redirections and `cd` dropped."""
    out: dict[tuple[str, frozenset[str], tuple[str, ...]], Segment] = {}
    for part in _SEGMENTS.split(_HEREDOC.sub("", arg))[:MAX_SEGMENTS]:
        text = part.split("|", 1)[0].strip()
        words = [w for w in segment_words(text) or () if not _REDIRECT.match(w)]
        if not words:
            continue
        flags = frozenset(w for w in words[1:] if w.startswith("-") and len(w) > 1)
        args = tuple(w for w in words[1:] if w not in flags)
        out.setdefault((words[0], flags, args), Segment(text, words[0], flags, args))
    return list(out.values())


def _named(arg: str, output: str) -> bool:
    """True when `output` names `arg` or a folder it lies in."""
    parts = arg.strip("/").split("/")
    return any("/".join(parts[:n]) in output for n in range(len(parts), 0, -1)
               if len("/".join(parts[:n])) >= MIN_NAMED)


def said(result: str) -> str | None:
    """What a failed command's output says when it names no error: its first line of four
    words or more among the first three (a line ending with a colon takes the line after
    it: "The following paths are ignored by one of your .gitignore files: dist/assets"); a
    line of progress ("Compiling 3 files (.ex)", "Getting extensions ...") says nothing."""
    lines = [ln for ln in output_lines(result) if ln]
    for n, line in enumerate(lines[:3]):
        if (len(re.findall(r"[A-Za-z]{2,}", line)) < 4 or line.endswith(("...", "…"))
                or _PROGRESS.match(line)):
            continue
        if line.endswith(":") and n + 1 < len(lines) and len(lines[n + 1]) <= 80:
            line = f"{line} {lines[n + 1]}"
        return clip(line)
    return None
