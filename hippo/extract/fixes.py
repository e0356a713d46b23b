"""An edit that fixes what the session said was wrong: the problem and its fix, one memory.

The readers keep the lines an edit call changed (`- old` / `+ new`, `hippo.ingest.readers`).
An edit is the fix of a problem when:

- **the agent said it just before**: the assistant's prose right before the edit (no other
  call between) states a problem or its cause ("the LiveView process can't access the
  sandbox", "`x` is never nil, so the guard can never be false"), or says what it fixes
  ("Now fix the nesting issue by extracting a helper");
- **or the edit removes the code a problem quotes**: a statement of the session (a
  compaction summary's open error, a diagnostic) quotes a line the edit takes out.

And the fix held: the edit succeeded, and later in the session a commit or a check (a test,
build, compile or lint command) succeeded. The memory is the problem as it was said, then
"Fixed in `FILE`: `OLD` → `NEW`" with at most a few changed lines; it replaces the problem's
own memory (`hippo.extract.supersede`), so search answers with the fix. Only structure is
read (the order of prose and calls, exit status, quoted code); never a language's or a
project's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from hippo.extract.blocks import Message
from hippo.extract.closing import is_problem, salient
from hippo.extract.conversation import _FAILED, EDIT_RESULT_CHARS, TESTER, Call, _short, is_commit
from hippo.extract.evidence import is_shell
from hippo.extract.summary import Statement

FIX_TAG = "fix"
MAX_CHARS = 400
MAX_WALK = 24  # messages back from an edit to the prose that explains it
MAX_REMOVED = 2
MAX_ADDED = 3
LINE_CHARS = 100
# What a bare negation states of a thing's use ("X is not referenced anymore", "Y isn't
# needed"): a finding that leads to a change, not a problem an edit fixes.
_DISUSE = re.compile(r"\b(?:is not|isn't|aren't|are not|no longer)\s+(?:\w+ly\s+)?(?:referenced"
                     r"|used|needed|required|imported|called|rendered|mounted)\b", re.IGNORECASE)
# A problem or its cause, as the agent states it.
PROBLEM = re.compile(
    r"\b(?:can't|cannot|can never|couldn't|doesn't|does not|don't|isn't|is not|aren't|won't|"
    r"never|fail(?:s|ed|ing|ure)?|errors?|bugs?|issues?|problems?|missing|wrong|broken|"
    r"because|instead of|no longer|not (?:found|defined|set))\b", re.IGNORECASE)
_FIX_INTENT = re.compile(r"^(?:(?:now|next|so|then|ok(?:ay)?|good)[,.]?\s+)?(?:let me |let's |"
                         r"i'll |i will |i need to |we need to )?(fix|resolve|correct)\b\s+(.*)$",
                         re.IGNORECASE)
_CHECK = re.compile(r"\b(?:build|compile|lint|check|typecheck|vet)\b", re.IGNORECASE)
# A line that defines something: what a fix added is best named by it.
_DEFINES = re.compile(r"^(?:export\s+)?(?:pub(?:\(\w+\))?\s+)?(?:async\s+)?(?:def|defp|defmodule|"
                      r"function|func|fn|class|struct|interface|type|const|let|var|impl)\b")
_COMMENT = re.compile(r"^(?:#|//|/\*|\*|--|%|;;|<!--)")
_CODE_SPAN = re.compile(r"`([^`\n]{12,})`")
_WS = re.compile(r"\s+")

Said = Callable[[Message], list[str]]


def fixes(msgs: Sequence[Message], seq: Sequence[Call], said: Said,
          problems: Sequence[tuple[str, Sequence[int]]]
          ) -> Iterator[tuple[Statement, tuple[str, ...], tuple[int, ...]]]:
    """(the fix as a statement, the problem statements it replaces, the chunks of the call
    that showed it held) for each edit of the session that fixes a problem. `seq` is
    `calls(msgs)`; `said(msg)` the statements the
    extractor keeps of a prose message; `problems` statements the session made, each with
    its chunks, that may quote code (a summary's open errors)."""
    quoted = [(p, tuple(ev), spans) for p, ev in problems if is_problem(p) and (spans := _spans(p))]
    known: dict[int, list[str]] = {}

    def said_once(msg: Message) -> list[str]:  # a message's statements, read once
        if id(msg) not in known:
            known[id(msg)] = said(msg)
        return known[id(msg)]

    at: dict[int, int] = {}  # a tool call's message index -> its place in `seq`
    for i, msg in enumerate(msgs):
        if msg.tool_call:
            at[i] = len(at)
    seen: set[str] = set()
    for i, k in at.items():
        call = seq[k] if k < len(seq) else None
        if call is None or not call.diff or not _applied(call):
            continue
        held = _held(seq[k + 1:])
        if held is None:
            continue
        found = _by_quote(call, quoted) or _by_prose(_before(msgs, i, at, seq), said_once, call)
        if found is None:
            continue
        problem, replaces, evidence = found
        text = _text(problem, call)
        if text is None or text in seen:
            continue
        seen.add(text)
        yield (Statement("insight", text, 0.55, (),
                         evidence=tuple(dict.fromkeys((*evidence, *call.chunk_ids)))), replaces,
               held.chunk_ids)


def _before(msgs: Sequence[Message], i: int, at: dict[int, int], seq: Sequence[Call]
            ) -> list[Message]:
    """The agent's prose since the session's last command or edit before message `i`,
    nearest first: what it said while it read its way to the edit (a person's words end
    the walk)."""
    out: list[Message] = []
    for j in range(i - 1, max(-1, i - 1 - MAX_WALK), -1):
        msg = msgs[j]
        if msg.tool_call:
            c = seq[at[j]] if at[j] < len(seq) else None
            if c is None or c.diff or is_shell(c):
                break
        elif msg.is_prose:
            if msg.role != "assistant":
                break
            out.append(msg)
    return out


def _applied(call: Call) -> bool:
    return (call.result is not None and len(call.result) < EDIT_RESULT_CHARS
            and not _FAILED.search(call.result[:200]))


def _held(later: Sequence[Call]) -> Call | None:
    """The first commit or check that succeeded after the edit."""
    return next((c for c in later if is_shell(c) and c.result is not None
                 and not _FAILED.search(c.result[:200])
                 and (is_commit(c) or TESTER.search(c.arg) or _CHECK.search(c.arg))), None)


def _spans(text: str) -> list[str]:
    """The code a statement quotes: spans of a line's shape (a name alone is not one)."""
    return [span for s in _CODE_SPAN.findall(text) if " " in (span := _WS.sub(" ", s).strip())]


def _by_quote(call: Call, quoted: Sequence[tuple[str, tuple[int, ...], list[str]]]
              ) -> tuple[str, tuple[str, ...], tuple[int, ...]] | None:
    removed = [_WS.sub(" ", ln[2:]) for ln in call.diff.splitlines() if ln.startswith("- ")]
    for problem, evidence, spans in quoted:
        if any(span in line for span in spans for line in removed):
            return problem, (problem,), evidence
    return None


def _by_prose(prose: Sequence[Message], said: Said, call: Call
              ) -> tuple[str, tuple[str, ...], tuple[int, ...]] | None:
    """The problem the nearest prose that states one says (or the fix it announces), and
    every problem statement before it that shares a name or two words with it and the
    edit."""
    for n, msg in enumerate(prose):
        stated = [s for s in said(msg) if _problem(s)]
        problem = " ".join(stated[:2]) if stated else _intent(msg.text)
        if problem is not None:
            break
    else:
        return None
    about = salient(problem) | salient(call.diff)
    earlier = [s for m in prose[n + 1:] for s in said(m) if _problem(s)
               and _shares(salient(s), about)]
    return problem, (*stated[:2], *earlier), tuple(msg.chunk_ids)


def _problem(statement: str) -> bool:
    """A problem an edit may fix: `PROBLEM`'s words, once a finding of disuse is set aside."""
    return PROBLEM.search(_DISUSE.sub(" ", statement)) is not None


def _intent(text: str) -> str | None:
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
        m = _FIX_INTENT.match(sentence.strip())
        if m and len(m.group(2).split()) >= 3:
            return m.group(1).capitalize() + " " + m.group(2).rstrip(":. ")
    return None


def _shares(words: frozenset[str], about: frozenset[str]) -> bool:
    shared = words & about
    return len(shared) >= 2 or any(re.search(r"[_./:]|\d", w) for w in shared)


def _text(problem: str, call: Call) -> str | None:
    """"PROBLEM. Fixed in `FILE`: `OLD` → `NEW`", within MAX_CHARS."""
    lines = [ln for ln in call.diff.splitlines() if ln != "…"]
    said = _WS.sub(" ", problem)
    removed = [_line(ln) for ln in lines if ln.startswith("- ")]
    added = [_line(ln) for ln in lines if ln.startswith("+ ")]
    # A line moved, a bracket, a comment or what the problem quotes already says nothing
    # of the change; a definition names it best.
    moved = set(removed) & set(added)
    removed = [ln for ln in removed if ln not in moved and _says(ln)
               and _WS.sub(" ", ln) not in said and not _COMMENT.match(ln)][:MAX_REMOVED]
    added = sorted((ln for ln in added if ln not in moved and _says(ln)),
                   key=lambda ln: (not _DEFINES.match(ln), bool(_COMMENT.match(ln))))[:MAX_ADDED]
    if not removed and not added:
        return None
    old = "; ".join(f"`{ln}`" for ln in removed)
    new = "; ".join(f"`{ln}`" for ln in added)
    change = f"{old} → {new}" if old and new else (new or old)
    head = f" Fixed in `{_short(call.arg.split()[0])}`: "
    problem = problem.rstrip()
    problem = problem if problem.endswith((".", "!", "?")) else problem + "."
    room = MAX_CHARS - len(head) - len(change)
    if room < 40:
        change = change[:MAX_CHARS - len(head) - 80].rsplit(" ", 1)[0] + " …"
        room = MAX_CHARS - len(head) - len(change)
    if len(problem) > room:
        problem = problem[:room - 2].rsplit(" ", 1)[0] + " …"
    return f"{problem}{head}{change}"


def _says(line: str) -> bool:
    """A changed line that shows something: not a bracket, nor one name of a list
    (`TranscriptRenderer,`, `:ok`)."""
    return bool(re.search(r"\w", line)) and not _ITEM.fullmatch(line)


_ITEM = re.compile(r"[\[({]*[:@$]?[\w.]+[\])}]*[,;]?")


def _line(diff_line: str) -> str:
    line = diff_line[2:].replace("`", "'").rstrip("…").strip()
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS - 2].rsplit(" ", 1)[0] + " …"
