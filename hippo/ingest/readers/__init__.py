"""Transcript readers: one module per format behind a two-method interface (`_base.Reader`).

`detect` picks a reader from the file's location, name and first bytes (most specific first,
plain text last); `get_reader` serves `--format`. Readers are pure: they read a file and
return messages, never touching the database.
"""

from __future__ import annotations

from pathlib import Path

from hippo.ingest.readers import aider, claude_code, codex, gemini, generic
from hippo.ingest.readers._base import Reader

HEAD_BYTES = 65536  # how much of a file `detect` callers should pass as `head`


# Detection order: specific formats first, generic JSON next, plain text as the fallback.
READERS: dict[str, Reader] = {
    r.name: r
    for r in (
        claude_code.READER,
        codex.READER,
        gemini.READER,
        aider.READER,
        generic.GENERIC,
        generic.TEXT,
    )
}
ALIASES = {
    "claude": "claude-code",
    "gemini": "gemini-cli",
    "generic": "generic-jsonl",
    "json": "generic-jsonl",
    "jsonl": "generic-jsonl",
}


def detect(path: Path, head: bytes) -> Reader:
    """The first reader whose sniff accepts the file; plain text when nothing else does."""
    for reader in READERS.values():
        if reader.sniff(path, head):
            return reader
    return READERS["text"]


def get_reader(name: str) -> Reader:
    """The reader for a `--format` value (aliases like `claude` accepted)."""
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    try:
        return READERS[key]
    except KeyError:
        known = ", ".join(READERS)
        raise ValueError(f"unknown transcript format {name!r}; known formats: {known}") from None


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first bytes of a file, for `detect`."""
    with path.open("rb") as fh:
        return fh.read(size)
