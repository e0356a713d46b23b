"""What the agent wrote into code to explain it: the doc comments its edits added, and the
settings they fixed: the named constants they set to a number (`constants`).

Code is not a statement, and an edit is read for what it fixed (`hippo.extract.fixes`).
But a doc comment an edit adds is prose the agent wrote to say what a function or module
does and why ("Launches a review session … The session is named `review-<short-id>`";
"MapSet is opaque by design; the type checker warns about …"): a statement of how the code
works now, about the thing it documents. One memory per doc comment, "`NAME` in `FILE`:
DOC" (`FILE: DOC` when it documents no named definition), typed `fact`.

Read by form only, in the lines an edit added (`+ …`, `hippo.ingest.readers`):

- a doc block: `@doc` / `@moduledoc` with a triple-quoted text, a docstring right under
  a `def` or `class` line or opening the lines added (a new file's module docstring: a
  file written whole keeps its first lines, `hippo.ingest.readers`), `/** … */`;
- a run of line comments (`#`, `//`, `///`, `--`) right above a definition or an
  attribute or decorator line (`@…`, `#[…]`).

Kept when it is prose: at least `MIN_WORDS` words, up to where examples or an argument
list start, with no directive (`TODO`, `noqa`), no commented-out code. An edit that did not
go through gives nothing.

A constant is a setting the code states ("`@default_ttl_seconds` in `…/store.ex` is 120",
typed `config`): a name set to a number, a timeout, a limit, a port; "is now V" when the edit
replaced its old value, so `hippo.extract.values` retires the memory of the old one. An
enumeration's members (numbered one after another) are no settings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from hippo.extract.conversation import _FAILED, Call, _short
from hippo.extract.cues import fit
from hippo.extract.summary import Statement
from hippo.extract.units import DEFINES

MIN_WORDS = 6
IMPORTANCE = 0.5

_ATTRIBUTE = re.compile(r"^(?:@\w|#\[)")
_DOC_OPEN = re.compile(r'^@(?:module)?doc\s+(?:~[sS])?"""\s*(.*)$')
_DEFMODULE = re.compile(r"^defmodule\s+([A-Z][\w.]*)\s+do\b")
_DOC_ONE = re.compile(r'^@(?:module)?doc\s+"([^"]{12,})"\s*$')
_DOCSTRING = re.compile(r'^[rRuU]?("""|\'\'\')\s*(.*)$')
_LINE_COMMENT = re.compile(r"^(?:///?|#(?![!\[])|--)\s?(.*)$")
# Where a doc's summary ends: examples, an argument list, a code fence, a doctest.
_STOP = re.compile(r"^(?:#+\s|examples?:?$|args:|arguments:|params:|parameters:|returns?:|raises:"
                   r"|options:|@\w|iex>|>>>|```|-{3,}|={3,})", re.IGNORECASE)
# Not prose: a directive or a note to self, commented-out code.
_DIRECTIVE = re.compile(r"^(?:todo|fixme|xxx|hack|noqa|nolint|type:|eslint|prettier|pylint|@ts-|"
                        r"pragma|istanbul|coverage:|go:|nosec|rubocop|credo:)", re.IGNORECASE)
_CODE = re.compile(r"[{};]\s*$|^\w[\w.]*\s*(?:=|\()|=>|:=")
_WORD = re.compile(r"[A-Za-z]{2,}")
# A named constant set to a number, as a module states it: an Elixir attribute (`@ttl 120`),
# an upper-case name (`MAX_RETRIES = 3`, `const PORT = 4000;`, `const LIMIT: u32 = 5;`,
# `static final int SIZE = 8;`), a Go `const`; the number may be a product (`2 * 60`,
# `5 * time.Second`) and carry `_` separators.
_NUMBER = r"\d[\d_]*(?:\.\d+)?"
_VALUE = rf"(?P<value>{_NUMBER}(?:\s*\*\s*(?:{_NUMBER}|[a-z]+\.[A-Z]\w+))*)"
_TAIL = r"\s*;?\s*(?:(?:#|//).*)?$"
_CONSTANTS = (
    re.compile(rf"^(?P<name>@[a-z]\w*)\s+{_VALUE}\s*$"),
    re.compile(r"^(?:export\s+)?(?:pub\s+)?(?:const\s+|(?:(?:private|public|protected)\s+)?"
               r"static\s+final\s+\w+\s+)?(?P<name>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,})"
               rf"\s*(?::\s*[\w:]+\s*)?=\s*{_VALUE}{_TAIL}"),
)
# Go's constants may be lower-case (in JavaScript, `const limit = 20` is any variable).
_GO_CONSTANT = re.compile(rf"^const\s+(?P<name>[a-z]\w*)\s+(?:\w+\s+)?=\s*{_VALUE}\s*(?://.*)?$")
# This many constants in a row numbered 0, 1, 2 … (or 1, 2, 3 …) are an enumeration's members.
ENUM_RUN = 3
# A tool's refusal of an edit (a file written whole may answer with a long snippet of it).
_REFUSED = re.compile(r"\s*(?:<tool_use_error>|error\b|failed\b)", re.IGNORECASE)


def _applied(seq: Sequence[Call]) -> Iterator[tuple[Call, str, list[str]]]:
    """Each edit that went through: the call, its file as a person names it, the lines it
    added."""
    for call in seq:
        if not call.diff or call.result is None or _REFUSED.match(call.result) or (
                _FAILED.search(call.result[:200])):
            continue  # an edit (it has changed lines) that did not go through
        path = _short(call.arg.split()[0]) if call.arg.split() else ""
        yield call, path, [ln[2:].strip() for ln in call.diff.splitlines() if ln.startswith("+ ")]


def constants(seq: Sequence[Call]) -> Iterator[Statement]:
    """A statement for each named constant the session's applied edits set to a number
    (a limit, a timeout, a port): "`NAME` in `FILE` is 120", "… is now 300" when the same
    edit removed its old value (`hippo.extract.values` then retires what said the old)."""
    seen: set[str] = set()
    for call, path, added in _applied(seq):
        go = path.endswith(".go")
        removed = {m.group("name"): m.group("value") for ln in call.diff.splitlines()
                   if ln.startswith("- ") and (m := _constant(ln[2:].strip(), go))}
        for name, value in _settings(added, go):
            old = removed.get(name)
            if old is not None and " ".join(old.split()) == value:
                continue  # moved, not changed
            text = f"`{name}` in `{path}` is {'now ' if old is not None else ''}{value}"
            if text not in seen:
                seen.add(text)
                yield Statement("config", text, IMPORTANCE, (), evidence=call.chunk_ids)


def _constant(line: str, go: bool) -> re.Match[str] | None:
    return next((m for c in (*_CONSTANTS, *((_GO_CONSTANT,) if go else ()))
                 if (m := c.match(line)) is not None), None)


def _settings(lines: list[str], go: bool) -> list[tuple[str, str]]:
    """(name, value) of each numbered constant in `lines`, but an enumeration's members."""
    found = [(i, m.group("name"), " ".join(m.group("value").split()))
             for i, line in enumerate(lines) if (m := _constant(line, go)) is not None]
    members: set[int] = set()
    run: list[int] = []
    for k, (i, _, value) in enumerate(found):
        prev = found[k - 1] if k else None
        if (prev is not None and prev[0] == i - 1 and value.isdigit() and prev[2].isdigit()
                and int(value) == int(prev[2]) + 1):
            run.append(i)
        else:
            run = [i]
        if len(run) >= ENUM_RUN:
            members.update(run)
    return [(name, value) for i, name, value in found if i not in members]


def doc_comments(seq: Sequence[Call]) -> Iterator[Statement]:
    """A statement for each doc comment the session's applied edits added."""
    seen: set[str] = set()
    for call, path, added in _applied(seq):
        for name, doc in _docs(added):
            text = _said(doc)
            if text is None:
                continue
            head = f"`{name}` in `{path}`: " if name else f"`{path}`: "
            text = fit(head + text)
            if text not in seen:
                seen.add(text)
                yield Statement("fact", text, IMPORTANCE, (), evidence=call.chunk_ids)


def _docs(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """(the name it documents or "", the doc's lines) of each doc comment in `lines`."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if (m := _DOC_ONE.match(line)) is not None:
            yield _name_after(lines, i + 1, line) or _module(lines, i, line), [m.group(1)]
            i += 1
        elif (m := _DOC_OPEN.match(line)) is not None or (
                (m := _DOCSTRING.match(line)) is not None
                and (DEFINES.match(lines[i - 1]) if i else bool(m.group(2)))):
            first = m.group(m.lastindex or 1)
            quote = '"""' if _DOC_OPEN.match(line) else m.group(1)
            body, j = _until(lines, i, first, quote)
            if _DOC_OPEN.match(line):
                name = _name_after(lines, j + 1, line) or _module(lines, i, line)
            else:  # a docstring: of the definition above it, or of the module it opens
                name = _defined(lines[i - 1]) if i else ""
            yield name, body
            i = j + 1
        elif line.startswith("/**"):
            body, j = _until(lines, i, line[3:], "*/")
            yield _name_after(lines, j + 1, line), [re.sub(r"^\*\s?", "", b) for b in body]
            i = j + 1
        elif _LINE_COMMENT.match(line):
            j = i
            while j < len(lines) and _LINE_COMMENT.match(lines[j]):
                j += 1
            if j < len(lines) and (DEFINES.match(lines[j]) or _ATTRIBUTE.match(lines[j])):
                yield _defined(lines[j]), [_comment(ln) for ln in lines[i:j]]
            i = j
        else:
            i += 1


def _until(lines: list[str], i: int, first: str, close: str) -> tuple[list[str], int]:
    """The body of a block opened on line `i` (its text after the opener: `first`) and the
    index of its closing line."""
    if close in first:
        return [first.split(close, 1)[0]], i
    body = [first] if first.strip() else []
    j = i + 1
    while j < len(lines) and close not in lines[j]:
        body.append(lines[j])
        j += 1
    if j < len(lines):
        body.append(lines[j].split(close, 1)[0])
    return body, j


def _name_after(lines: list[str], j: int, opener: str) -> str:
    """The name a doc documents: the definition right after it (an attribute between
    allowed); a module doc documents the module defined before it, if the edit shows it."""
    if opener.startswith("@moduledoc"):
        return ""
    while j < len(lines) and _ATTRIBUTE.match(lines[j]) and not _DOC_OPEN.match(lines[j]):
        j += 1
    return _defined(lines[j]) if j < len(lines) else ""


def _module(lines: list[str], i: int, opener: str) -> str:
    """The module a `@moduledoc` on line `i` documents: the `defmodule` right above it."""
    m = _DEFMODULE.match(lines[i - 1]) if i and opener.startswith("@moduledoc") else None
    return m.group(1) if m else ""


def _comment(line: str) -> str:
    m = _LINE_COMMENT.match(line)
    return m.group(1) if m else line


def _defined(line: str) -> str:
    m = DEFINES.match(line)
    return m.group(1) if m and m.group(1) else ""


def _said(lines: list[str]) -> str | None:
    """The doc's summary as one line, or None when it is not prose."""
    kept: list[str] = []
    for line in lines:
        line = line.strip()
        if _STOP.match(line):
            break
        if not line:
            continue
        if _DIRECTIVE.match(line) or _CODE.search(line):
            if not kept:
                return None
            break
        kept.append(line)
    text = " ".join(kept)
    if text.endswith("…"):  # a line the reader cut short: up to its last whole sentence
        stop = text.rfind(". ")
        text = text[:stop + 1] if stop > 0 else ""
    return text if len(_WORD.findall(text)) >= MIN_WORDS else None
