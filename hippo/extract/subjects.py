"""The file a statement is about, carried into it: "The build script expects …" said right
after the agent read `assets/build.js` becomes "The build script (`assets/build.js`)
expects …", so the memory reads correctly alone.

A statement is carried when it opens with a noun phrase that names a kind of file or code
("The build script", "This module", "The test config") and the agent read a file since its
previous prose: the one file read, for "This file" and the like; else the one file read
whose path shares a word with the phrase (`build` in `assets/build.js`, `parser` in
`jsonl_parser.ex`). A statement that already names that file is left as it is. Only the order
of prose and calls is read, never a project's words; the path comes from the read call,
whose chunk joins the statement's evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hippo.extract.blocks import Message
from hippo.extract.closing import files_named
from hippo.extract.conversation import EDIT_RESULT_CHARS, _is_file, _short, call_parts

# A kind of file or code a noun phrase can name.
_KINDS = ("script|file|config|configuration|module|test|tests|suite|spec|function|hook|"
          "component|template|migration|fixture|schema|stylesheet|page|controller|class|"
          "handler|parser|renderer|router|helper|service|workflow|makefile|dockerfile|"
          "package|library|plugin|endpoint|view|model|layout|entry point")
_PHRASE = re.compile(rf"^(?:The|This|That)\s+((?:[\w.-]+\s+){{0,2}}?)(?:{_KINDS})s?\b(?!\s*\()",
                     re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])")

Read = tuple[str, tuple[int, ...]]  # the path read, the chunks of its call


def reads_before(msgs: Sequence[Message]) -> dict[int, list[Read]]:
    """For each prose message (by `id()`), the files the agent read since its previous
    prose: a call on a file path, no edit, that returned the file (a long result)."""
    out: dict[int, list[Read]] = {}
    since: list[Read] = []
    for i, msg in enumerate(msgs):
        if msg.is_prose:
            if since:
                out[id(msg)] = since
            since = []
        elif msg.tool_call:
            _, arg, diff = call_parts(msg.text)
            result = msgs[i + 1] if i + 1 < len(msgs) and msgs[i + 1].role == "tool" else None
            if (not diff and _is_file(arg) and result is not None
                    and len(result.text) >= EDIT_RESULT_CHARS):
                since.append((arg.split()[0], tuple(msg.chunk_ids)))
    return out


def carry(text: str, reads: Sequence[Read]) -> tuple[str, tuple[int, ...]] | None:
    """`text` with the file it is about after its opening noun phrase, and the chunks of
    that read; None when it names no kind of file, already names a file, or which file is
    not clear."""
    m = _PHRASE.match(text)
    if m is None or not reads:
        return None
    paths = list(dict.fromkeys(p for p, _ in reads))
    words = {w.lower() for w in _WORDS.findall(m.group(0))} - {"the", "this", "that"}
    sharing = [p for p in paths if words & {w.lower() for w in _WORDS.findall(_short(p))}]
    if len(sharing) == 1:
        path = sharing[0]
    elif len(paths) == 1 and not m.group(1).strip():
        path = paths[0]  # "This file", "The module": the one file read
    else:
        return None
    if re.split(r"[/\\]", path)[-1] in files_named(text):
        return None  # it names the file already
    chunks = tuple(c for p, cs in reads if p == path for c in cs)
    return f"{m.group(0)} (`{_tail(path)}`){text[m.end():]}", chunks


def _tail(path: str) -> str:
    """A file as the statement names it: its folder and name."""
    return "/".join(re.split(r"[/\\]", path)[-2:])
