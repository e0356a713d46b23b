"""The database file itself: a file that is not hippo's, a missing or empty one, an older
schema, a damaged one, its permissions and its directory's, a read while another process
holds the write lock (docs/reliability.md, "The database file")."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import apsw
import orjson
import pytest

from hippo.config import display, is_server
from hippo.store import connect
from tests.reliability.harness import env_for, one_line_error, run

READS = (["list"], ["search", "deploy"], ["show", "1"], ["echo", "deploy"], ["context"],
         ["guidance"], ["stats"], ["export"], ["export", "--store", "echo"])


def lines(stderr: str) -> list[str]:
    return [x for x in stderr.splitlines() if x.strip()]


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def batch(start: int, n: int, pad: int = 30) -> str:
    return "".join(orjson.dumps({"text": f"memory {i} about topic {i % 7} " + "pad " * pad})
                   .decode() + "\n" for i in range(start, start + n))


# -- 17.8: a file that is not hippo's, a missing or empty one, an older schema ------------

def test_a_foreign_sqlite_file_is_refused_and_left_as_it_was(cli, tmp_path: Path) -> None:
    other = tmp_path / "other-app.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO users VALUES (1, 'ada')")
    con.commit()
    con.close()
    other.chmod(0o644)
    before = other.read_bytes()
    for args in (["list"], ["add", "a memory"], ["search", "ada"], ["doctor", "--fix"],
                 ["export"]):
        r = cli(*args, db=other)
        assert r.exit_code == 78 and r.stdout == "", (args, r.stderr)
        assert lines(r.stderr) == [(f"hippo: {other} is not a hippo database (it holds other "
                                   "tables: users); hippo leaves it alone: choose another --db "
                                   "(or HIPPO_DB)")]
    r = cli("hook", "claude-code", "session-start", input="{}", db=other)
    assert r.exit_code == 0 and r.stdout == "" and "not a hippo database" in r.stderr
    assert other.read_bytes() == before and mode(other) == 0o644  # not even its mode
    assert not Path(f"{other}-wal").exists() and not Path(f"{other}-shm").exists()


def test_a_file_that_is_not_sqlite_is_refused(cli, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\n" * 20)
    for args in (["list"], ["add", "a memory"], ["doctor"]):
        r = cli(*args, db=notes)
        assert r.exit_code == 78 and len(lines(r.stderr)) == 1, (args, r.stderr)
        assert "is not a SQLite database" in r.stderr and str(notes) in r.stderr
    assert notes.read_text() == "remember the milk\n" * 20


def test_read_commands_never_create_a_database(cli, tmp_path: Path, db_path: Path,
                                               isolated_home: Path) -> None:
    from hippo.layers.hint import section

    nothing = (f"hippo: database {display(db_path)} has no hippo store yet: nothing stored "
               "(`hippo add` or `hippo ingest` creates it)" if is_server(db_path) else
               f"hippo: no database at {db_path} yet: nothing stored "
               "(`hippo add` or `hippo ingest` creates it)")
    for args in READS:
        r = cli(*args)
        assert r.exit_code == 0 and r.stdout == "", (args, r.stderr)
        assert lines(r.stderr) == [nothing], args
    for event in ("session-start", "prompt"):  # a hook: no rules, no memories
        payload = orjson.dumps({"hook_event_name": event, "prompt": "how do we deploy",
                                "cwd": str(tmp_path)}).decode()
        r = cli("hook", "claude-code", "--plain", input=payload)
        hint = section() if event == "session-start" else ""  # only when to remember
        assert (r.exit_code, r.stdout, r.stderr) == (0, hint, "")
    if is_server(db_path):  # not a table, not a type, not the migrations ledger
        import psycopg

        with psycopg.connect(str(db_path)) as con:
            assert con.execute("SELECT count(*) FROM pg_class WHERE relnamespace = "
                               "current_schema()::regnamespace").fetchone() == (0,)
    else:
        assert not db_path.exists() and not list(tmp_path.glob("hippo.db*"))
    # The default place, under HIPPO_HOME: not even the directory is made by a read.
    home = isolated_home / "sub"
    r = cli("list", db=None, env={"HIPPO_HOME": str(home)})
    assert r.exit_code == 0 and "no database at" in r.stderr and not home.exists()


@pytest.mark.sqlite_only(reason="an empty SQLite file")
def test_an_empty_file_is_no_store_for_a_read_and_a_new_one_for_a_write(cli,
                                                                        db_path: Path) -> None:
    db_path.touch(mode=0o600)
    r = cli("list")
    assert r.exit_code == 0 and r.stdout == "" and "is empty: nothing stored yet" in r.stderr
    r = cli("doctor")
    assert r.exit_code == 0 and "is empty" in r.stderr
    assert db_path.stat().st_size == 0  # a read left it as it was
    assert cli("add", "the first memory").exit_code == 0  # as sqlite3 does: a new database
    assert [x["text"] for x in cli("list", "--json").records] == ["the first memory"]


def _old_schema(db_path: Path, steps: int = 3) -> None:
    from hippo.store.sqlite.migrations import MIGRATIONS

    db = connect(db_path, migrate=False)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, sql in MIGRATIONS[:steps]:
        db.execute(sql)
        db.execute("INSERT INTO _migrations VALUES (?, 'x')", (name,))
    db.close()


@pytest.mark.sqlite_only(reason="SQLite's older schema steps: PostgreSQL's schema has one step, so no older one exists to refuse yet")
def test_a_read_command_never_migrates(cli, db_path: Path) -> None:
    from hippo.store.sqlite.migrations import MIGRATIONS

    _old_schema(db_path)
    con = sqlite3.connect(db_path)
    before = [r[0] for r in con.execute("SELECT name FROM _migrations")]
    con.close()
    for args in (["list"], ["search", "x"], ["stats"]):
        r = cli(*args)
        assert r.exit_code == 78 and len(lines(r.stderr)) == 1, (args, r.stderr)
        assert "older hippo" in r.stderr and "hippo doctor --fix" in r.stderr
    r = cli("hook", "claude-code", "session-start", input="{}")
    assert r.exit_code == 0 and r.stdout == "" and "older hippo" in r.stderr
    r = cli("doctor", "--json")
    assert r.exit_code == 1
    assert r.records[-1]["check"] == "schema" and "pending" in r.records[-1]["detail"]
    con = sqlite3.connect(db_path)
    assert [r[0] for r in con.execute("SELECT name FROM _migrations")] == before
    con.close()
    assert cli("doctor", "--fix").exit_code == 0  # or any write command
    con = sqlite3.connect(db_path)
    assert len(con.execute("SELECT name FROM _migrations").fetchall()) == len(MIGRATIONS)
    con.close()
    assert cli("list").exit_code == 0


# -- 17.9: damaged files -----------------------------------------------------------------

def _memory_leaf(db_path: Path) -> tuple[int, int]:
    """A leaf page of the memories table in the middle of the file, and its page size."""
    con = apsw.Connection(str(db_path))
    pages = [r[0] for r in con.execute("SELECT pageno FROM dbstat WHERE name = 'memories' "
                                       "AND pagetype = 'leaf' ORDER BY pageno")]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    return pages[len(pages) // 2], size


def _damaged(cli, db_path: Path) -> set[int]:
    """A store of 300 memories added in three batches with one memories page garbled; the
    ids it held."""
    for start in (0, 100, 200):
        assert cli("add", "-", input=batch(start, 100)).exit_code == 0
    ids = {x["id"] for x in cli("export").records}
    page, size = _memory_leaf(db_path)
    with db_path.open("r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(b"\xde\xad\xbe\xef" * (size // 4))
    return ids


@pytest.mark.sqlite_only(reason="garbles a page of SQLite's file; salvage reads a file")
def test_export_salvage_reads_every_row_but_the_damaged_page(cli, db_path: Path) -> None:
    ids = _damaged(cli, db_path)
    r = cli("export")
    assert r.exit_code == 1 and len(lines(r.stderr)) == 1 and "--salvage" in r.stderr
    r = cli("export", "--salvage")
    assert r.exit_code == 3
    got = {x["id"] for x in r.records}
    lost = ids - got
    assert got < ids and lost and max(got) == max(ids)  # rows after the bad page came back
    gap = [x for x in lines(r.stderr) if x.startswith("hippo: salvage: memories:")]
    assert gap == [(f"hippo: salvage: memories: ids {min(lost)}-{max(lost)} unreadable "
                   "(database disk image is malformed)")]
    assert lost == set(range(min(lost), max(lost) + 1))
    assert lines(r.stderr)[-1] == (f"hippo: salvaged {len(got)} memories; the rest is "
                                   "reported above")
    first = r.records[0]
    assert first["text"].startswith("memory 0 about topic 0") and first["type"] == "fact"


@pytest.mark.sqlite_only(reason="salvage reads past damage in SQLite's file")
def test_export_salvage_keeps_a_row_that_is_not_utf8(cli, db_path: Path) -> None:
    assert cli("add", "-", input=batch(0, 3, pad=1)).exit_code == 0
    con = apsw.Connection(str(db_path))
    con.execute("UPDATE memories SET text = CAST(X'6361666580206f6b' AS TEXT) WHERE id = 2")
    con.close()
    r = cli("export")
    assert r.exit_code == 1 and lines(r.stderr) == [
        ("hippo: a row after id 1 holds text that is not valid UTF-8 (a damaged row); `hippo "
        "export --salvage` exports every row, that one with the bad bytes replaced")]
    r = cli("export", "--salvage")
    assert r.exit_code == 3 and [x["id"] for x in r.records] == [1, 2, 3]
    assert r.records[1]["text"] == "cafe\ufffd ok"
    assert lines(r.stderr)[0] == ("hippo: salvage: memories: row 2: text was not valid UTF-8; "
                                  "kept with the bad bytes replaced")


@pytest.mark.sqlite_only(reason="a damaged SQLite file and its salvage")
def test_a_corrupt_file_refuses_writes_until_doctor_fix_salvages_it(cli, db_path: Path) -> None:
    ids = _damaged(cli, db_path)
    r = cli("doctor", "--json")
    assert r.exit_code == 1 and r.records[0]["check"] == "sqlite-integrity"
    assert Path(f"{db_path}-corrupt").exists()
    before = db_path.read_bytes()
    r = cli("add", "a memory that must not go into a damaged file")
    assert r.exit_code == 1 and len(lines(r.stderr)) == 1
    assert "was found corrupt" in r.stderr and "hippo doctor --fix" in r.stderr
    assert db_path.read_bytes() == before
    r = cli("doctor", "--fix", "--json")
    assert r.exit_code == 3, r.stderr  # repaired; some rows could not be read back
    first = r.records[0]
    assert first["ok"] is False and "salvaged every readable row" in first["fixed"]
    assert all(x["ok"] or x.get("fixed") for x in r.records)
    assert [x for x in lines(r.stderr) if "memories: ids" in x]
    aside = list(db_path.parent.glob("hippo.db.corrupt-*"))
    assert aside and any(p.read_bytes() == before for p in aside)  # kept as it was
    assert not Path(f"{db_path}-corrupt").exists()
    assert cli("doctor").exit_code == 0
    kept = {x["id"] for x in cli("export").records}
    assert kept < ids and max(kept) == max(ids)
    found = cli("search", "memory 299 about topic 5", "--json").records
    assert found and found[0]["id"] == max(ids)  # vectors and full-text index rebuilt
    assert cli("add", "after the repair").exit_code == 0


@pytest.mark.sqlite_only(reason="the corrupt mark beside SQLite's file")
def test_a_corrupt_mark_alone_is_cleared_by_doctor_fix(cli, db_path: Path) -> None:
    """The mark is what writes check (one stat at open): a file whose damage was repaired
    some other way still needs `doctor --fix` to say so."""
    assert cli("add", "kept").exit_code == 0
    Path(f"{db_path}-corrupt").write_text("2026-12-01T00:00:00Z database disk image is "
                                          "malformed\n")
    r = cli("add", "refused")
    assert r.exit_code == 1 and "was found corrupt (2026-12-01T00:00:00Z" in r.stderr
    r = cli("doctor", "--json")
    assert r.exit_code == 1 and "integrity check passes now" in r.records[0]["detail"]
    assert len(r.records) > 1  # the mark alone is no damage: every other check ran
    r = cli("doctor", "--fix", "--json")
    assert r.exit_code == 0 and r.records[0]["fixed"] == "cleared the corrupt mark"
    assert cli("add", "accepted").exit_code == 0
    assert [x["text"] for x in cli("list", "--json").records] == ["accepted", "kept"]


@pytest.mark.sqlite_only(reason="a truncated SQLite file and its salvage")
def test_a_truncated_file_is_salvaged_by_doctor_fix(cli, db_path: Path) -> None:
    for start in (0, 100, 200, 300):
        assert cli("add", "-", input=batch(start, 100)).exit_code == 0
    size = db_path.stat().st_size
    with db_path.open("r+b") as fh:
        fh.truncate(size * 3 // 4)
    r = cli("list")
    assert r.exit_code == 1 and "corrupt" in r.stderr and "hippo doctor --fix" in r.stderr
    r = cli("doctor", "--fix")
    assert r.exit_code == 3, r.stderr
    assert cli("doctor").exit_code == 0
    assert 0 < len(cli("export").records) < 400
    assert cli("add", "after the repair").exit_code == 0


# -- 17.10: permissions ------------------------------------------------------------------

@pytest.mark.sqlite_only(reason="the modes of SQLite's file, -wal and -shm")
def test_database_files_open_to_others_are_made_private(cli, db_path: Path) -> None:
    assert cli("add", "a private memory").exit_code == 0
    holder = apsw.Connection(str(db_path))  # keeps -wal and -shm in place
    holder.execute("SELECT count(*) FROM memories").fetchall()
    files = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")]
    for p in files:
        p.chmod(0o644)
    r = cli("list", "--json")
    holder.close()
    assert r.exit_code == 0 and len(r.records) == 1
    assert lines(r.stderr) == [("hippo: warning: hippo.db, hippo.db-wal, hippo.db-shm were "
                               "open to other users (mode 0644); made user-only (0600)")]
    assert [mode(p) for p in files if p.exists()] == [0o600] * len([p for p in files
                                                                    if p.exists()])
    assert cli("list").stderr == ""  # once
    db_path.chmod(0o444)  # only others' bits go: a file its owner made read-only stays so
    r = cli("list")
    assert "made user-only (0400)" in r.stderr and mode(db_path) == 0o400


@pytest.mark.parametrize("bits, fix", [(0o777, "run `chmod go-w {d}`"),
                                       (0o775, "run `chmod go-w {d}`"),
                                       (0o1777, ("choose a --db (and HIPPO_HOME) in a "
                                                "directory only you can write"))])
def test_a_directory_others_can_write_is_refused(cli, tmp_path: Path, bits: int,
                                                 fix: str) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(bits)
    for args in (["add", "x"], ["list"]):
        r = cli(*args, db=shared / "hippo.db")
        assert r.exit_code == 78 and lines(r.stderr) == [
            (f"hippo: directory {shared} is writable by other users (mode {bits:04o}), who "
            f"could plant files hippo reads; {fix.format(d=shared)}")], r.stderr
    assert list(shared.iterdir()) == []


def test_a_home_others_can_write_is_refused(cli, tmp_path: Path, isolated_home: Path) -> None:
    isolated_home.chmod(0o777)  # its config.toml would be read: refused whatever --db is
    r = cli("add", "x")
    assert r.exit_code == 78 and f"directory {isolated_home} is writable by other" in r.stderr
    r = cli("hook", "claude-code", "session-start", input="{}")
    assert r.exit_code == 0 and r.stdout == "" and "chmod go-w" in r.stderr


def test_export_output_is_a_new_private_file_never_a_planted_link(cli, tmp_path: Path) -> None:
    assert cli("add", "a memory to export").exit_code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n")
    out = tmp_path / "export.jsonl"
    out.symlink_to(victim)
    r = cli("export", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    assert victim.read_text() == "not yours\n"
    assert not out.is_symlink() and mode(out) == 0o600
    assert [orjson.loads(x)["text"] for x in out.read_text().splitlines()] == [
        "a memory to export"]
    existing = tmp_path / "old.jsonl"
    existing.write_text("old\n")
    existing.chmod(0o644)
    assert cli("export", "-o", str(existing)).exit_code == 0
    assert mode(existing) == 0o600 and "a memory to export" in existing.read_text()
    r = cli("export", "-o", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert r.exit_code == 1 and one_line(r.stderr) and "cannot write" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def one_line(stderr: str) -> bool:
    return len(lines(stderr)) == 1 and stderr.startswith("hippo: ")


# -- 20.6: permission errors say why and what to do --------------------------------------

def _as_user(argv: list[str]) -> list[str]:
    """Run as the file modes see it: root without its override of permission bits."""
    if os.geteuid() != 0:
        return argv
    if not shutil.which("setpriv"):
        pytest.skip("needs setpriv to drop root's permission override")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *argv]


def _hippo(db: Path | None, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "hippo", *(["--db", str(db)] if db else []), *args]
    return subprocess.run(_as_user(argv), capture_output=True, text=True, check=False,
                          env=env_for(home), timeout=120)


def test_permission_errors_name_the_reason_and_the_fix(tmp_path: Path,
                                                       isolated_home: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    p = _hippo(locked / "hippo.db", "add", "x", home=isolated_home)
    assert p.returncode == 1 and p.stderr == (
        f"hippo: cannot create database {locked}/hippo.db: directory {locked} is not writable "
        f"by you (mode 0555): `chmod u+w {locked}` or choose another --db\n")
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    assert run(shelf / "hippo.db", "add", "kept", env=env_for(isolated_home)).rc == 0
    shelf.chmod(0o555)
    p = _hippo(shelf / "hippo.db", "list", home=isolated_home)
    assert p.returncode == 1 and p.stderr == (
        f"hippo: cannot open database {shelf}/hippo.db: hippo keeps its write-ahead log "
        f"(hippo.db-wal and hippo.db-shm) beside it, and directory {shelf} is not writable "
        f"by you (mode 0555): `chmod u+w {shelf}` or choose another --db\n")
    shelf.chmod(0o755)
    (shelf / "hippo.db").chmod(0o400)
    p = _hippo(shelf / "hippo.db", "add", "more", home=isolated_home)
    assert p.returncode == 1 and "is read-only: the file is not writable by you (mode 0400)" \
        in p.stderr and one_line(p.stderr)
    p = _hippo(None, "add", "x", home=locked / "home")  # the default data directory
    assert p.returncode == 1 and p.stderr == (
        f"hippo: cannot create the data directory {locked}/home: Permission denied; set "
        "HIPPO_HOME (or --db) to a directory you can write\n")


def test_an_immutable_directory_is_named(tmp_path: Path, isolated_home: Path) -> None:
    frozen = tmp_path / "frozen"
    frozen.mkdir()
    assert run(frozen / "hippo.db", "add", "kept", env=env_for(isolated_home)).rc == 0
    if os.geteuid() != 0 or subprocess.run(["chattr", "+i", str(frozen)], capture_output=True,
                                           check=False).returncode:
        pytest.skip("chattr +i needs root on a file system that supports it")
    try:
        for args in (["list"], ["add", "more"]):
            op = run(frozen / "hippo.db", *args, env=env_for(isolated_home))
            assert op.rc == 1 and one_line_error(op), op.stderr
            assert f"directory {frozen} is immutable: `lsattr -d {frozen}` shows an `i`" \
                in op.stderr
        op = run(frozen / "new.db", "add", "x", env=env_for(isolated_home))
        assert op.rc == 1 and op.stderr == (
            f"hippo: cannot create database {frozen}/new.db: directory {frozen} is immutable: "
            f"`lsattr -d {frozen}` shows an `i`, `chattr -i {frozen}` (as root) clears it\n")
    finally:
        subprocess.run(["chattr", "-i", str(frozen)], check=False)


# -- 17.12: reads never wait for a writer ------------------------------------------------

HOLDER = """
import os, sys, time
from hippo.store import connect
db, ready, release = sys.argv[1:4]
store = connect(db)
with store.transaction():  # the write lock: BEGIN IMMEDIATE, or the writer advisory lock
    store.meta.set("held", "1")
    open(ready, "w").close()
    limit = time.monotonic() + 40  # a safety net, well inside the 60 s busy timeout below
    while not os.path.exists(release) and time.monotonic() < limit:
        time.sleep(0.01)
    print("released" if os.path.exists(release) else "gave up", flush=True)
    raise SystemExit(0)  # rolled back
"""


def test_reads_answer_while_another_process_holds_the_write_lock(
        tmp_path: Path, db_path: Path, isolated_home: Path,
        hippo_proc: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    env = {"HIPPO_EMBEDDER": "hash", "HIPPO_BUSY_TIMEOUT_MS": "60000"}
    assert hippo_proc(["add", "Staging deploys run make stage from deploy/"],
                      env=env).returncode == 0
    ready, release = tmp_path / "ready", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db_path), str(ready),
                               str(release)], stdout=subprocess.PIPE, text=True)
    try:
        while not ready.exists():
            assert holder.poll() is None, "the lock holder died"
            os.sched_yield()
        # New texts: each wants to write its query embedding to the cache, which is skipped.
        prompt = orjson.dumps({"hook_event_name": "UserPromptSubmit",
                               "prompt": "how do staging deploys run?"}).decode()
        hook = hippo_proc(["hook", "claude-code", "--plain", "--min-score", "0"], input=prompt,
                          env=env)
        search = hippo_proc(["search", "--json", "deploys to staging"], env=env)
        listing = hippo_proc(["list", "--json"], env=env)
        echo = hippo_proc(["echo", "--json", "staging deploys"], env=env)
        release.touch()
        assert holder.wait(timeout=120) == 0
        assert holder.stdout is not None and holder.stdout.read().strip() == "released"
    finally:
        release.touch()
        holder.wait(timeout=120)
    assert hook.returncode == 0 and "make stage" in hook.stdout, hook.stderr
    assert hook.stderr == ""
    assert search.returncode == 0 and "busy" not in search.stderr, search.stderr
    assert [orjson.loads(x)["id"] for x in search.stdout.splitlines()] == [1]
    assert all("degraded" not in x or not orjson.loads(x)["degraded"]
               for x in search.stdout.splitlines())
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == 1
    assert echo.returncode == 0 and "busy" not in echo.stderr


def _has_open(pid: int, path: Path) -> bool:
    try:
        return any(os.path.realpath(f"/proc/{pid}/fd/{fd}") == str(path.resolve())
                   for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_read_waits_for_a_lock_held_at_its_first_statement(tmp_path: Path) -> None:
    """A read's first statement (the probe of `_open`) waits out the busy timeout like any
    other: a writer that holds the file whole (creating it, closing its WAL) made every read
    command exit 75 at once. Released only once the reader has the file open."""
    home = tmp_path / "home"
    db = home / "hippo.db"
    env = env_for(home)
    assert run(db, "add", "one memory", env=env).rc == 0
    holder = apsw.Connection(str(db))
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE meta SET value = value WHERE 0")
    proc = subprocess.Popen([sys.executable, "-m", "hippo", "--db", str(db), "list", "--json"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while proc.poll() is None and not _has_open(proc.pid, db):
            pass
        with contextlib.suppress(subprocess.TimeoutExpired):  # main's read exits 75 here
            proc.wait(timeout=0.5)
    finally:
        holder.execute("COMMIT")
        holder.execute("PRAGMA locking_mode=NORMAL")
        holder.execute("SELECT 1").fetchall()  # the exclusive lock goes with the next read
        holder.close()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert orjson.loads(out.splitlines()[0])["text"] == "one memory"
