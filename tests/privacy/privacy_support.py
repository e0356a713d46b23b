"""Reading a database the way an attacker would: raw bytes of the file and its -wal, and
every blob decoded (token matrices back to text through the shipped vocabulary).

A PostgreSQL store (its URL) is read the same way: the files of every relation of its
schema (tables, indexes, TOAST) as the server has written them to disk after a CHECKPOINT,
and every `bytea` value of its tables. The server's write-ahead log is not read: it keeps
history by design (docs/privacy.md says what a team gets)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import apsw

from hippo.embed import wordpiece
from hippo.retrieve.tokenmatrix import TokenMatrix
from tests.reliability.harness import server_bytes

_ALNUM = re.compile(r"[^a-z0-9]")
_MASK = re.compile(r"\[redacted(?::[a-z0-9_]+)?\]", re.IGNORECASE)


def _server_blobs(url: str) -> list[bytes]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cols = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND data_type = 'bytea'").fetchall()
        return [bytes(r[0]) for t, c in cols
                for r in conn.execute(f'SELECT "{c}" FROM "{t}" WHERE "{c}" IS NOT NULL')]


def raw_bytes(db_path: Path | str) -> bytes:
    """The database file and its -wal (and -shm), as they are on disk (a server: the files
    of its schema's relations)."""
    if isinstance(db_path, str):
        return server_bytes(db_path)
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


def decoded_blobs(db_path: Path | str) -> list[str]:
    """Every blob of every table (shadow tables included) that parses as a token matrix,
    its token ids turned back into word pieces and joined: what the cache spells out."""
    pieces = {i: p for p, i in wordpiece.vocab().items()}
    if isinstance(db_path, str):
        mats = [m for m in map(_matrix, _server_blobs(db_path)) if m is not None]
        return ["".join(pieces.get(i, "").removeprefix("##") for i in m.ids) for m in mats]
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
