"""Read every readable row of a damaged database: for `hippo export --salvage` and for
`hippo doctor --fix`, which copies them into a new file and keeps the damaged one aside.

SQLite finds a row by walking its table's b-tree; a damaged page hides the rows it holds
(and, for an interior page, the rows under it), but the rows before and after it are still
reachable by key. `scan` reads a table in key order, and where a read fails it probes for
the next key that can be reached (doubling the step, then bisecting back), so one bad page
costs the rows on it and nothing else. A text that is not valid UTF-8 is kept with each bad
byte replaced (U+FFFD) and reported.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

MAX_KEY = 2**63 - 1
BATCH = 256
# Damage SQLite reports on a read: a bad page, a file cut short, a text that is not UTF-8.
READ_ERRORS = (apsw.CorruptError, apsw.NotADBError, apsw.IOError, apsw.FormatError,
               apsw.RangeError, UnicodeDecodeError)
# Tables a new file rebuilds itself: its schema record and the indexes hippo derives.
DERIVED_PREFIXES = ("sqlite_", "memories_fts", "echo_fts", "memories_vec", "echo_vec")


@dataclass(slots=True)
class Gap:
    """Keys of `table` that could not be read: first..last (last None: to the end)."""

    table: str
    first: int
    last: int | None
    reason: str

    def describe(self) -> str:
        if self.last is None:
            where = f"rows after id {self.first - 1}" if self.first > 1 else "every row"
        elif self.first == self.last:
            where = f"row {self.first}"
        else:
            where = f"ids {self.first}-{self.last}"
        return f"{self.table}: {where} unreadable ({self.reason})"


@dataclass(slots=True)
class Report:
    """What a salvage read: rows per table, gaps, and texts kept with bad bytes replaced."""

    counts: dict[str, int] = field(default_factory=dict)
    gaps: list[Gap] = field(default_factory=list)
    mended: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return [g.describe() for g in self.gaps] + self.mended


EMBED_DIM = "SELECT value FROM meta WHERE key = ?"


def open_source(path: Path | str) -> apsw.Connection:
    """The damaged file, read-only, with sqlite-vec loaded (nothing is ever written to it)."""
    from hippo.store.sqlite.errors import translate
    from hippo.store.sqlite.opening import _vec_extension_path

    try:
        conn = apsw.Connection(f"file:{Path(path).resolve()}?mode=ro",
                               flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        conn.enable_load_extension(True)
        conn.load_extension(_vec_extension_path())
        conn.enable_load_extension(False)
        # Parse what can be parsed of a damaged schema (a table whose pages are gone is then
        # reported by its reads). Nothing is written: the file is opened read-only.
        conn.execute("PRAGMA writable_schema = ON")
    except apsw.Error as exc:
        raise translate(exc, path) from exc
    return conn


def _columns_sql(columns: Sequence[str]) -> str:
    """Each column with its type, texts as bytes: a bad byte is mended here, not fatal."""
    return ", ".join(f"typeof({c}), CASE WHEN typeof({c}) = 'text' THEN CAST({c} AS BLOB) "
                     f"ELSE {c} END" for c in columns)


def _decode(raw: Sequence[Any], columns: Sequence[str], table: str, key: Any,
            report: Report) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for i, name in enumerate(columns):
        kind, value = raw[2 * i], raw[2 * i + 1]
        if kind == "text":
            value = bytes(value)
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                value = value.decode("utf-8", "replace")
                report.mended.append(f"{table}: row {key}: {name} was not valid UTF-8; kept "
                                     "with the bad bytes replaced")
        row[name] = value
    return row


def scan(conn: apsw.Connection, table: str, columns: Sequence[str],
         report: Report) -> Iterator[dict[str, Any]]:
    """Every readable row of a rowid table, in rowid order; each unreadable run of keys is
    appended to `report.gaps`."""
    cols = _columns_sql(columns)
    page = f"SELECT rowid, {cols} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT {BATCH}"
    one = f"SELECT rowid, {cols} FROM {table} WHERE rowid = ?"
    last = -MAX_KEY - 1
    count = 0
    while True:
        got = 0
        try:
            for raw in conn.execute(page, (last,)):
                got += 1
                last = raw[0]
                count += 1
                yield _decode(raw[1:], columns, table, raw[0], report)
        except READ_ERRORS as exc:
            reason = _reason(exc)
            nxt = _next_key(conn, table, last)
            if nxt is None:
                report.gaps.append(Gap(table, last + 1, None, reason))
                break
            try:
                raw = conn.execute(one, (nxt,)).fetchone()
            except READ_ERRORS:
                report.gaps.append(Gap(table, last + 1, nxt, reason))  # its own pages too
                last = nxt
                continue
            if nxt > last + 1:
                report.gaps.append(Gap(table, last + 1, nxt - 1, reason))
            last = nxt
            if raw is not None:
                count += 1
                yield _decode(raw[1:], columns, table, nxt, report)
            continue
        if got < BATCH:
            break
    report.counts[table] = report.counts.get(table, 0) + count


def _reads(conn: apsw.Connection, table: str, after: int) -> int | None | bool:
    """The first key after `after` (None: no more), or False when the read fails."""
    try:
        row = conn.execute(f"SELECT rowid FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1",
                           (after,)).fetchone()
    except READ_ERRORS:
        return False
    return None if row is None else int(row[0])


def _next_key(conn: apsw.Connection, table: str, last: int) -> int | None:
    """The first key past the damage after `last`: step out doubling until a read lands
    beyond the bad pages, then bisect back to the first start that reads."""
    bad, step = last, 1
    while True:
        probe = min(MAX_KEY - 1, last + step)
        found = _reads(conn, table, probe)
        if found is not False:
            break
        bad = probe
        if probe >= MAX_KEY - 1:
            return None
        step *= 2
    good = probe
    while good - bad > 1:
        mid = (bad + good) // 2
        at = _reads(conn, table, mid)
        if at is False:
            bad = mid
        else:
            good, found = mid, at
    return found if isinstance(found, int) else None


def scan_plain(conn: apsw.Connection, table: str, columns: Sequence[str],
               report: Report) -> Iterator[dict[str, Any]]:
    """A table without rowids (provenance links, undo records): read in order until the
    first damaged page; what follows it is reported, not probed."""
    count = 0
    try:
        for raw in conn.execute(f"SELECT {_columns_sql(columns)} FROM {table}"):
            count += 1
            yield _decode(raw, columns, table, count, report)
    except READ_ERRORS as exc:
        report.gaps.append(Gap(table, count + 1, None, _reason(exc)))
    report.counts[table] = report.counts.get(table, 0) + count


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "a name that is not UTF-8"
    return " ".join(str(exc).split()) or type(exc).__name__


def _tables(conn: apsw.Connection) -> dict[str, tuple[list[str], bool]]:
    """Each regular table hippo keeps: its columns and whether it has rowids."""
    out: dict[str, tuple[list[str], bool]] = {}
    for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"):
        if name.startswith(DERIVED_PREFIXES) or name == "_migrations" or not sql:
            continue
        if sql.upper().startswith("CREATE VIRTUAL"):
            continue
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({name})")]
        out[name] = (cols, "WITHOUT ROWID" not in sql.upper())
    return out


def copy_readable(src: apsw.Connection, dst: apsw.Connection) -> Report:
    """Copy every readable row of every table the new file has into it (one transaction;
    the full-text indexes fill through their triggers, vectors are re-created by doctor
    from the embed cache)."""
    report = Report()
    try:
        theirs = _tables(src)
    except READ_ERRORS as exc:
        report.gaps.append(Gap("schema", 1, None, _reason(exc)))
        return report
    ours = _tables(dst)
    dst.execute("PRAGMA foreign_keys = OFF")
    dst.execute("BEGIN IMMEDIATE")
    try:
        for table, (cols, rowid) in ours.items():
            if table not in theirs:
                continue
            common = [c for c in cols if c in theirs[table][0]]
            insert = (f"INSERT OR REPLACE INTO {table}({', '.join(common)}) VALUES "
                      f"({', '.join('?' * len(common))})")
            rows = (scan(src, table, common, report) if rowid and theirs[table][1]
                    else scan_plain(src, table, common, report))
            for row in rows:
                dst.execute(insert, [row[c] for c in common])
        _sequences(src, dst, report)
        dst.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(apsw.Error):
            dst.execute("ROLLBACK")
        raise
    dst.execute("PRAGMA foreign_keys = ON")
    return report


def _sequences(src: apsw.Connection, dst: apsw.Connection, report: Report) -> None:
    """AUTOINCREMENT counters carried over, so no id the old file handed out comes again."""
    has = "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'"
    if not dst.execute(has).fetchone():
        return
    try:
        if not src.execute(has).fetchone():
            return
        seqs = list(src.execute("SELECT name, seq FROM sqlite_sequence"))
    except READ_ERRORS as exc:
        report.gaps.append(Gap("sqlite_sequence", 1, None, _reason(exc)))
        return
    for name, seq in seqs:
        dst.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", (seq, name))
        if dst.changes() == 0:
            dst.execute("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)", (name, seq))


class Reader:
    """Every readable row of a damaged file (`hippo.store.salvage_reader`): opened on the
    first read, read-only; what could not be read is gathered in `report`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.report = Report()
        self._conn: apsw.Connection | None = None

    def read(self, table: str, columns: Sequence[str]) -> Iterator[dict[str, Any]]:
        """Every readable row of `table` (those `columns`), in id order."""
        if self._conn is None:
            self._conn = open_source(self.path)
        return scan(self._conn, table, columns, self.report)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def rebuild(path: Path) -> tuple[Report, Path]:
    """Salvage `path` into a new hippo file that takes its place; the damaged file (and its
    -wal) is kept beside it as PATH.corrupt-STAMP. Returns what was read and where the old
    file went."""
    from hippo.store.sqlite.database import connect
    from hippo.store.sqlite.files import clear_corrupt
    from hippo.store.sqlite.vectors import vec_table_ddl
    from hippo.store.vectors import TABLES

    stamp = _stamp()
    fresh = path.with_name(f"{path.name}.salvage-{stamp}")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    src = open_source(path)
    try:
        new = connect(fresh, mode="write")
        try:
            report = copy_readable(src, new.conn)
            for store in TABLES:
                dim = new.scalar(EMBED_DIM, (f"{store}.embed_dim",))
                if dim:  # an empty index of the recorded model: doctor fills it
                    new.execute(vec_table_ddl(store, int(dim)))
        finally:
            new.close()
    except BaseException:
        for p in (fresh, Path(f"{fresh}-wal"), Path(f"{fresh}-shm")):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        raise
    finally:
        src.close()
    for suffix in ("-wal", "-shm"):  # the damaged file's log goes with it
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    os.replace(path, aside)
    os.replace(fresh, path)
    clear_corrupt(path)
    return report, aside
