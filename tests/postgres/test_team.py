"""A team store (`hippo team init`) on a server that asks every role for its password:
Alice's Echo is hers, whatever Bob tries through psql or hippo, with HIPPO_USER=alice or
not; the Brain is the team's. Real processes, real server (tests/postgres/scram.py), its
own: they run once, in the SQLite pass (the postgres pass keeps only tests of `db_path`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from tests.extract.conftest import write_transcript
from tests.postgres.scram import ADMIN_PASSWORD, ScramServer, bin_dir

SECRET = "Alice's private plan: the zebra quartz migration ships on Tuesday."
ALICE_TURNS = [("user", "can you look at the storage layer?"),
               ("assistant", "Sure. The event store needs a database."),
               ("user", "ok so we decided to use PostgreSQL for the event store."),
               ("user", SECRET)]
BOB_TURNS = [("user", "the build cache is flaky on the runners"),
             ("assistant", "We decided to pin the cache action to v4.")]


@dataclass
class Team:
    server: ScramServer
    database: str
    name: str
    urls: dict[str, str]
    passwords: dict[str, str]
    home: Path
    alice_session: str

    def hippo(self, who: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "PG"))}
        full.update(HIPPO_HOME=str(self.home / who), HIPPO_PROJECT="testproj",
                    HIPPO_NO_PROGRESS="1", HIPPO_SERVE="off", HIPPO_EMBEDDER="hash",
                    HIPPO_DB=self.urls[who], PGPASSWORD=self.passwords[who], **env)
        (self.home / who).mkdir(parents=True, exist_ok=True)
        r = subprocess.run([sys.executable, "-m", "hippo", *args], capture_output=True,
                           text=True, env=full, timeout=180, check=False)
        assert "Traceback" not in r.stderr, r.stderr
        assert SECRET not in r.stderr
        return r

    def psql(self, who: str, statement: str) -> subprocess.CompletedProcess[str]:
        """One statement as `who` through psql (its exit status and output as they are)."""
        url = self.server.url(who, self.database, schema=self.name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGPASSWORD"] = self.passwords[who]
        return subprocess.run([_psql(), "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", url,
                               "-c", statement], capture_output=True, text=True, env=env,
                              timeout=60, check=False)

    def admin(self, query: str) -> list[tuple]:
        with self.server.admin(self.database) as conn:
            conn.execute(f'SET search_path TO "{self.name}", public')
            return conn.execute(query).fetchall()


def _psql() -> str:
    return shutil.which("psql") or str(bin_dir() / "psql")


def records(r: subprocess.CompletedProcess[str]) -> list[dict]:
    assert r.returncode == 0, r.stderr
    return [orjson.loads(line) for line in r.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def team(scram: ScramServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    """A team store with members alice and bob; Alice ingested a session and extracted."""
    home = tmp_path_factory.mktemp("team")
    with scram.database() as database:
        name = f"t_{uuid.uuid4().hex[:8]}"
        t = Team(scram, database, name, {"admin": scram.url(database=database)},
                 {"admin": ADMIN_PASSWORD}, home, "")
        made = records(t.hippo("admin", "team", "init", "--team", name, "--json"))[0]
        assert (made["schema"], made["owner"], made["team_role"]) == (name, f"{name}_owner", name)
        for who in ("alice", "bob"):
            member = records(t.hippo("admin", "team", "add-member", who, "--team", name,
                                     "--json"))[0]
            assert member["member"] == who and member["password"]
            assert member["pgpass"].endswith(f":{who}:{member['password']}")
            t.urls[who], t.passwords[who] = member["url"], member["password"]
        folder = home / "alice-transcripts"
        folder.mkdir()
        write_transcript(folder / "alpha-1.jsonl", "alpha-1", ALICE_TURNS)
        records(t.hippo("alice", "ingest", str(folder), "--idle-minutes", "0", "--format",
                        "generic-jsonl"))
        records(t.hippo("alice", "extract"))
        t.alice_session = records(t.hippo("alice", "export", "--store", "echo"))[0]["session"]
        yield t


def _alices_rows(t: Team) -> list[tuple]:
    return (t.admin("SELECT id, owner, session_key, messages FROM echo_sessions ORDER BY id")
            + t.admin("SELECT id, session_id, text FROM echo_chunks ORDER BY id")
            + t.admin('SELECT owner, path, "offset" FROM watermarks ORDER BY path')
            + t.admin("SELECT key, value FROM meta WHERE key LIKE 'user/%' ORDER BY key")
            + t.admin("SELECT id, memory_id, action, by_user, before, after FROM audit "
                      "ORDER BY id"))


def test_the_admin_sees_alices_rows_recorded_as_her_role(team: Team) -> None:
    assert team.admin("SELECT DISTINCT owner FROM echo_sessions") == [("alice",)]
    assert team.admin("SELECT DISTINCT by_user FROM audit") == [("alice",)]
    assert team.admin("SELECT DISTINCT owner FROM watermarks") == [("alice",)]
    # extraction's watermark is Alice's own row; there is no store-wide one
    assert [k for (k,) in team.admin("SELECT key FROM meta WHERE key LIKE '%last_chunk_id'")] \
        == ["user/alice/extract.last_chunk_id"]
    assert team.admin("SELECT count(*) FROM echo_chunks WHERE text LIKE '%zebra quartz%'")[0][0]


READS = ["SELECT count(*) FROM echo_sessions", "SELECT count(*) FROM echo_chunks",
         "SELECT count(*) FROM watermarks",
         "SELECT count(*) FROM meta WHERE key LIKE 'user/%'",
         "SELECT set_config('hippo.user', 'alice', false); SELECT count(*) FROM echo_chunks",
         "SELECT count(*) FROM echo_chunks WHERE text LIKE '%zebra%'"]
ALICES = "(SELECT id FROM echo_sessions WHERE owner = 'alice')"
NO_ROWS = [f"UPDATE echo_chunks SET text = 'gone' WHERE session_id IN {ALICES}",
           f"DELETE FROM echo_chunks WHERE session_id IN {ALICES}",
           "UPDATE echo_sessions SET owner = 'bob' WHERE owner = 'alice'",
           "DELETE FROM echo_sessions WHERE owner = 'alice'",
           "UPDATE echo_chunks SET text = 'gone' WHERE text LIKE '%zebra%'",
           "DELETE FROM watermarks WHERE owner = 'alice'",
           "UPDATE watermarks SET \"offset\" = 0 WHERE owner = 'alice'",
           "DELETE FROM meta WHERE key LIKE 'user/alice/%'",
           "UPDATE meta SET value = 'on' WHERE key = 'echo.shared'"]
REFUSED = [
    ("INSERT INTO audit(memory_id, actor, action, at, by_user) "
    "VALUES (1, 'human', 'edit', '2026-01-01', 'alice')"),
    "UPDATE audit SET by_user = 'bob'", "DELETE FROM audit",
    "UPDATE audit SET after = 'forged' WHERE by_user = 'alice'",
    ("INSERT INTO echo_sessions(session_key, format, source_path, owner) "
    "VALUES ('forged', 'generic-jsonl', '/x', 'alice')"),
    ("INSERT INTO echo_chunks(session_id, seq, source_path, roles, text, content_hash, "
    "created_at) SELECT 1, 99, '/x', 'user', 'forged', 'h', 'now'"),
    "INSERT INTO watermarks(owner, path, updated_at) VALUES ('alice', '/x', 'now')",
    "INSERT INTO meta(key, value) VALUES ('echo.shared', 'on')",
    "INSERT INTO meta(key, value) VALUES ('user/alice/extract.last_chunk_id', '0')",
    "ALTER TABLE echo_chunks DISABLE ROW LEVEL SECURITY",
    "ALTER TABLE echo_chunks NO FORCE ROW LEVEL SECURITY",
    "DROP POLICY hippo_select ON echo_chunks",
]


def test_bob_through_psql_reads_changes_deletes_and_forges_nothing_of_alices(team: Team) -> None:
    before = _alices_rows(team)
    for query in READS:
        r = team.psql("bob", query)
        assert r.returncode == 0, (query, r.stderr)
        assert r.stdout.split()[-1] == "0", query
    for query in NO_ROWS:
        r = team.psql("bob", query)
        assert r.returncode == 0, (query, r.stderr)
        assert r.stdout.split()[-1] == "0", (query, r.stdout)  # "UPDATE 0", "DELETE 0"
    for query in REFUSED:
        r = team.psql("bob", query)
        assert r.returncode != 0, query
        assert "ERROR" in r.stderr, (query, r.stderr)
    r = team.psql("bob", f'SET ROLE "{team.name}_owner"')
    assert r.returncode != 0 and "permission denied" in r.stderr
    assert _alices_rows(team) == before  # nothing of hers changed, no row in her name


def test_a_wrong_password_or_no_password_is_refused(team: Team) -> None:
    team.passwords["mallory"] = "guess"
    team.urls["mallory"] = team.urls["alice"]
    r = team.hippo("mallory", "search", "zebra")
    assert r.returncode == 78 and "refused the login" in r.stderr


@pytest.mark.parametrize("as_alice", [False, True], ids=["bob", "bob-with-HIPPO_USER=alice"])
def test_bob_through_hippo_sees_and_changes_nothing_of_alices(team: Team, as_alice: bool) -> None:
    env = {"HIPPO_USER": "alice"} if as_alice else {}
    before = _alices_rows(team)
    exported = records(team.hippo("bob", "export", "--store", "echo", **env))
    assert team.alice_session not in {r["session"] for r in exported}
    assert not any("zebra" in r["text"] for r in exported)
    found = team.hippo("bob", "echo", "zebra quartz migration", "--json", **env)
    assert found.returncode == 0 and SECRET not in found.stdout
    assert "zebra" not in found.stdout
    gone = team.hippo("bob", "echo", "--forget-session", team.alice_session, **env)
    assert gone.returncode == 1 and "no session" in gone.stderr
    assert records(team.hippo("bob", "extract", **env))[-1]["chunks"] == 0
    assert _alices_rows(team) == before


def test_bob_writes_as_his_role_whatever_hippo_user_says(team: Team) -> None:
    folder = team.home / "bob-transcripts"
    folder.mkdir(exist_ok=True)
    write_transcript(folder / "beta-1.jsonl", "beta-1", BOB_TURNS, cwd="/home/bob/beta")
    records(team.hippo("bob", "ingest", str(folder), "--idle-minutes", "0", "--format",
                       "generic-jsonl", HIPPO_USER="alice"))
    added = records(team.hippo("bob", "add", "Bob's note: the runners use 8 cores.",
                               HIPPO_USER="alice"))[0]
    assert team.admin("SELECT owner FROM echo_sessions WHERE session_key = 'beta-1'") \
        == [("bob",)]
    assert team.admin(f"SELECT by_user FROM audit WHERE memory_id = {added['id']}") \
        == [("bob",)]
    # Alice sees neither Bob's session nor anything new of hers
    assert {r["session"] for r in records(team.hippo("alice", "export", "--store", "echo"))} \
        == {team.alice_session}


def test_the_brain_is_the_teams(team: Team) -> None:
    hits = records(team.hippo("bob", "search", "--json", "-p", "alpha",
                              "which database for the event store"))
    assert any("PostgreSQL" in h["text"] for h in hits)  # extracted by Alice, read by Bob
    mine = records(team.hippo("bob", "add", "The staging database is rebuilt nightly."))[0]
    assert any(h["id"] == mine["id"] for h in records(
        team.hippo("alice", "search", "--json", "staging database rebuilt")))
    records(team.hippo("alice", "edit", str(mine["id"]), "--text",
                       "The staging database is rebuilt every night at 2."))
    assert team.admin(f"SELECT by_user FROM audit WHERE memory_id = {mine['id']} ORDER BY id") \
        == [("bob",), ("alice",)]


def test_sharing_echo_is_the_administrators_switch(team: Team) -> None:
    r = team.hippo("bob", "config", "--set", "echo.shared=on")
    assert r.returncode != 0 and r.stderr.count("\n") == 1
    admin_url = team.server.url(database=team.database, schema=team.name)
    team.urls["store-admin"], team.passwords["store-admin"] = admin_url, ADMIN_PASSWORD
    assert team.hippo("store-admin", "config", "--set", "echo.shared=on").returncode == 0
    try:
        assert team.alice_session in {  # now readable...
            r["session"] for r in records(team.hippo("bob", "export", "--store", "echo"))}
        before = _alices_rows(team)
        for query in NO_ROWS:  # ...and still not Bob's to change
            assert team.psql("bob", query).stdout.split()[-1] == "0", query
        gone = team.hippo("bob", "echo", "--forget-session", team.alice_session)
        assert gone.returncode == 1 and "no session" in gone.stderr
        assert _alices_rows(team) == before
    finally:
        assert team.hippo("store-admin", "config", "--set", "echo.shared=off").returncode == 0
    assert team.alice_session not in {
        r["session"] for r in records(team.hippo("bob", "export", "--store", "echo"))}


def test_a_role_outside_the_team_is_told_to_ask_for_hippo_team(team: Team) -> None:
    with team.server.admin(team.database) as conn:
        conn.execute("CREATE ROLE carol LOGIN PASSWORD 'carol-pw'")
    team.urls["carol"] = team.urls["alice"].replace("alice@", "carol@")
    team.passwords["carol"] = "carol-pw"
    for args in (("search", "zebra"), ("add", "Carol was here."), ("stats",)):
        r = team.hippo("carol", *args)
        assert r.returncode == 78, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and "hippo team add-member carol" in r.stderr
        assert r.stdout == ""


def test_a_member_url_without_the_teams_schema_is_told_where_stores_come_from(
        team: Team) -> None:
    team.urls["bob-no-schema"] = team.server.url("bob", team.database)
    team.passwords["bob-no-schema"] = team.passwords["bob"]
    r = team.hippo("bob-no-schema", "add", "Where does this go?")
    assert r.returncode == 78 and r.stderr.count("\n") == 1
    assert "may not create hippo's tables in schema public" in r.stderr
    assert "hippo team" in r.stderr


def test_team_init_without_the_privileges_is_refused_with_one_line(team: Team) -> None:
    r = team.hippo("bob", "team", "init", "--team", "bobs_team", "--db",
                   team.server.url("bob", team.database))
    assert r.returncode == 78
    assert r.stderr.count("\n") == 1 and "may not set up a team store" in r.stderr
    r = team.hippo("bob", "team", "add-member", "eve", "--team", team.name, "--db",
                   team.server.url("bob", team.database))
    assert r.returncode == 78 and r.stderr.count("\n") == 1
    assert team.admin("SELECT count(*) FROM pg_roles WHERE rolname IN ('eve', 'bobs_team')") \
        == [(0,)]


def test_team_init_again_is_a_no_op_and_refuses_a_shared_roles_store(team: Team) -> None:
    again = records(team.hippo("admin", "team", "init", "--team", team.name, "--json"))[0]
    assert again["schema_steps"] == []
    before = _alices_rows(team)
    assert team.alice_session not in {
        r["session"] for r in records(team.hippo("bob", "export", "--store", "echo"))}
    assert _alices_rows(team) == before
    with team.server.admin(team.database) as conn:
        conn.execute("CREATE SCHEMA legacy")
    team.urls["legacy"] = team.server.url(database=team.database, schema="legacy")
    team.passwords["legacy"] = ADMIN_PASSWORD
    records(team.hippo("legacy", "add", "A store of the shared role."))
    r = team.hippo("admin", "team", "init", "--team", "legacy_team", "--schema", "legacy")
    assert r.returncode == 78 and "set up without `hippo team init`" in r.stderr


def test_a_shared_roles_store_moves_to_the_team_store_label_by_label(team: Team) -> None:
    """The migration docs/postgres.md describes: the Brain once, each label's Echo by the
    member it names, into their own role's rows."""
    with team.server.admin(team.database) as conn:
        conn.execute("CREATE SCHEMA shared_role")
    team.urls["old"] = team.server.url(database=team.database, schema="shared_role")
    team.passwords["old"] = ADMIN_PASSWORD
    folder = team.home / "dave-transcripts"
    folder.mkdir()
    write_transcript(folder / "gamma-1.jsonl", "gamma-1", BOB_TURNS, cwd="/home/dave/gamma")
    records(team.hippo("old", "ingest", str(folder), "--idle-minutes", "0", "--format",
                       "generic-jsonl", HIPPO_USER="Dave Smith"))
    records(team.hippo("old", "extract"))
    brain = team.hippo("old", "export")
    echo = team.hippo("old", "export", "--store", "echo", HIPPO_USER="Dave Smith")
    assert records(echo) and records(brain)
    fresh = f"{team.name}_new"  # an import restores into an empty store
    records(team.hippo("admin", "team", "init", "--team", fresh))
    dave = records(team.hippo("admin", "team", "add-member", "dave", "--team", fresh))[0]
    erin = records(team.hippo("admin", "team", "add-member", "erin", "--team", fresh))[0]
    team.urls["erin"], team.passwords["erin"] = erin["url"], erin["password"]
    team.urls["dave"], team.passwords["dave"] = dave["url"], dave["password"]
    for stream in (brain.stdout, echo.stdout):
        full = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "PG"))}
        full.update(HIPPO_HOME=str(team.home / "dave"), HIPPO_EMBEDDER="hash",
                    HIPPO_DB=team.urls["dave"], PGPASSWORD=team.passwords["dave"])
        r = subprocess.run([sys.executable, "-m", "hippo", "import"], input=stream, env=full,
                           capture_output=True, text=True, timeout=180, check=False)
        assert r.returncode == 0, r.stderr
    with team.server.admin(team.database) as conn:
        conn.execute(f'SET search_path TO "{fresh}", public')
        assert conn.execute("SELECT DISTINCT owner FROM echo_sessions").fetchall() \
            == [("dave",)]
        assert conn.execute("SELECT count(*) FROM memories").fetchall()[0][0] > 0
        chunks = conn.execute("SELECT count(*) FROM echo_chunks").fetchall()
    assert {r["session"] for r in records(team.hippo("dave", "export", "--store", "echo"))} \
        == {"gamma-1"}
    assert records(team.hippo("erin", "export", "--store", "echo")) == []
    again = records(team.hippo("dave", "ingest", str(folder), "--idle-minutes", "0",
                               "--format", "generic-jsonl"))
    with team.server.admin(team.database) as conn:
        conn.execute(f'SET search_path TO "{fresh}", public')
        assert conn.execute("SELECT count(*) FROM echo_chunks").fetchall() == chunks, again


def test_a_createrole_administrator_sets_up_a_team_without_being_superuser(
        scram: ScramServer, tmp_path: Path) -> None:
    with scram.database() as database:
        with scram.admin(database) as conn:
            conn.execute("CREATE EXTENSION vector")
            conn.execute("CREATE ROLE dba LOGIN CREATEROLE PASSWORD 'dba-pw'")
            conn.execute(f'GRANT CREATE ON DATABASE "{database}" TO dba')
        t = Team(scram, database, "crew", {"dba": scram.url("dba", database)},
                 {"dba": "dba-pw"}, tmp_path, "")
        records(t.hippo("dba", "team", "init", "--team", "crew"))
        member = records(t.hippo("dba", "team", "add-member", "frank", "--team", "crew"))[0]
        t.urls["frank"], t.passwords["frank"] = member["url"], member["password"]
        assert records(t.hippo("frank", "add", "Frank's first memory."))[0]["id"] == 1
        assert t.admin("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'crew'") \
            == [("crew_owner",)]


def test_team_init_on_a_server_without_pgvector_is_78(pg15, tmp_path: Path) -> None:
    t = Team(ScramServer(pg15.socket_dir), "postgres", "x",
             {"admin": pg15.url()}, {"admin": pg15.password}, tmp_path, "")
    r = t.hippo("admin", "team", "init", "--team", "nopgv")
    assert r.returncode == 78 and r.stderr.count("\n") == 1 and "pgvector" in r.stderr


def test_team_on_a_sqlite_file_is_a_usage_error(cli, tmp_path: Path) -> None:
    r = cli("team", "init", "--db", str(tmp_path / "one.db"))
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "postgresql://" in r.stderr
