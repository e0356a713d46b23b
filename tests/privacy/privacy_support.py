"""Reading a database the way an attacker would: raw bytes of the file and its -wal, and
every blob decoded (token matrices back to text through the shipped vocabulary)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import apsw

from hippo.embed import wordpiece
from hippo.retrieve.tokenmatrix import TokenMatrix

_ALNUM = re.compile(r"[^a-z0-9]")
_MASK = re.compile(r"\[redacted(?::[a-z0-9_]+)?\]", re.IGNORECASE)


def raw_bytes(db_path: Path) -> bytes:
    """The database file and its -wal (and -shm), as they are on disk."""
    parts = [db_path.read_bytes()]
    for suffix in ("-wal", "-shm"):
        side = Path(f"{db_path}{suffix}")
        if side.exists():
            parts.append(side.read_bytes())
    return b"\n".join(parts)


def printable_runs(raw: bytes, shortest: int = 8) -> bytes:
    """The runs of `shortest` or more printable ASCII characters without spaces in `raw`,
    one a line: every place a secret's run (ASCII, no space) could hide, far smaller than
    the file, so thousands of runs are looked up fast."""
    return b"\n".join(re.findall(rb"[\x21-\x7e]{%d,}" % shortest, raw))


def decoded_blobs(db_path: Path) -> list[str]:
    """Every blob of every table (shadow tables included) that parses as a token matrix,
    its token ids turned back into word pieces and joined: what the cache spells out."""
    pieces = {i: p for p, i in wordpiece.vocab().items()}
    conn = apsw.Connection(f"file:{db_path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY
                           | apsw.SQLITE_OPEN_URI)
    out: list[str] = []
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            try:
                rows = list(conn.execute(f'SELECT * FROM "{table}"'))
            except apsw.Error:  # a virtual table whose module is not loaded here
                continue
            for row in rows:
                for value in row:
                    if not isinstance(value, bytes) or len(value) < 8:
                        continue
                    mat = _matrix(value)
                    if mat is not None:
                        out.append("".join(pieces.get(i, "").removeprefix("##")
                                           for i in mat.ids))
    finally:
        conn.close()
    return out


def _matrix(blob: bytes) -> TokenMatrix | None:
    try:
        return TokenMatrix.from_blob(blob)
    except Exception:  # noqa: BLE001 - not a token matrix
        return None


def normalised(text: str) -> str:
    """Lower case, letters and digits only: how a wordpiece decoding reads."""
    return _ALNUM.sub("", text.lower())


def leaks(runs: Iterable[str], raw: bytes, texts: dict[str, str]) -> list[tuple[str, str]]:
    """(run, where) for each run found in the raw bytes or one of the named texts (decoded
    blobs, command outputs)."""
    texts = {name: _MASK.sub(" ", t) for name, t in texts.items()}  # the masks name kinds
    flat = {name: normalised(t) for name, t in texts.items()}
    found = []
    for run in runs:
        if run.encode() in raw:
            found.append((run, "file"))
            continue
        norm = normalised(run)
        where = next((name for name, t in texts.items() if run in t), None) or next(
            (name for name, f in flat.items() if len(norm) >= 10 and norm in f), None)
        if where:
            found.append((run, where))
    return found
