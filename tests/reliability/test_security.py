"""Privacy and secrets: user-only files, API keys never printed or stored, no shell, and
purges (`echo --forget-session`, `forget --hard`) that leave no copy in the raw file."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import apsw
import pytest

from hippo.config import is_server
from hippo.store import connect
from tests.reliability.harness import server_bytes

REPO = Path(__file__).resolve().parents[2]
OPENAI_KEY = "sk-MARKER-openai-0f9e8d7c6b5a"
VOYAGE_KEY = "pa-MARKER-voyage-1a2b3c4d5e6f"


def raw_bytes(db: Path | str) -> bytes:
    """Every byte hippo keeps on disk for this database: the file, its WAL and WAL index
    (a server: its schema's relation files)."""
    if is_server(db):
        return server_bytes(str(db))
    return b"".join(Path(f"{db}{s}").read_bytes() for s in ("", "-wal", "-shm")
                    if Path(f"{db}{s}").exists())


def vacuum(db: Path | str) -> None:
    if is_server(db):  # the server's own VACUUM, as autovacuum runs it
        import psycopg

        with psycopg.connect(str(db), autocommit=True) as conn:
            for (table,) in conn.execute("SELECT tablename FROM pg_tables "
                                         "WHERE schemaname = current_schema()").fetchall():
                conn.execute(f'VACUUM "{table}"')
        return
    conn = apsw.Connection(str(db))
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


# -- files -----------------------------------------------------------------------------

def test_database_wal_and_home_are_user_only(tmp_path: Path, hippo_proc,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("HIPPO_HOME", str(home))
    old = os.umask(0o022)  # a usual umask must not widen what hippo creates
    try:
        env = {**os.environ, "HIPPO_EMBEDDER": "hash"}
        # No --db: the default database inside a HIPPO_HOME that does not exist yet.
        p = subprocess.run([sys.executable, "-m", "hippo", "add", "private note"], env=env,
                           capture_output=True, text=True, check=False)
        assert p.returncode == 0, p.stderr
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        db = home / "hippo.db"
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
        conn = connect(db)  # while it is open, the WAL and its index exist: same mode
        conn.execute("INSERT INTO meta(key, value) VALUES ('probe', '1')")
        for suffix in ("-wal", "-shm"):
            assert stat.S_IMODE(Path(f"{db}{suffix}").stat().st_mode) == 0o600, suffix
        conn.close()
        out = tmp_path / "memories.jsonl"
        p = subprocess.run([sys.executable, "-m", "hippo", "export", "-o", str(out)], env=env,
                           capture_output=True, text=True, check=False)
        assert p.returncode == 0, p.stderr
        assert stat.S_IMODE(out.stat().st_mode) == 0o600  # an export is as private as the db
    finally:
        os.umask(old)


# -- API keys --------------------------------------------------------------------------

class _EchoingProvider(BaseHTTPRequestHandler):
    """The worst provider: every answer is a 401 that quotes the request's credentials."""

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        creds = self.headers.get("Authorization", "") + " " + self.headers.get("api-key", "")
        body = json.dumps({"error": {"message": f"invalid key {creds}", "type": "auth"},
                           "detail": f"invalid key {creds}"}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET = _reply


@pytest.fixture
def echoing_provider() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoingProvider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_api_keys_are_never_printed_logged_or_stored(cli, hippo_proc, db_path: Path,
                                                     tmp_path: Path, echoing_provider,
                                                     isolated_home: Path) -> None:
    # A key pasted into the config file (hippo reads keys from the environment only): an
    # unknown table, so the file is refused (exit 78) by a line without the key.
    config = isolated_home / "config.toml"
    config.write_text(f'[voyage]\napi_key = "{VOYAGE_KEY}"\n')
    refused = hippo_proc(["config", "--json"])
    assert refused.returncode == 78 and "unknown table [voyage]" in refused.stderr
    assert "MARKER" not in refused.stdout + refused.stderr
    config.unlink()
    cli("add", "the deploy pipeline uses blue green releases")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"role": "user", "content": "We decided to use blue green '
                          'deploys from now on."}\n')
    cli("ingest", str(transcript), "--idle-minutes", "0")
    env = {"OPENAI_API_KEY": OPENAI_KEY, "VOYAGE_API_KEY": VOYAGE_KEY,
           "OPENAI_BASE_URL": f"{echoing_provider}/v1",
           "HIPPO_VOYAGE_BASE_URL": echoing_provider, "HIPPO_EMBEDDER": "hash"}
    runs = [
        ["config", "--json"], ["stats", "--json"],
        ["search", "deploy", "--rerank", "--json"],
        ["--debug", "search", "deploy", "--rerank", "--json"],
        ["--embedder", "openai", "--db", str(tmp_path / "openai.db"), "add", "x"],
        ["--debug", "--embedder", "openai", "--db", str(tmp_path / "openai.db"), "add", "x"],
        ["extract", "--extractor", "llm"], ["--debug", "extract", "--extractor", "llm"],
        ["stats", "--json"],
    ]
    seen = []
    for args in runs:
        p = hippo_proc(args, env=env)
        seen.append((args, p.returncode, p.stdout + p.stderr))
    # The provider did answer (with the key in its body), so the error paths really ran.
    assert any("401" in out for _, _, out in seen), seen
    for args, _rc, out in seen:
        assert "MARKER" not in out, (args, out)
    for db in (db_path, tmp_path / "openai.db"):
        if is_server(db) or Path(db).exists():
            assert b"MARKER" not in raw_bytes(db), db


def test_no_shell_is_ever_invoked() -> None:
    """No os.system / os.popen / shell=True anywhere in hippo: user text never meets a shell."""
    offenders = []
    for path in (REPO / "hippo").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                fn = node.func
                name = (f"{getattr(fn.value, 'id', '')}.{fn.attr}"
                        if isinstance(fn, ast.Attribute) else getattr(fn, "id", ""))
                if name in ("os.system", "os.popen", "os.execl", "os.execlp", "os.spawnl",
                            "os.spawnlp", "subprocess.getoutput",
                            "subprocess.getstatusoutput"):
                    offenders.append(f"{path}:{node.lineno} {name}")
                for kw in node.keywords:
                    if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant)
                                                  and kw.value.value is False):
                        offenders.append(f"{path}:{node.lineno} shell=")
    assert offenders == []


# -- purges ----------------------------------------------------------------------------

# Its number has a letter in it: four bare digits can turn up in the file by chance (a run
# id's timestamp, ingest-20261202T174135, holds 7413).
SECRET = "zebracorn quixotic velvetmoon 7413q"


def _transcript(path: Path, session: str, text: str) -> Path:
    path.write_text("".join(json.dumps({"session_id": session, "id": f"{session}-{i}",
                                        "role": role, "content": f"{text} turn {i}"}) + "\n"
                            for i, role in enumerate(("user", "assistant", "user"))))
    return path


def test_forget_session_leaves_no_copy_in_the_file(cli, db_path: Path, tmp_path: Path) -> None:
    _transcript(tmp_path / "keep.jsonl", "keep-me", "ordinary chat about lunch")
    _transcript(tmp_path / "gone.jsonl", "forget-me", f"my secret is {SECRET}")
    r = cli("ingest", str(tmp_path / "keep.jsonl"), str(tmp_path / "gone.jsonl"),
            "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    r = cli("echo", SECRET, "--json")  # the query's own vector is cached too (by hash only)
    assert r.records and SECRET.split()[0] in r.records[0]["text"]
    assert SECRET.split()[0].encode() in raw_bytes(db_path)
    r = cli("echo", "--forget-session", "forget-me")
    assert r.exit_code == 0 and r.records[0]["chunks"] >= 1
    # Without any VACUUM: secure_delete, FTS optimize and a truncated WAL already hold.
    data = raw_bytes(db_path)
    for word in SECRET.split():
        assert word.encode() not in data, word
    vacuum(db_path)
    data = raw_bytes(db_path)
    for word in SECRET.split():
        assert word.encode() not in data, word
    assert b"ordinary chat about lunch" in data  # the other session is intact
    assert cli("echo", SECRET, "--json").records == [] or all(
        "zebracorn" not in x["text"] for x in cli("echo", SECRET, "--json").records)
    assert cli("doctor", "--json").exit_code == 0
    # The file stays read: a later ingest does not bring the forgotten session back.
    cli("ingest", str(tmp_path / "gone.jsonl"), "--idle-minutes", "0")
    assert SECRET.split()[0].encode() not in raw_bytes(db_path)


def test_forget_hard_leaves_no_copy_in_the_file(cli, db_path: Path) -> None:
    cli("add", "an unrelated memory that stays")
    r = cli("add", "--json", f"the vault code is {SECRET}", "--tag", "zebracorntag")
    mid = r.records[0]["id"]
    assert cli("add", "--json", f"the vault code is {SECRET}").records[0]["action"] == \
        "reinforced"  # audited with the text before and after
    cli("edit", str(mid), "--text", f"the vault code is still {SECRET}")  # audited again
    assert cli("search", SECRET, "--json").records
    assert b"zebracorn" in raw_bytes(db_path)
    r = cli("forget", "--hard", str(mid), "--json")
    assert r.exit_code == 0, r.stderr
    data = raw_bytes(db_path)
    for word in [*SECRET.split(), "zebracorntag"]:
        assert word.encode() not in data, word
    vacuum(db_path)
    data = raw_bytes(db_path)
    for word in [*SECRET.split(), "zebracorntag"]:
        assert word.encode() not in data, word
    assert b"an unrelated memory that stays" in data
    assert cli("doctor", "--json").exit_code == 0
    rec = cli("show", str(mid), "--json").records[0]
    assert rec["status"] == "deleted" and rec["text"] == ""


def test_forget_hard_says_when_a_reader_keeps_the_old_text_in_the_wal(cli, db_path: Path
                                                                     ) -> None:
    mid = cli("add", "--json", f"the vault code is {SECRET}").records[0]["id"]
    with _reader(db_path):  # holds its snapshot (a server: a lock on the table)
        r = cli("forget", "--hard", str(mid), env={"HIPPO_BUSY_TIMEOUT_MS": "100"})
    assert r.exit_code == 0
    if is_server(db_path):
        assert "could not rewrite the tables" in r.stderr and "VACUUM FULL" in r.stderr
    else:
        assert "another process is reading" in r.stderr and "-wal" in r.stderr
    r = cli("forget", "--hard", str(mid))  # as the warning advises
    assert r.exit_code == 0 and r.stderr == ""
    assert b"zebracorn" not in raw_bytes(db_path)


@contextlib.contextmanager
def _reader(db_path: Path | str) -> Iterator[None]:
    """Another process in the middle of a read of the memories."""
    if is_server(db_path):
        import psycopg

        with psycopg.connect(str(db_path)) as conn:  # not autocommit: a transaction
            conn.execute("SELECT count(*) FROM memories").fetchall()
            yield
            conn.rollback()
        return
    reader = apsw.Connection(str(db_path))
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchall()
    try:
        yield
    finally:
        reader.execute("COMMIT")
        reader.close()
