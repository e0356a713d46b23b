"""`hippo doctor` where the other tests do not look: a writer holding the lock, and a file
whose bytes were damaged. (Its checks and repairs: tests/reliability/test_doctor.py.)"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from hippo.config import is_server
from tests.reliability.harness import one_line_error, run


def test_a_busy_database_is_exit_75_not_a_broken_index(cli, db_path: Path,
                                                       isolated_home: Path) -> None:
    cli("add", "a memory")
    env = {**os.environ, "HIPPO_BUSY_TIMEOUT_MS": "100", "HIPPO_EMBEDDER": "hash"}
    with _writer(db_path):
        for args in (["doctor", "--json"], ["doctor", "--fix", "--json"]):
            op = run(db_path, *args, env=env)
            if is_server(db_path):
                # The server's checks take no lock, and a sound store needs no repair: a
                # writer elsewhere changes nothing.
                assert op.rc == 0 and b'"ok":false' not in op.stdout, op.stderr
                continue
            assert op.rc == 75 and one_line_error(op), op.stderr
            assert b'"ok":false' not in op.stdout  # no index reported broken
    assert cli("doctor", "--json").exit_code == 0


@contextlib.contextmanager
def _writer(db_path: Path | str) -> Iterator[None]:
    """Another process's write transaction, holding the store's write lock."""
    if is_server(db_path):
        from hippo.store import connect
        from hippo.store.postgres.database import PgDatabase

        db = connect(db_path)
        assert isinstance(db, PgDatabase)
        try:
            with db.transaction():
                yield
        finally:
            db.close()
        return
    writer = apsw.Connection(str(db_path))
    writer.execute("BEGIN IMMEDIATE")  # the FTS integrity-check needs this lock too
    try:
        yield
    finally:
        writer.execute("ROLLBACK")
        writer.close()


@pytest.mark.sqlite_only(reason="garbles the bytes of SQLite's file: a server's pages are "
                         "its own (checksums, amcheck)")
def test_damaged_pages_are_reported_not_raised(cli, db_path: Path,
                                               isolated_home: Path) -> None:
    cli("add", "-", input="".join(f'{{"text": "memory {i} {"pad " * 40}"}}\n'
                                  for i in range(300)))
    env = {**os.environ, "HIPPO_EMBEDDER": "hash"}
    assert run(db_path, "doctor", env=env).rc == 0
    with db_path.open("r+b") as fh:  # garble one b-tree page (page 2: the memories table)
        fh.seek(4096)
        fh.write(os.urandom(4096))
    op = run(db_path, "doctor", "--json", env=env)
    assert op.rc == 1 and "Traceback" not in op.stderr
    first = op.lines[0]
    assert first["check"] == "sqlite-integrity" and first["ok"] is False
    assert len(op.lines) == 1  # nothing below integrity is trusted on a damaged file
    with db_path.open("r+b") as fh:  # and a damaged header: no longer SQLite's, 78
        fh.write(os.urandom(100))
    op = run(db_path, "doctor", env=env)
    assert op.rc == 78 and one_line_error(op) and "not a SQLite database" in op.stderr
