"""Sessions in git worktrees belong to their repository, even once the worktree is gone.

A real `git worktree add`; commands and hooks run in it record it; ingest of a transcript
whose cwd was that (now removed) worktree lands in the repository's project, through the
record, or through the layout fallback when nothing was recorded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from hippo.store import connect

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, **ENV, "HOME": str(cwd)})


@pytest.fixture(autouse=True)
def outside_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a directory in no repository (the suite itself may run in a worktree)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    """/…/projects/spotter (main tree) and a worktree at /…/elsewhere/task-a/ (no layout)."""
    repo = tmp_path / "projects" / "spotter"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("x = 1\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    wt = tmp_path / "elsewhere" / "task-a"
    git(repo, "worktree", "add", "-q", "-b", "task-a", str(wt))
    return wt


def transcript(path: Path, cwd: str, session: str = "11111111-2222-4333-8444-555555555555") -> Path:
    """A two-message Claude Code session whose recorded cwd is `cwd`."""
    lines = [
        {"cwd": cwd, "sessionId": session, "type": "user", "uuid": "u-1", "parentUuid": None,
         "timestamp": "2026-03-01T10:00:00.000Z",
         "message": {"role": "user", "content": "Why does the login test fail on CI?"}},
        {"cwd": cwd, "sessionId": session, "type": "assistant", "uuid": "a-1",
         "parentUuid": "u-1", "timestamp": "2026-03-01T10:00:05.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "text", "text": "The CI runner has no TZ set; the test assumes UTC."}]}},
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def projects(db_path: Path) -> tuple[list[str | None], list[str | None]]:
    db = connect(db_path)
    try:
        return ([r[0] for r in db.execute("SELECT project FROM echo_sessions ORDER BY id")],
                sorted({r[0] for r in db.execute("SELECT project FROM echo_chunks")}))
    finally:
        db.close()


def recorded(db_path: Path) -> list[tuple[str, str]]:
    db = connect(db_path)
    try:
        return [tuple(r) for r in db.execute("SELECT path, project FROM project_dirs")]
    finally:
        db.close()


def test_command_in_a_worktree_defaults_to_the_repository_and_records_it(
        cli, worktree: Path, monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    monkeypatch.delenv("HIPPO_PROJECT")
    monkeypatch.chdir(worktree / "src")
    r = cli("add", "the login test assumes UTC")
    assert r.exit_code == 0, r.stderr
    assert r.records[0]["project"] == "spotter"
    assert recorded(db_path) == [(str(worktree.resolve()), "spotter")]
    conf = {x["name"]: x for x in cli("config", "--json").records}
    assert conf["project.current"]["value"] == "spotter"
    assert conf["project.current"]["origin"].startswith("git worktree of ")
    assert conf["project.current"]["origin"].endswith(os.sep + "spotter")
    found = cli("search", "login test UTC", "--json").records
    assert [x["project"] for x in found] == ["spotter"]


def test_ingest_of_a_removed_worktree_uses_the_record(cli, worktree: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     db_path: Path, other_db) -> None:
    hook = orjson.dumps({"session_id": "s", "cwd": str(worktree / "src"),
                         "hook_event_name": "SessionStart"}).decode()
    connect(db_path).close()  # a hook (a read) records into a database, never creates one
    r = cli("hook", "claude-code", input=hook)
    assert r.exit_code == 0 and "hippo hook:" not in r.stderr, r.stderr
    assert recorded(db_path) == [(str(worktree.resolve()), "spotter")]
    git(worktree, "worktree", "remove", "--force", str(worktree))
    assert not worktree.exists()
    t = transcript(tmp_path / "t" / "a.jsonl", str(worktree / "src" / "pkg"))
    r = cli("ingest", str(t), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    assert projects(db_path) == (["spotter"], ["spotter"])
    # Without the record the same path would be its own project (no layout in it).
    other = other_db("other")
    r = cli("ingest", str(t), "--idle-minutes", "0", db=other)
    assert projects(other) == (["pkg"], ["pkg"])


def test_ingest_of_unrecorded_worktree_paths_uses_their_layout(cli, tmp_path: Path,
                                                              db_path: Path) -> None:
    sessions = {"/home/USER/projects/spotter-worktrees/spotter-dov": "spotter",
                "/home/USER/projects/spotter-worktrees/spotter-gqc": "spotter",
                "/home/USER/code/hippo/.claude/worktrees/fix-1": "hippo",
                "/home/USER/projects/spotter": "spotter"}
    for i, cwd in enumerate(sessions):
        transcript(tmp_path / "t" / f"{i}.jsonl", cwd, f"11111111-2222-4333-8444-55555555555{i}")
    r = cli("ingest", str(tmp_path / "t"), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr
    assert projects(db_path)[0] == list(sessions.values())


def test_ingest_of_an_existing_worktree_records_it(cli, worktree: Path, tmp_path: Path,
                                                   db_path: Path) -> None:
    t = transcript(tmp_path / "t" / "a.jsonl", str(worktree))
    assert cli("ingest", str(t), "--idle-minutes", "0").exit_code == 0
    assert projects(db_path) == (["spotter"], ["spotter"])
    assert recorded(db_path) == [(str(worktree.resolve()), "spotter")]


def test_recording_never_fails_or_waits_on_a_busy_database(
        cli, worktree: Path, monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    cli("add", "x marks the spot")
    cli("search", "spot")  # the query's embedding is cached: the search itself never writes
    monkeypatch.chdir(worktree)
    # A writer holds the lock; a wait of the whole busy timeout (ten minutes) would show.
    writer = connect(db_path)
    try:
        with writer.transaction():  # SQLite: BEGIN IMMEDIATE; PostgreSQL: the writer lock
            r = cli("search", "spot", "--json", env={"HIPPO_BUSY_TIMEOUT_MS": "600000"})
            assert r.exit_code == 0 and r.stderr == "", r.stderr
            assert [x["text"] for x in r.records] == ["x marks the spot"]
    finally:
        writer.close()
    if isinstance(db_path, Path):  # SQLite's write lock covers the file: skipped, recorded
        assert recorded(db_path) == []  # by the next command (a server's rows: no wait)
    cli("search", "spot")
    assert recorded(db_path) == [(str(worktree.resolve()), "spotter")]


@pytest.mark.sqlite_only(reason="a database file's mode (read-only)")
def test_recording_never_fails_a_read_only_database(cli, worktree: Path, db_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only files")
    cli("add", "x marks the spot")
    monkeypatch.chdir(worktree)
    db_path.chmod(0o400)
    try:
        r = cli("search", "spot", "--json")
        assert r.exit_code == 0 and [x["text"] for x in r.records] == ["x marks the spot"]
    finally:
        db_path.chmod(0o600)
