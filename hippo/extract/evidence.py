"""What a session's tool results state: the commit made, and the state of a named thing.

A tool's output is never stored; from a few results whose shape every install of the tool
prints, one line is read as a statement:

- **A commit** (`[branch hash] subject`, what `git commit` answers): "Committed HASH on
  BRANCH: SUBJECT", kept when the subject names a task (it closes it, `hippo.extract.closing`).
- **A state** of a named thing, as `` `COMMAND` [on BRANCH]: WHAT IT SAID ``:
  - a test suite's counts (`14 doctests, 87 tests, 0 failures`, `12 passed, 1 failed`,
    `test result: ok. 9 passed; 0 failed`, `Tests: 3 passed, 3 total`), the subject the
    command line that ran it (one file's run is not the whole suite's);
  - a work tree (`git status`: up to date or ahead of its upstream, clean or what is not
    committed);
  - a push (`git push`: which branch went where, and the upstream it now tracks).

Only a session's last state of each subject is a memory; the project's older machine
states of that subject are superseded by it (`hippo.extract.supersede`), so search answers
with the newest.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hippo.extract.closing import ids_in_commit
from hippo.extract.conversation import (
    _CLOSE,
    _FAILED,
    EDIT_RESULT_CHARS,
    TESTER,
    Call,
    _is_file,
    _is_path,
    brief,
    commit_message,
    is_commit,
)
from hippo.extract.summary import Statement

STATE_TAG = "state"
MAX_FILES = 3
_COMMITTED = re.compile(r"^\[([\w./@+-]+)(?: \(root-commit\))? ([0-9a-f]{4,40})\] (.+)$",
                        re.MULTILINE)
_COUNT = (r"\d+ (?:doctests?|tests?|examples?|specs?|propert(?:y|ies)|passed|passing|failed|"
          r"failing|failures?|errors?|skipped|pending|ignored|total|excluded)\b")
_COUNTS = re.compile(rf"{_COUNT}")
# A summary line: two counts or more, or one count that says passed / failed on its own.
_SUITE_LINE = re.compile(rf"(?:{_COUNT}.*){{2,}}|^\W*(?:{_COUNT})\W*(?:in [\d.]+m?s)?\W*$")
_TESTISH = re.compile(r"\b\d+ (?:doctests?|tests?|examples?|specs?|passed|passing|failed|"
                      r"failing|failures?)\b")
_TIMING = re.compile(r"\s*\b(?:in|finished in|took)\s+[\d.]+\s*(?:m?s|seconds?|minutes?)\b.*$",
                     re.IGNORECASE)
_BRANCH = re.compile(r"^On branch (\S+)", re.MULTILINE)
_UPSTREAM = re.compile(r"^Your branch is ((?:up to date with|ahead of|behind) '[^']+'"
                       r"(?: by \d+ commits?)?)", re.MULTILINE)
_TREE = re.compile(r"^(nothing to commit, working tree clean|nothing to commit|"
                   r"nothing added to commit but untracked files present|"
                   r"Changes not staged for commit|Changes to be committed|Untracked files)",
                   re.MULTILINE)
_CHANGED = re.compile(r"^\s+(?:modified|new file|deleted|renamed):\s+(\S.*)$", re.MULTILINE)
_PUSHED = re.compile(r"^\s*(?:[+*]\s+\[new branch\]|[0-9a-f]{6,}\.\.\.?[0-9a-f]{6,}|\+)\s*"
                     r"\s+(\S+) -> (\S+)", re.MULTILINE)
_TRACKS = re.compile(r"^branch '([^']+)' set up to track '([^']+)'", re.MULTILINE)
_TO = re.compile(r"^To (\S+)$", re.MULTILINE)
_GIT_SUB = re.compile(r"(?:^|[;&|(]\s*|\s)git\b(?:\s+-\S+(?:\s+\S+)?)*\s+(status|push)\b")
_PATH = re.compile(r"[/\\]|\w\.[a-z]{1,4}\b(?!\d)")  # a file's own line, not the suite's
_PROGRAM = re.compile(r"^[\w.+-]+(?:\s|$)")
_SKIP = frozenset(["cd", "export", "set", "source", ".", "time", "sleep", "true"])


@dataclass(frozen=True, slots=True)
class State:
    """One observed state: its subject (what it is the state of), the statement, its chunks."""

    subject: str
    text: str
    evidence: tuple[int, ...]


def committed(call: Call) -> tuple[str, str, str] | None:
    """(branch, short hash, subject) of a commit that went through, from what git answered."""
    if call.result is None or not is_commit(call) or _FAILED.search(call.result[:200]):
        return None
    m = _COMMITTED.search(call.result)
    if m is None:
        return None
    return m.group(1), m.group(2)[:7], m.group(3).strip()


def commit_text(call: Call, subject: str) -> str:
    """The commit as a statement: its hash and branch when git's answer shows them."""
    made = committed(call)
    if made is None:
        return subject
    branch, sha, _ = made
    return f"Committed {sha} on {branch}: {subject}"


def runner(arg: str) -> str | None:
    """The command of a shell line that printed the result: its last segment that runs a
    program (not `cd`, an assignment or a sleep), without what its output was piped to,
    quoted as a person would."""
    line = arg.strip().splitlines()[0] if arg.strip() else ""
    segments = [re.split(r"\s\|(?!\|)", s)[0].strip() for s in re.split(r"&&|\|\||;", line)]
    for seg in reversed([s for s in segments if s]):
        try:
            words = shlex.split(seg)
        except ValueError:
            words = seg.split()
        while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
            words = words[1:]
        bare = re.sub(r"^(?:[A-Za-z_]\w*=\S*\s+)+", "", seg)
        if words and words[0] not in _SKIP and _PROGRAM.match(bare):
            return brief(bare)
    return None


def suite(call: Call) -> State | None:
    """A test run's counts: the last summary line of its output."""
    if call.result is None:
        return None
    cmd = runner(call.arg)
    if cmd is None or not TESTER.search(cmd) or _GIT_SUB.search(call.arg):
        return None
    lines = [ln.strip(" =-*\t") for ln in call.result.splitlines()]
    found = [ln for ln in lines if len(ln) <= 200 and not _PATH.search(ln) and _SUITE_LINE.search(ln)
             and _TESTISH.search(ln) and _COUNTS.search(ln)]
    if not found:
        return None
    line = _TIMING.sub("", found[-1]).strip(" ,;=")
    return State(f"`{cmd}`", f"`{cmd}`: {line}", (*call.chunk_ids, *call.result_chunks))


def tree(call: Call) -> State | None:
    """`git status`: the branch, where it stands against its upstream, and the tree."""
    m = _GIT_SUB.search(call.arg)
    if call.result is None or m is None or m.group(1) != "status":
        return None
    branch, what = _BRANCH.search(call.result), _TREE.search(call.result)
    if branch is None or what is None:
        return None
    parts = []
    if (up := _UPSTREAM.search(call.result)) is not None:
        parts.append(up.group(1))
    said = what.group(1)
    files = list(dict.fromkeys(f.strip() for f in _CHANGED.findall(call.result)))
    if files and "clean" not in said:
        shown = ", ".join(files[:MAX_FILES]) + (" …" if len(files) > MAX_FILES else "")
        said = f"{said}: {shown}"
    parts.append(said)
    subject = f"`git status` on {branch.group(1)}"
    return State(subject, f"{subject}: " + "; ".join(parts),
                 (*call.chunk_ids, *call.result_chunks))


def push(call: Call) -> State | None:
    """`git push`: each branch pushed, where to, and the upstream it now tracks."""
    m = _GIT_SUB.search(call.arg)
    if call.result is None or m is None or m.group(1) != "push" \
            or _FAILED.search(call.result[:200]):
        return None
    refs = _PUSHED.findall(call.result)
    if not refs:
        return None
    branch = refs[0][0]
    to = _TO.search(call.result)
    said = ", ".join(f"{a} -> {b}" for a, b in refs[:MAX_FILES])
    if to is not None:
        said += f" at {to.group(1)}"
    if (tracks := _TRACKS.search(call.result)) is not None:
        said += f"; branch '{tracks.group(1)}' set up to track '{tracks.group(2)}'"
    subject = f"`git push` of {branch}"
    return State(subject, f"{subject}: {said}", (*call.chunk_ids, *call.result_chunks))


def branches(seq: Sequence[Call]) -> list[tuple[str, tuple[int, ...]] | None]:
    """The branch each call ran on, as far as git's answers in the session show it (with the
    chunks that show it): the last one named before the call (`On branch X`, a commit's
    `[X hash]`), else the first after."""
    named: list[tuple[str, tuple[int, ...]] | None] = []
    for call in seq:
        got = None
        if call.result is not None:
            if (made := committed(call)) is not None:
                got = made[0]
            elif _GIT_SUB.search(call.arg) and (m := _BRANCH.search(call.result)):
                got = m.group(1)
        named.append((got, (*call.chunk_ids, *call.result_chunks)) if got else None)
    out: list[tuple[str, tuple[int, ...]] | None] = []
    last = next((b for b in named if b), None)
    for b in named:
        last = b or last
        out.append(last)
    return out


def states(seq: Sequence[Call]) -> list[State]:
    """The session's last state of each subject, in the order they were last seen. A test
    run's subject names the branch it ran on, when git's answers show it."""
    last: dict[str, State] = {}
    for call, branch in zip(seq, branches(seq), strict=True):
        for read in (suite, tree, push):
            got = read(call)
            if got is not None:
                if read is suite and branch is not None:
                    subject = f"{got.subject} on {branch[0]}"
                    got = State(subject, subject + got.text[len(got.subject):],
                                tuple(dict.fromkeys((*got.evidence, *branch[1]))))
                last.pop(got.subject, None)
                last[got.subject] = got
                break
    return list(last.values())


def subject_of(text: str) -> str | None:
    """The subject of a state memory's text (what `states` wrote before the colon)."""
    m = re.match(r"^(`[^`]+`(?: (?:on|of) \S+)?): ", text)
    return m.group(1) if m else None


def closes(seq: Sequence[Call]) -> Iterator[tuple[Statement, tuple[str, ...],
                                                 tuple[tuple[str, int], ...]]]:
    """What the session shows done, with the task ids it closes: a task closed in a tracker
    with a reason (in the closer's words), and a commit whose message names a task id (its
    subject), with the files edited since the commit before it."""
    edited: dict[str, int] = {}
    for c in seq:
        if c.result is not None and edits(c):
            edited[_basename(c.arg)] = c.chunk_ids[-1] if c.chunk_ids else 0  # the latest
        if c.result is None or _FAILED.search(c.result[:200]):
            continue
        m = _CLOSE.search(c.arg)
        if m is not None:
            reason = " ".join(m.group(3).split())
            yield (Statement("fact", f"Closed {m.group(1)}: {reason}"[:400], 0.5, (),
                             evidence=c.chunk_ids), (m.group(1),), ())
        elif is_commit(c) and (message := commit_message(c.arg)):
            ids = ids_in_commit(message)
            subject = message.strip().splitlines()[0].strip()
            touched = tuple(edited.items())
            if committed(c) is not None:
                edited = {}
            if ids and len(subject.split()) >= 4:
                yield (Statement("fact", commit_text(c, subject)[:400], 0.5, (), evidence=(
                    *c.chunk_ids, *c.result_chunks)), tuple(ids), touched)


def edits(call: Call) -> bool:
    """A call of a tool (not the shell) on a file of the work tree that answered briefly:
    an edit or a write, not a read (which returns the file)."""
    return (not is_shell(call) and _is_file(call.arg) and call.result is not None
            and len(call.result) < EDIT_RESULT_CHARS and not _FAILED.search(call.result[:200]))


def is_shell(call: Call) -> bool:
    return bool(_PROGRAM.match(call.arg)) and not _is_path(call.arg)


def _basename(arg: str) -> str:
    return re.split(r"[/\\]", arg.split(" ", 1)[0])[-1]

# How many tests pass, as prose says it: "All 49 tests passed", "10 of 12 pass now".
_CLAIM = re.compile(r"\b(?:all )?\d+(?: of \d+)? (?:\w+ ){0,2}(?:tests?|doctests?|specs?)"
                    r"(?: \w+)? (?:pass(?:ed|ing)?|fail(?:ed|ing)?)\b|\b\d+ of \d+ pass|"
                    r"\b\d+ (?:tests?|doctests?), \d+ failures?\b|\b\d+ (?:passed|failed), \d+ "
                    r"(?:passed|failed)\b", re.IGNORECASE)


def count_claim(text: str) -> bool:
    """`text` says how many tests pass or fail."""
    return bool(_CLAIM.search(text))


def suite_state(text: str) -> bool:
    """`text` is a state `states` wrote of a test run's counts."""
    return subject_of(text) is not None and bool(_TESTISH.search(text))


def whole_suite(text: str) -> bool:
    """A state of a test run that names no file or folder (or every package: `./...`): the
    whole suite, not one file's tests."""
    subject = subject_of(text)
    if subject is None or not suite_state(text):
        return False
    cmd = subject.split("`")[1].replace("./...", "")
    return not re.search(r"[/\\]|\w\.[A-Za-z]{1,5}\b", cmd)
