"""A task shown done: the tracker close or the commit that names it retires what said it was
still open.

The evidence is structural: a tracker's close of an id (`bd close ID`, `gh issue close N`,
`glab issue close N`, `jira issue move KEY Done`, ...) or a commit whose message names the
id (`feat: ... (proj-x.3)`, `Closes #12`). The memories it retires are this project's active
machine memories of a pending kind (a `task` or `todo`, or anything tagged pending) that
name the same id as a whole token: `gqc.6` is not `gqc.61`, `#12` is not `#123`. A
person's memory is never changed. Each retirement is `status = done` with `superseded_by`
the memory that showed it, in the extract run (so `hippo undo RUN` restores it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hippo.extract.base import PENDING_TAG

PENDING_TYPES = frozenset({"task", "todo"})
# An id a tracker gives: `proj-abc.3` (beads), `ABC-123` (jira), `#123` (gh, glab).
ID = re.compile(r"(?<![\w#/.-])(?:[a-z][a-z0-9]*-[a-z0-9]+(?:\.\d+)+|[A-Z][A-Z0-9]+-\d+|#\d+)"
                r"(?![\w-]|\.\d)")
# A commit subject's closing parenthesis names its task: `feat: ... (proj-abc)`.
_TRAILING = re.compile(r"\(([a-z][a-z0-9]*-[a-z0-9]+(?:\.\d+)*)\)\s*$")
_CUT = "…[truncated"
_CLOSES_IN_MESSAGE = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+(#\d+)", re.IGNORECASE)


def ids_in_commit(message: str) -> list[str]:
    """The task ids a commit message's subject names, and `Closes #N` anywhere in it."""
    subject = message.strip().splitlines()[0] if message.strip() else ""
    if _CUT in subject:
        return []  # the reader cut the subject short: what it names is not known
    named = [m.group(0) for m in ID.finditer(subject) if not m.group(0).startswith("#")]
    named += _TRAILING.findall(subject)
    return list(dict.fromkeys([*named, *_CLOSES_IN_MESSAGE.findall(message)]))


def _forms(task_id: str) -> list[str]:
    """The id, and for a prefixed one (`proj-abc.3`) its part after the prefix (`abc.3`)
    when that part is still specific (it has a dot and a number)."""
    out = [task_id]
    head, _, rest = task_id.partition("-")
    if rest and re.search(r"\.\d", rest) and head.isalpha():
        out.append(rest)
    return out


def names(text: str, task_id: str) -> bool:
    """`text` names `task_id` as a whole token (any case)."""
    for form in _forms(task_id):
        if re.search(rf"(?<![\w#.-]){re.escape(form)}(?![\w-]|\.\d)", text, re.IGNORECASE):
            return True
    return False


# Anything shaped like a task id, as text names it (`Spotter-fum.4`, `fum.2`, `ABC-12`, `#3`).
_ANY_ID = re.compile(r"(?<![\w#.-])(?:(?:[a-z][a-z0-9]*-)?[a-z][a-z0-9]*(?:\.\d+)+|[a-z]+-\d+|#\d+)"
                     r"(?![\w-]|\.\d)", re.IGNORECASE)


def about(text: str, task_id: str) -> bool:
    """`text` is about `task_id`: the first task id it names is that one ("fum.4, blocked by
    fum.2" is about fum.4, not fum.2)."""
    first = _ANY_ID.search(text)
    return first is not None and names(first.group(0), task_id)


def pending(row: dict, tags: Iterable[str]) -> bool:
    return row["type"] in PENDING_TYPES or PENDING_TAG in set(tags)


def retired(rows: Iterable[dict], task_ids: Iterable[str], before: int) -> list[int]:
    """Ids of the rows (active memories of the project, as records) that are pending
    machine memories written before memory `before` and are about one of `task_ids` (the
    first task they name)."""
    ids = list(task_ids)
    out = []
    for row in rows:
        if (row["id"] < before and row["author"] == "machine" and row["status"] == "active"
                and pending(row, row.get("tags") or ())
                and any(about(row["text"], t) for t in ids)):
            out.append(int(row["id"]))
    return out


# An open problem as a memory states it, and what says it is solved.
OPEN = re.compile(
    r"^(?:current|open|blocked|blocker|blocking)\b\s*:|\b(?:still (?:fails|failing|broken|"
    r"errors?)|is failing|fails with|needs? to (?:fix|restructure|resolve|rewrite)|not yet "
    r"(?:fixed|resolved|working)|unresolved|open (?:bug|issue|problem)"
    r"|(?:issues?|errors?|bugs?|problems?|failures?) to (?:fix|resolve))\b"
    r"|^fix\b[^.;:]{0,40}?\b(?:errors?|issues?|bugs?|failures?|problems?|warnings?)\b"
    r"|\b(?:compile|credo|dialyzer|type|syntax|runtime|lint|test) (?:error|failure|warning)s?"
    r"\b(?: (?:at|on|in) line \d+)?", re.IGNORECASE)
SOLVED = re.compile(r"\b(?:fixed|resolved|solved|now passes|passes now|works now|no longer "
                    r"fails)\b|; `[^`]+` passed$|it passed after (?:editing|running)", re.IGNORECASE)
_STEM = re.compile(r"(?:ing|ed|es|s)$")
_SALIENT = re.compile(r"[A-Za-z][\w.:/\[\]-]*[\w\]]")
_GENERIC = frozenset(["error", "errors", "issue", "issues", "problem", "problems", "compile", "compiled", "compiling", "failed", "fails", "failing", "fixed", "fixes", "resolve", "resolved", "restructure", "inside", "function", "module", "added", "should", "would", "could", "which", "where", "there", "their", "about", "after", "before", "cannot", "because"])


# A diagnostic as compilers and linters print it: `path/file.ext:LINE:kind` or `file.ext:LINE: …`.
DIAGNOSTIC = re.compile(r"[\w./-]+\.[A-Za-z]{1,6}:\d+(?::\d+)?:\s?\w")


def is_problem(text: str) -> bool:
    """`text` states an open problem: an error, a failing check, a diagnostic."""
    return bool((OPEN.search(text) or DIAGNOSTIC.search(text)) and not SOLVED.search(text))


def salient(text: str) -> frozenset[str]:
    """The words that say what a problem is about: names (with `_`, `.`, `/`, digits, inner
    capitals) and words of five letters or more, less the words every problem uses."""
    out = set()
    for w in _SALIENT.findall(text):
        low = w.lower()
        if low in _GENERIC:
            continue
        if re.search(r"[_./:\d]|[a-z][A-Z]", w):
            out.add(low)  # a name, as written
        elif len(w) >= 5:
            out.add(_STEM.sub("", low) if len(low) >= 6 else low)  # nested ~ nesting
    return frozenset(out)


def solves(problem: str, evidence: str) -> bool:
    """`evidence` says the open `problem` is solved: it reports a fix and shares two of
    the problem's salient words (or one name, like `compute_groups` or `a.ex`)."""
    if not OPEN.search(problem) or SOLVED.search(problem) or not SOLVED.search(evidence):
        return False
    shared = salient(problem) & salient(evidence)
    return len(shared) >= 2 or any(re.search(r"[_./:]|\d", w) for w in shared)


def solved(rows: Iterable[dict], evidence: str, session: str, before: int) -> list[int]:
    """Open problems this session wrote (machine memories older than `before`) that the
    `evidence` of the same session shows solved."""
    out = []
    for row in rows:
        sessions = (row.get("source") or {}).get("session")
        keys = sessions if isinstance(sessions, list) else [sessions]
        if (row["id"] < before and row["author"] == "machine" and row["status"] == "active"
                and session in keys and solves(row["text"], evidence)):
            out.append(int(row["id"]))
    return out


def fixed(rows: Iterable[dict], touches: Iterable[tuple[str, int]], session: str,
          before: int) -> list[int]:
    """Open problems this session wrote (machine memories older than `before`) whose files
    (every one they name) the session edited after saying them (`touches`: file name,
    chunk of its edit) and then committed."""
    out = []
    for row in rows:
        source = row.get("source") or {}
        sessions = source.get("session")
        keys = sessions if isinstance(sessions, list) else [sessions]
        said = min(source.get("chunks") or [0])
        if (row["id"] < before and row["author"] == "machine" and row["status"] == "active"
                and session in keys and is_problem(row["text"])):
            named = files_named(row["text"])
            after = {name for name, chunk in touches if said <= chunk}
            if named and named <= after:
                out.append(int(row["id"]))
    return out


_FILE = re.compile(r"(?<![\w.-])((?:[\w.@-]+/)*)([\w-]+(?:\.[\w-]+)*\.([A-Za-z]{1,6}))"
                   r"(?![\w/-]|\.\w)")
# Extensions of source, config and docs files; a name with another one (`Access.get`,
# `os.path`) is a file only when a path leads to it.
_SOURCE_EXT = frozenset([
    "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "rs", "rb", "ex", "exs", "erl",
    "hs", "ml", "java", "kt", "kts", "scala", "c", "h", "cc", "cpp", "hpp", "cs", "php",
    "swift", "m", "mm", "dart", "lua", "r", "jl", "zig", "nim", "clj", "sh", "bash", "zsh",
    "ps1", "sql", "css", "scss", "sass", "less", "html", "htm", "vue", "svelte", "md", "rst",
    "txt", "json", "jsonl", "yaml", "yml", "toml", "ini", "cfg", "conf", "env", "lock", "xml",
    "gradle", "proto", "graphql", "tf", "mk", "cmake", "dockerfile"])


def files_named(text: str) -> set[str]:
    """The file names (last path component, with an extension) `text` names."""
    return {m.group(2) for m in _FILE.finditer(text)
            if not m.group(2)[0].isdigit() and len(m.group(2).split(".")[0]) > 1
            and (m.group(1) or m.group(3).lower() in _SOURCE_EXT)}
