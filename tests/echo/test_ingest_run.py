"""`hippo ingest` against real transcripts: watermarks, tail resume, bad files, redaction."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from hippo.store import connect
from tests.conftest import DATA

T = DATA / "transcripts"
needs_data = pytest.mark.skipif(not T.exists(), reason="shared transcripts not present")


def echo_rows(db_path: Path) -> list[tuple]:
    db = connect(db_path)
    return [tuple(r) for r in db.execute(
        "SELECT e.session_key, c.seq, c.roles, c.text, c.message_ids FROM echo_chunks c "
        "JOIN echo_sessions e ON e.id = c.session_id ORDER BY e.session_key, c.seq")]


def message_ids(db_path: Path) -> list[str]:
    db = connect(db_path)
    out: list[str] = []
    for (ids,) in db.execute("SELECT message_ids FROM echo_chunks ORDER BY session_id, seq"):
        for mid in orjson.loads(ids):
            if mid not in out:
                out.append(mid)
    return out


@needs_data
def test_every_shared_transcript_ingests(cli, tmp_path: Path) -> None:
    src = tmp_path / "t"
    # The long compacted sessions are read by tests/extract/test_summary.py.
    shutil.copytree(T, src, ignore=shutil.ignore_patterns("claude-code-sessions"))
    r = cli("ingest", str(src), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    events = r.records
    files = [e for e in events if e["event"] == "file"]
    assert len(files) == 10 and {f["status"] for f in files} == {"ingested"}
    assert {f["format"] for f in files} == {"claude-code", "codex", "gemini-cli", "aider"}
    summary = events[-1]
    assert summary["event"] == "summary" and summary["skipped"] == {}
    assert summary["chunks"] > 100
    # The subagent file is linked to its parent session.
    agent = next(f for f in files if "agent-" in f["path"])
    assert agent["session"].startswith("4c2ddfdc-b619-4525-8d03-1950fb1b0257/")
    # A second run finds nothing new and prints only the summary.
    again = cli("ingest", str(src), "--idle-minutes", "0").records
    assert [e["event"] for e in again] == ["summary"] and again[0]["unchanged"] == 10


@needs_data
def test_grown_file_adds_exactly_the_new_messages(cli, tmp_path: Path, db_path: Path,
                                                  other_db) -> None:
    turn1 = T / "claude-code" / "codemie-code__incremental-simple__turn-1.jsonl"
    turn2 = T / "claude-code" / "codemie-code__incremental-simple__turn-2.jsonl"
    assert turn2.read_bytes().startswith(turn1.read_bytes())
    live = tmp_path / "session.jsonl"
    shutil.copy(turn1, live)
    assert cli("ingest", str(live), "--idle-minutes", "0").exit_code == 0
    first = message_ids(db_path)
    shutil.copy(turn2, live)  # the agent appended to its file
    r = cli("ingest", str(live), "--idle-minutes", "0")
    (ev, _summary) = r.records
    assert ev["status"] == "ingested" and ev["duplicates"] == 0
    reference = other_db("ref")
    ref_copy = tmp_path / "ref.jsonl"
    shutil.copy(turn2, ref_copy)
    cli("ingest", str(ref_copy), "--idle-minutes", "0", db=reference)
    resumed = message_ids(db_path)
    assert resumed[: len(first)] == first
    assert sorted(resumed) == sorted(message_ids(reference))
    assert len(resumed) == len(set(resumed))


@needs_data
def test_torn_last_line_waits_for_the_rest(cli, tmp_path: Path, db_path: Path,
                                          other_db) -> None:
    src = (T / "claude-code" / "spotter__tool_heavy.jsonl").read_bytes()
    cut = src.rfind(b"\n", 0, len(src) // 2) + 40  # in the middle of a line
    live = tmp_path / "s.jsonl"
    live.write_bytes(src[:cut])
    r = cli("ingest", str(live), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    live.write_bytes(src)
    r = cli("ingest", str(live), "--idle-minutes", "0")
    assert r.exit_code == 0
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(src)
    reference = other_db("ref")
    cli("ingest", str(whole), "--idle-minutes", "0", db=reference)
    assert sorted(message_ids(db_path)) == sorted(message_ids(reference))


def test_replaced_file_is_reread_without_duplicates(cli, tmp_path: Path, db_path: Path) -> None:
    live = tmp_path / "chat.jsonl"
    live.write_text('{"role": "user", "content": "first version alpha"}\n')
    cli("ingest", str(live), "--idle-minutes", "0", "--format", "generic-jsonl")
    live.write_text('{"role": "user", "content": "second version beta"}\n'
                    '{"role": "assistant", "content": "reply gamma"}\n')
    r = cli("ingest", str(live), "--idle-minutes", "0", "--format", "generic-jsonl")
    assert r.records[0]["status"] == "reread"
    texts = " ".join(row[3] for row in echo_rows(db_path))
    assert "alpha" not in texts and "beta" in texts and "gamma" in texts


def test_bad_inputs_are_skipped_counted_and_exit_3(cli, tmp_path: Path, db_path: Path) -> None:
    d = tmp_path / "in"
    d.mkdir()
    good = d / "good.jsonl"
    big = b'{"role": "user", "content": "' + b"x" * (50 * 1024 * 1024) + b'"}\n'
    good.write_bytes(b'{"role": "user", "content": "valid message one"}\n'
                     b"{not json\n"
                     b'{"role": "user", "content": "bad \xff\xfe utf8"}\n'
                     + big +
                     b'{"role": "assistant", "content": "valid message two"}\n')
    (d / "empty.jsonl").write_bytes(b"")
    (d / "dangling.jsonl").symlink_to(d / "missing-target.jsonl")
    os.mkfifo(d / "pipe.jsonl")
    (d / "dir.jsonl").mkdir()
    # A directory walk meets them all, including a directory named like a transcript.
    r = cli("ingest", str(d), "--idle-minutes", "0", "--format", "generic-jsonl")
    assert r.exit_code == 3
    summary = r.records[-1]
    assert summary["event"] == "summary"
    assert summary["skipped"]["dangling symlink"] == 1
    assert summary["skipped"]["not a regular file"] == 1
    assert summary["skipped"]["is a directory"] == 1
    assert summary["skipped"]["empty file"] == 1
    assert summary["skipped"]["malformed json"] == 1
    assert summary["skipped"]["invalid utf-8"] == 1
    assert summary["skipped"]["line too long"] == 1
    texts = " ".join(row[3] for row in echo_rows(db_path))
    assert "valid message one" in texts and "valid message two" in texts


def stored_bytes(db_path: Path | str) -> bytes:
    """Everything the store holds of Echo: a SQLite file's raw bytes (its -wal too), or
    every row of a server's Echo tables as text."""
    if isinstance(db_path, Path):
        return b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
    db = connect(db_path)
    try:
        return b"".join(str(tuple(r)).encode() for table in ECHO_TABLES
                        for r in db.execute(f"SELECT * FROM {table}"))
    finally:
        db.close()


ECHO_TABLES = ("echo_sessions", "echo_chunks", "watermarks", "embed_cache")


def test_secrets_are_redacted_before_storing(cli, tmp_path: Path, db_path: Path) -> None:
    secrets = {
        "openai": "sk-proj-" + "A1b2C3d4E5f6G7h8" * 3,
        "github": "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2",
        "pem": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
        "url": "hunter2SuperSecret",
    }
    content = (
        f"my key is {secrets['openai']} and token {secrets['github']}\n\n"
        f"-----BEGIN PRIVATE KEY-----\n{secrets['pem']}\n-----END PRIVATE KEY-----\n\n"
        f"db at postgres://admin:{secrets['url']}@db.internal:5432/app"
    )
    live = tmp_path / "s.jsonl"
    live.write_bytes(orjson.dumps({"role": "user", "content": content}) + b"\n")
    r = cli("ingest", str(live), "--idle-minutes", "0", "--format", "generic-jsonl")
    assert r.records[-1]["redactions"] >= 4
    raw = stored_bytes(db_path)
    for value in secrets.values():
        assert value.encode() not in raw
        for hit in cli("echo", value, "--json").records:
            assert value not in hit["text"] and "bm25" not in hit["ranks"]
    assert b"postgres://admin:" in raw  # the user and host stay readable


def test_idle_gate_defers_fresh_files(cli, tmp_path: Path, db_path: Path) -> None:
    live = tmp_path / "s.jsonl"
    live.write_text('{"role": "user", "content": "still being written"}\n')
    r = cli("ingest", str(live), "--idle-minutes", "30", "--format", "generic-jsonl")
    assert r.exit_code == 0 and r.records[0]["status"] == "deferred"
    assert echo_rows(db_path) == []


@needs_data
def test_sigkill_mid_run_converges(tmp_path: Path, db_path: Path, other_db) -> None:
    src = tmp_path / "t"
    shutil.copytree(T, src)
    env = {**os.environ, "HIPPO_EMBEDDER": "hash"}
    killed_db, ref_db = db_path, other_db("ref")
    cmd = [sys.executable, "-m", "hippo", "--db"]
    for delay in (0.8, 1.6):
        p = subprocess.Popen([*cmd, str(killed_db), "ingest", str(src), "--idle-minutes", "0"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
    subprocess.run([*cmd, str(killed_db), "ingest", str(src), "--idle-minutes", "0"], env=env,
                   check=True, capture_output=True)
    subprocess.run([*cmd, str(ref_db), "ingest", str(src), "--idle-minutes", "0"], env=env,
                   check=True, capture_output=True)
    assert echo_rows(killed_db) == echo_rows(ref_db)
    db = connect(killed_db)
    if isinstance(killed_db, Path):
        db.execute("INSERT INTO echo_fts(echo_fts, rank) VALUES ('integrity-check', 1)")
    assert db.scalar("SELECT count(*) FROM echo_vec") == db.scalar(
        "SELECT count(*) FROM echo_chunks")
