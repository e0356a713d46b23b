"""What a session's structure shows, beyond single cue sentences.

- **Wrap-ups.** The assistant's last message of a turn that lists what was done in bullets
  is a summary the agent wrote itself: each bullet that names something becomes a fact,
  under its heading's subject (read like a compaction summary's items).
- **The gate.** The shell commands a session runs before two or more separate `git commit`s
  (through the same tool that committed) are the project's pre-commit checks: one
  procedure memory, "Before committing, run: ...".
- **Error lines.** What a failed command's output names as its error (`error_line`), for
  the fixes and retries of `hippo.extract.failures`.

All of it is defined by structure (turns, tool calls, commits, exit status), never by a tool's
or a project's name; tool output is only ever quoted for the one error line it names.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hippo.extract.blocks import Message
from hippo.extract.summary import Statement, parse, statements_of

MAX_WRAPUP_STATEMENTS = 20
EDIT_RESULT_CHARS = 300
MIN_BULLETS = 2
_BULLET_LINE = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+\S", re.MULTILINE)
_COMMIT = re.compile(r"(?:^|[;&|(]\s*|\s)git\b(?:\s+-\S+(?:\s+\S+)?)*\s+commit\b")
_GIT = re.compile(r"\bgit\s")
# A test command (a runner, or a script or target named for tests), and what its run prints.
TESTER = re.compile(r"test|spec|jest|mocha|phpunit|\b(?:tox|nox|karma|ava|check)\b", re.IGNORECASE)
SUITE_OUT = re.compile(r"\b\d+ (?:tests?|examples?|passed|passing|failures?|failed)\b")
_COMMIT_OUT = re.compile(r"\[[\w./@+-]+(?: \(root-commit\))? [0-9a-f]{4,40}\] \S")
_SEGMENTS = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PATHISH = re.compile(r"[/\\]|^\.|\.[A-Za-z0-9]{1,5}$|^[\"'$<>{(]|^\d|[=*?]")
_FAILED = re.compile(r"^\[error\]|\b(?:exit(?:ed)?(?: with)?(?: code| status)?:?\s*[1-9]\d*)\b"
                     r"|\bProcess exited with code [1-9]", re.IGNORECASE)
_ERROR_LINE = re.compile(r"\b(?:error|exception|failed|failure|fatal|cannot|undefined|traceback)\b",
                         re.IGNORECASE)
# An error's class as runtimes print it (`RuntimeError`, `AssertionError`, `NullPointerException`).
_ERROR_CLASS = re.compile(r"(?<!\w)(?:[A-Z][a-z0-9]+)+(?:Error|Exception)\b")
# The error as raised: its class, then its message (`KeyError: 'id'`, `** (RuntimeError) …`),
# not a line that only mentions one ("ImportError while importing test module").
_RAISED = re.compile(r"(?<!\w)(?:[A-Z][a-z0-9]+)+(?:Error|Exception)(?::\s|\)\s)")
_CUT = re.compile(r"\s*…\[truncated \d+ chars\]")
_TRACEBACK = re.compile(r"^traceback\b", re.IGNORECASE)
_EXIT_ONLY = re.compile(r"^\s*(?:\[error\]\s*)?(?:process )?exit(?:ed)?(?: with)?(?: code| status)"
                        r"?:?\s*-?\d+\s*$", re.IGNORECASE)
_NOISE_LINE = re.compile(r"^\s*(?:\[error\]\s*)?(?:[│|└─~^=*-]|\d+\s*[│|]|$)")


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call with its result: the tool's name, its argument, and the message ids."""

    name: str
    arg: str
    chunk_ids: tuple[int, ...]
    result: str | None
    result_chunks: tuple[int, ...]
    diff: str = ""  # an edit's changed lines, `- old` / `+ new` (the reader's rendering)


def calls(msgs: Sequence[Message]) -> list[Call]:
    """Tool calls in order, each paired with the tool result that follows it (if any). A
    reader drops an empty result, so pairing restarts at every step of a turn: prose, or a
    call after a result."""
    out: list[Call] = []
    pending: list[int] = []  # indexes into out waiting for a result
    after_result = False
    for msg in msgs:
        if msg.tool_call:
            if after_result:  # a new step: a call of the last one that got no result has none
                pending.clear()
            after_result = False
            name, arg, diff = call_parts(msg.text)
            out.append(Call(name, arg, tuple(msg.chunk_ids), None, (), diff))
            pending.append(len(out) - 1)
        elif msg.role == "tool" and pending:
            after_result = True
            i = pending.pop(_answered(out, pending, msg.text))
            c = out[i]
            out[i] = Call(c.name, c.arg, c.chunk_ids, msg.text, tuple(msg.chunk_ids), c.diff)
        elif msg.is_prose:
            pending.clear()
            after_result = False
    return out


_DIFF_LINE = re.compile(r"^(?:[-+] \S|…$)")


def call_parts(text: str) -> tuple[str, str, str]:
    """A rendered call (`Name: argument`, an edit's changed lines below its path) as its
    name, argument and changed lines ("" for any other call)."""
    name, _, arg = text.partition(": ")
    arg, diff = split_diff(arg.strip())
    return name.strip(), arg, diff


def split_diff(arg: str) -> tuple[str, str]:
    """An edit call's argument as the readers render it (`path` then its changed lines,
    `- old` / `+ new`): the path, and the lines ("" for any other call)."""
    head, sep, rest = arg.partition("\n")
    if sep and _is_path(head) and all(_DIFF_LINE.match(ln) for ln in rest.splitlines()):
        return head, rest
    return arg, ""


def _answered(out: list[Call], pending: list[int], result: str) -> int:
    """Which waiting call (its place in `pending`) a result answers: the first, but for
    what only a commit answers (`[branch hash] subject`) when a commit waits, and a test
    run's counts when a test command waits (a call before it whose empty result the reader
    dropped would take it otherwise)."""
    if _COMMIT_OUT.match(result):
        return next((n for n, i in enumerate(pending) if is_commit(out[i])), 0)
    if SUITE_OUT.search(result[-400:]):
        return next((n for n, i in enumerate(pending) if TESTER.search(out[i].arg)), 0)
    return 0


def is_commit(call: Call) -> bool:
    return bool(_COMMIT.search(call.arg))


def segment_words(segment: str) -> list[str] | None:
    """The words of one command of a shell line, env assignments dropped; None when it runs
    no program worth naming (`cd`, `echo`, `export`, `sleep`, `true`, a subshell)."""
    try:
        words = shlex.split(segment, comments=True)
    except ValueError:
        words = segment.split()
    while words and _ENV_ASSIGN.match(words[0]):
        words = words[1:]
    if not words or words[0] in ("cd", "echo", "export", "sleep", "true") \
            or not re.fullmatch(r"[\w.+-]+", words[0]):
        return None
    return words


def command(arg: str) -> str | None:
    """A shell command line reduced to what repeats: each segment's program, subcommands and
    flags up to the first path or value (`cd`, env assignments, output filters dropped)."""
    parts = []
    for segment in _SEGMENTS.split(arg.split("|", 1)[0] if "|" in arg else arg):
        words = segment_words(segment)
        if not words:
            continue
        kept = [words[0]]
        for w in words[1:]:
            if _PATHISH.search(w) or w.startswith("2>") or len(kept) >= 4:
                break
            kept.append(w)
        parts.append(" ".join(kept))
    return " && ".join(parts) if parts else None


# A tracker's or a forge's subcommand (`bd close`, `gh issue create`, `jira issue move`):
# bookkeeping before a commit, not a check of the work.
_TRACKER_VERB = frozenset({"close", "create", "update", "comment", "move", "done", "resolve",
                           "reopen", "assign", "label", "sync"})


def gate(seq: Sequence[Call]) -> Statement | None:
    """The checks run before two or more separate commits (`calls` of a session), as one
    procedure statement."""
    commits = [i for i, c in enumerate(seq) if is_commit(c)]
    if len(commits) < 2:
        return None
    shell = {seq[i].name for i in commits}
    windows: list[dict[str, Call]] = []
    start = 0
    for i in commits:
        window: dict[str, Call] = {}
        # The checks run after the last change before the commit: from the last call of
        # another tool on a file (an edit, or a read after it) if there is one.
        files = [j for j in range(start, i) if seq[j].name not in shell and _is_path(seq[j].arg)]
        for c in seq[files[-1] + 1 if files else start:i]:
            if c.name not in shell or is_commit(c):
                continue
            cmd = command(c.arg)
            if cmd is None:
                continue
            for part in cmd.split(" && "):
                if part.split()[0] != "git" and not _TRACKER_VERB.intersection(part.split()[1:3]):
                    window.setdefault(part, c)
        start = i + 1
        if window:
            windows.append(window)
    counts: dict[str, int] = {}
    for w in windows:
        for cmd in w:
            counts[cmd] = counts.get(cmd, 0) + 1
    order = list(dict.fromkeys(cmd for w in windows for cmd in w))
    keep = [cmd for cmd in order if counts[cmd] >= 2]
    # A command and a longer form of it ("mix test" and "mix test --failed"): the short one.
    keep = [c for c in keep if not any(o != c and c.startswith(o + " ") for o in keep)]
    if not keep:
        return None
    latest = {cmd: w[cmd] for w in windows for cmd in keep if cmd in w}
    evidence = tuple(dict.fromkeys(ch for cmd in keep for ch in latest[cmd].chunk_ids))
    return Statement("procedure", gate_text(keep), 0.7, (), evidence=evidence)


GATE_LEAD = "Before committing, run: "
GATE_TAG = "gate"
MAX_CHECKS = 8


def gate_text(checks: Sequence[str]) -> str:
    return GATE_LEAD + ", ".join(f"`{c}`" for c in checks[:MAX_CHECKS])


def gate_checks(text: str) -> list[str]:
    """The checks a gate's text lists (`gate_text`'s inverse); [] when it is not a gate."""
    return re.findall(r"`([^`]+)`", text[len(GATE_LEAD):]) if text.startswith(GATE_LEAD) else []


def merged_checks(new: Sequence[str], old: Sequence[str]) -> list[str]:
    """The checks of a session's gate and of the project's gate before it, as one list:
    sessions run different subsets of one project's checks (the lint one day, the type
    check the next), so what one left out is not dropped. The new session's order first; a
    check and a longer form of it from the other (`mix credo`, `mix credo --strict`): the
    longer, the stricter run."""
    every = (*new, *old)
    out: list[str] = []
    for check in every:
        check = next((o for o in every if o.startswith(check + " ")), check)
        if check not in out:
            out.append(check)
    return out


def error_line(result: str) -> str | None:
    """The line of a failed command's output that names its error: the error as raised
    (`** (RuntimeError) …`, `ModuleNotFoundError: …`), else one naming an error class, else
    the first that says error, failed, cannot; None when none does (a failure whose output,
    as kept, names no error says nothing worth remembering: "Getting extensions ...")."""
    lines = output_lines(result)
    named = [ln for ln in lines if _ERROR_CLASS.search(ln) and not _TRACEBACK.match(ln)]
    line = next((ln for ln in named if _RAISED.search(ln)), None) or next(iter(named), None) or (
        next((ln for ln in lines if not _NOISE_LINE.match(ln) and _ERROR_LINE.search(ln)
              and not _TRACEBACK.match(ln)), None))
    if not line:
        return None
    return clip(_CUT.sub(" …", line))  # where the reader cut the output short


def output_lines(result: str) -> list[str]:
    """A command's output as lines, stripped, the reader's `[error]` mark and exit-status
    lines dropped."""
    return [re.sub(r"^\[error\]\s*", "", ln.strip()) for ln in result.splitlines()
            if not _EXIT_ONLY.match(ln)]


def clip(line: str) -> str:
    """A line of output short enough to quote: 160 characters, cut at a word."""
    return line if len(line) <= 160 else line[:157].rsplit(" ", 1)[0] + " …"


def _short(path: str) -> str:
    """A file as a person names it: its last three path components."""
    return "/".join(re.split(r"[/\\]", path)[-3:])


def _is_file(arg: str) -> bool:
    """A path to a file of the work tree: it has an extension, and no hidden directory."""
    first = arg.split(" ", 1)[0]
    return (_is_path(first) and bool(re.search(r"\.[A-Za-z0-9]{1,8}$", first))
            and not re.search(r"[/\\]\.[^/\\.]", first))


def _is_path(arg: str) -> bool:
    first = arg.split(" ", 1)[0]
    return bool(re.match(r"^(?:~|\.{1,2})?/[\w.@~+/-]+$|^[\w.-]+/[\w.@+/-]+$", first))


def wrapups(msgs: Sequence[Message]) -> Iterator[tuple[Message, Statement]]:
    """Bullets of the assistant's last message of a turn in which it committed work (a turn
    ends where the person speaks again): what was done, not what is proposed."""
    last: Message | None = None
    committed = committing = False
    for msg in [*msgs, None]:
        if msg is None or (msg.is_prose and msg.role == "user"):
            if (last is not None and committed
                    and len(_BULLET_LINE.findall(last.text)) >= MIN_BULLETS):
                found = list(statements_of(parse(last.text, analysis=False), subjects=True))
                for stmt in found[:MAX_WRAPUP_STATEMENTS]:
                    yield last, stmt
            last, committed = None, False
        elif msg.tool_call and _COMMIT.search(msg.text):
            committing = True
        elif msg.role == "tool" and committing:  # the commit's result: did it go through?
            committed = committed or not _FAILED.search(msg.text[:200])
            committing = False
        elif msg.is_prose and msg.role == "assistant":
            last = msg


BRIEF_CHARS = 120
_ABS = re.compile(r"(?<![^\s='\"])(?:~|/)(?:[\w.@+-]+/)+([\w.@+-]+/[\w.@+-]+)")
# A tracker's close with its reason (gh, glab, bd, jira, ...): `X close ID --reason "..."`.
_CLOSE = re.compile(r"\b(?:close|done|resolve)\s+([\w#./-]+)\b.*?(?:--reason|--comment|-r|-c|-m)"
                    r"[= ]\s*([\"'])(.{12,}?)\2", re.DOTALL)


def _program(arg: str) -> str | None:
    """The program and subcommand of a one-command line (`cd DIR &&` allowed before it)."""
    cmd = command(arg)
    if not cmd or " && " in cmd or "|" in arg or ";" in arg:
        return None
    return " ".join(cmd.split()[:2])


def brief(arg: str) -> str:
    """A command line as a person quotes it: first line, home paths cut to their last two
    components, the trailing stderr redirect dropped."""
    line = _ABS.sub(r"\1", arg.strip().splitlines()[0] if arg.strip() else "")
    line = re.sub(r"\s*2>&1\s*$", "", line)
    return line if len(line) <= BRIEF_CHARS else line[:BRIEF_CHARS].rsplit(" ", 1)[0] + " …"


# The message of `-m "..."`; a line the reader cut short ends the message where it stops.
_MESSAGE = re.compile(r"""(?:^|\s)(?:-[a-zA-Z]*m|--message)(?:=|\s+)(["'])(.*?)(?:(?<!\\)\1|$)""",
                      re.DOTALL)
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?\n(.*?)(?:\n\s*\1\b|$)", re.DOTALL)


def commit_message(arg: str) -> str | None:
    """The message of a `git commit -m "..."` line (a heredoc's text when it holds one)."""
    m = _MESSAGE.search(arg)
    if m is None:
        return None
    text = m.group(2)
    doc = _HEREDOC.search(text)
    return doc.group(2) if doc else text
