"""Two users of one team store (HIPPO_USER alice and bob): what one may not see of the
other's Echo, the other's commands neither change nor reveal. Postgres pass only."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.store import connect
from tests.extract.conftest import write_transcript
from tests.mcp.conftest import TURNS

pytestmark = pytest.mark.postgres_only(reason="a SQLite file has one user")
ALICE, BOB = {"HIPPO_USER": "alice"}, {"HIPPO_USER": "bob"}


@pytest.fixture
def alices(cli, tmp_path: Path) -> str:
    """Alice's ingested session and the memory extracted from it: its key."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    write_transcript(folder / "alpha-1.jsonl", "alpha-1", TURNS)
    r = cli("ingest", str(folder), "--idle-minutes", "0", "--format", "generic-jsonl",
            env=ALICE)
    assert r.exit_code == 0, r.stderr
    assert cli("extract", env=ALICE).exit_code == 0
    return str(cli("export", "--store", "echo", env=ALICE).records[0]["session"])


def _memories(db_path: str) -> list[tuple]:
    db = connect(db_path)
    try:
        return [(r["id"], r["source"], r["updated_at"]) for r in
                db.rows("SELECT id, source, updated_at FROM memories ORDER BY id")] + [
            (r["actor"], r["by_user"]) for r in db.rows("SELECT actor, by_user FROM audit")]
    finally:
        db.close()


def test_forgetting_a_session_one_cannot_see_is_not_found_and_changes_nothing(
        cli, db_path: str, alices: str) -> None:
    before = _memories(db_path)
    assert alices in str(before[0][1])  # memory 1 cites Alice's session
    missing = cli("echo", "--forget-session", "no-such-session", env=BOB)
    hidden = cli("echo", "--forget-session", alices, env=BOB)
    assert missing.exit_code == hidden.exit_code == 1
    assert missing.stderr == "hippo: no session 'no-such-session' in Echo\n"
    assert hidden.stderr == f"hippo: no session {alices!r} in Echo\n"
    assert hidden.stdout == ""
    assert _memories(db_path) == before  # no provenance rewritten, no audit row by Bob
    assert cli("echo", "--forget-session", alices, env=ALICE).exit_code == 0


def test_project_list_counts_only_the_sessions_one_may_see(cli, alices: str) -> None:
    def counts(env: dict[str, str]) -> dict:
        r = cli("project", "list", "--json", env=env)
        assert r.exit_code == 0, r.stderr
        return {p["project"]: (p["sessions"], p["chunks"]) for p in r.records}

    mine = counts(ALICE)
    (project,) = [p for p, (sessions, _) in mine.items() if sessions]
    assert mine[project][0] == 1 and mine[project][1] > 0
    assert counts(BOB).get(project, (0, 0)) == (0, 0)
    assert cli("config", "--set", "echo.shared=on", env=ALICE).exit_code == 0
    assert counts(BOB)[project] == mine[project]
