"""Documented limits (docs/reliability.md) and what a full or read-only disk does: one clear
line on stderr, a documented exit code, and nothing half-written."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from hippo.memory.records import MAX_TEXT_CHARS
from hippo.retrieve.params import MAX_QUERY_CHARS
from tests.reliability.harness import one_line_error, run

MAX_LINE_BYTES = 8_000_000  # readers' max_line_bytes default


def lines(stderr: str) -> list[str]:
    return [x for x in stderr.splitlines() if x.strip()]


# -- sizes -------------------------------------------------------------------------------

def test_memory_text_limit(cli) -> None:
    assert cli("add", "x" * MAX_TEXT_CHARS).exit_code == 0
    r = cli("add", "y" * (MAX_TEXT_CHARS + 1))
    assert r.exit_code == 2 and r.stdout == ""
    assert lines(r.stderr) == [(f"hippo: text is {MAX_TEXT_CHARS + 1} characters; the limit "
                               f"is {MAX_TEXT_CHARS}")]
    batch = orjson.dumps({"text": "z" * (MAX_TEXT_CHARS + 5)}) + b"\n" + orjson.dumps(
        {"text": "a short one"}) + b"\n"
    r = cli("add", "-", input=batch)
    assert r.exit_code == 3 and len(r.records) == 1
    assert lines(r.stderr)[0].startswith("hippo: line 1: text is 20005 characters")
    mid = r.records[0]["id"]
    r = cli("edit", str(mid), "--text", "w" * (MAX_TEXT_CHARS + 1))
    assert r.exit_code == 2 and "the limit is 20000" in r.stderr
    assert cli("show", str(mid), "--json").records[0]["text"] == "a short one"


def test_a_huge_stdin_line_is_one_clear_error(cli) -> None:
    big = orjson.dumps({"text": "q" * 3_000_000}) + b"\n"
    r = cli("add", "-", input=big + orjson.dumps({"text": "kept"}) + b"\n")
    assert r.exit_code == 3 and [x["text"] for x in r.records] == ["kept"]
    assert len(lines(r.stderr)) == 2 and "limit is 20000" in lines(r.stderr)[0]


def test_a_1mb_query_is_cut_to_the_documented_cap(cli) -> None:
    cli("add", "the deploy pipeline uses blue green releases")
    query = "deploy " + "".join(chr(0x4E00 + i % 2000) for i in range(1_000_000))
    r = cli("search", "--json", "-", input=query)
    assert r.exit_code == 0
    assert f"query cut to its first {MAX_QUERY_CHARS} of {len(query)} characters" in r.stderr
    assert all(f"query cut to its first {MAX_QUERY_CHARS}" in d for x in r.records
               for d in x["degraded"][:1])
    r = cli("echo", "--json", "-", input=query)
    assert r.exit_code == 0 and "query cut to its first" in r.stderr


def test_ingest_skips_a_line_over_the_limit_and_says_so(cli, tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps({"role": "user", "content": "before the big line"}) + "\n")
        fh.write(json.dumps({"role": "user", "content": "x" * MAX_LINE_BYTES}) + "\n")
        fh.write(json.dumps({"role": "assistant", "content": "after the big line"}) + "\n")
    r = cli("ingest", str(path), "--idle-minutes", "0")
    assert r.exit_code == 3  # partial: a line was skipped, and reported
    event, summary = r.records
    assert event["skipped"] == {"line too long": 1} and summary["skipped"] == {
        "line too long": 1}
    text = "\n".join(x["text"] for x in cli("export", "--store", "echo").records)
    assert "before the big line" in text and "after the big line" in text and "xxxx" not in text


def test_undecodable_arguments_are_usage_errors(hippo_proc) -> None:
    for args in (["add", "caf\udce9"], ["add", "ok", "--tag", "t\udcff"],
                 ["--project", "p\udcff", "add", "ok"]):
        p = hippo_proc(args, env={"HIPPO_EMBEDDER": "hash"})
        assert p.returncode == 2, (args, p.stderr)
        assert lines(p.stderr) == [x for x in lines(p.stderr) if "not valid UTF-8" in x]
    for args in (["show", "99999999999999999999"], ["forget", "²"],
                 ["search", "x", "--since", "99999999999d"]):
        p = hippo_proc(args, env={"HIPPO_EMBEDDER": "hash"})
        assert p.returncode == 2 and len(lines(p.stderr)) == 1, (args, p.stderr)


# -- a full disk, a read-only file system ---------------------------------------------------

def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs (root only: permission bits prove nothing to root, a full disk does)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    p = _mount("-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mnt))
    if p.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


def _fill(mnt: Path, leave: int) -> Path:
    """Fill the file system, leaving about `leave` bytes free."""
    reserve = mnt / "reserve"
    if leave:
        reserve.write_bytes(b"\0" * leave)
    filler = mnt / f"filler-{time.monotonic_ns()}"
    with filler.open("wb", buffering=0) as fh:
        try:
            while fh.write(b"\0" * 4096):
                pass
        except OSError:
            pass
    reserve.unlink(missing_ok=True)
    return filler


def _export(db: Path, env: dict[str, str]) -> list[dict]:
    op = run(db, "export", env=env)
    assert op.rc == 0, op.stderr
    return op.lines


def test_disk_full_is_one_line_and_stores_nothing(tiny_fs: Path, isolated_home: Path) -> None:
    env = {**os.environ, "HIPPO_EMBEDDER": "hash"}
    db = tiny_fs / "hippo.db"
    assert run(db, "add", "-", env=env, input=b'{"text": "first"}\n{"text": "second"}\n').rc == 0
    before = _export(db, env)
    batch = b"".join(orjson.dumps({"text": f"memory {i} " + "pad " * 60}) + b"\n"
                     for i in range(800))
    filler = _fill(tiny_fs, 48 * 1024)  # room for the WAL index, not for the batch
    op = run(db, "add", "-", env=env, input=batch)
    assert op.rc == 1 and op.stdout == b"" and one_line_error(op), op.stderr
    assert "disk full" in op.stderr and "nothing from this command was stored" in op.stderr
    assert _export(db, env) == before  # all or nothing: nothing
    assert run(db, "doctor", "--json", env=env).rc == 0
    filler2 = _fill(tiny_fs, 0)  # not even room to open the file
    for args in (["add", "third"], ["search", "first"]):
        op = run(db, *args, env=env)
        assert op.rc == 1 and one_line_error(op) and "disk full" in op.stderr, op.stderr
    filler.unlink()
    filler2.unlink()
    op = run(db, "add", "-", env=env, input=batch)  # space again: the same batch goes in
    assert op.rc == 0, op.stderr
    assert len(_export(db, env)) == len(before) + 800
    assert run(db, "doctor", "--json", env=env).rc == 0


def test_read_only_file_system_is_one_line_and_stores_nothing(tiny_fs: Path,
                                                              isolated_home: Path) -> None:
    env = {**os.environ, "HIPPO_EMBEDDER": "hash"}
    db = tiny_fs / "hippo.db"
    assert run(db, "add", "a memory on a disk about to turn read-only", env=env).rc == 0
    before = _export(db, env)
    assert _mount("-o", "remount,ro", str(tiny_fs)).returncode == 0
    try:
        for args in (["add", "another"], ["forget", "--hard", "1"]):
            op = run(db, *args, env=env)
            assert op.rc == 1 and one_line_error(op), (args, op.stderr)
            assert "read-only" in op.stderr, op.stderr
        op = run(db, "search", "memory", env=env)  # nothing can change it: read as it is
        assert op.rc == 0 and [x["id"] for x in op.lines] == [1], op.stderr
        for args in (["list"], ["echo", "memory"], ["export"]):
            assert run(db, *args, env=env).rc == 0, args
        op = run(db, "doctor", "--json", env=env)  # FTS5's own check writes: not a failure
        assert op.rc == 0 and "not checked: the database is read-only" in op.stdout.decode()
    finally:
        assert _mount("-o", "remount,rw", str(tiny_fs)).returncode == 0
    assert _export(db, env) == before
    assert run(db, "doctor", "--json", env=env).rc == 0
