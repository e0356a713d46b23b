"""Echo on a shared store: a transcript is seen only by the user who ingested it, unless
the team turns sharing on (`hippo config --set echo.shared=on`). Two users are two
HIPPO_USER values against one database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from hippo.ingest.chunk import Chunk
from hippo.store import connect
from hippo.store.filters import EchoFilters
from hippo.store.watermarks import Watermark

T0 = "2026-01-02T03:04:05.000Z"
team = pytest.mark.postgres_only(reason="a SQLite file has one user")


def _chunk(i: int) -> Chunk:
    return Chunk(f"user: turn {i}", ["user"], i, i + 1, [f"m{i}"], T0, T0, "s")


@pytest.fixture
def as_user(db_path: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable]:
    """A connection to the one store as a user (HIPPO_USER, read at connect)."""
    opened = []

    def open_as(user: str):  # type: ignore[no-untyped-def]
        monkeypatch.setenv("HIPPO_USER", user)
        opened.append(connect(db_path))
        return opened[-1]

    yield open_as
    for db in opened:
        db.close()


def _ingest(db, key: str, path: str, texts: list[str]) -> list[int]:  # type: ignore[no-untyped-def]
    with db.transaction():
        sid = db.chunks.add_session(key, fmt="generic", source_path=path, project="p",
                                    cwd=None, parent_key=None, agent=None, started_at=T0)
        return db.chunks.add(sid, [_chunk(i) for i in range(len(texts))], texts, None,
                             source_path=path, project="p")


def _searchable(db) -> list[int]:  # type: ignore[no-untyped-def]
    """What every Echo search reads (`chunk_where`)."""
    from hippo.store.clauses import chunk_where

    where, params = chunk_where(db.dialect, EchoFilters())
    return [r["id"] for r in db.rows(
        "SELECT c.id FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id "
        f"WHERE {where} ORDER BY c.id", params)]


@team
def test_a_users_echo_is_their_own_until_the_team_shares_it(as_user) -> None:  # type: ignore[no-untyped-def]
    alice, bob = as_user("alice"), as_user("bob")
    mine = _ingest(alice, "s1", "/home/t/a.jsonl", ["alice one", "alice two", "alice three"])
    assert alice.row("SELECT owner FROM echo_sessions") == {"owner": "alice"}
    # Bob sees none of it, by any read.
    assert bob.chunks.get(mine) == {} and bob.chunks.count("p") == 0
    assert bob.chunks.count(every_project=True) == 0 and list(bob.chunks.export()) == []
    assert bob.chunks.ids_of_session("s1") == [] and _searchable(bob) == []
    row = alice.chunks.get(mine)[mine[1]]
    assert [r["text"] for r in alice.chunks.neighbours(row, 1)] == ["alice one", "alice three"]
    assert bob.chunks.neighbours(row, 1) == []
    # Bob's own ingest of the same session key and path is his own session.
    assert bob.chunks.find_session("s1") is None
    his = _ingest(bob, "s1", "/home/t/a.jsonl", ["bob one"])
    assert bob.chunks.ids_of_file("/home/t/a.jsonl") == his
    assert alice.chunks.ids_of_file("/home/t/a.jsonl") == mine
    assert _searchable(alice) == mine and _searchable(bob) == his
    # Forgetting his session leaves hers.
    with bob.transaction():
        bob.chunks.delete(bob.chunks.ids_of_session("s1"), secure=True)
        bob.chunks.delete_session("s1")
    assert sorted(alice.chunks.get(mine)) == mine and alice.chunks.find_session("s1")
    assert bob.chunks.find_session("s1") is None

    # The team turns sharing on: every read sees every session; ingest stays each user's.
    with bob.transaction():
        bob.meta.set("echo.shared", "on")
    assert sorted(bob.chunks.get(mine)) == mine and bob.chunks.count("p") == 3
    assert [r["id"] for r in bob.chunks.export()] == mine == _searchable(bob)
    assert [r["text"] for r in bob.chunks.neighbours(row, 1)] == ["alice one", "alice three"]
    assert bob.chunks.ids_of_session("s1") == mine
    assert bob.chunks.find_session("s1") is None and bob.chunks.ids_of_file("/home/t/a.jsonl") == []
    with alice.transaction():
        alice.meta.set("echo.shared", "off")
    assert bob.chunks.get(mine) == {} and _searchable(bob) == []


@team
def test_watermarks_are_each_users_own(as_user) -> None:  # type: ignore[no-untyped-def]
    alice, bob = as_user("alice"), as_user("bob")
    with alice.transaction():
        alice.watermarks.save(Watermark("/w/a.md", 10, 2, None, 10, 1.0, "aider", None, True))
    assert bob.watermarks.all() == {} and bob.watermarks.offsets() == []
    with bob.transaction():
        bob.watermarks.save(Watermark("/w/a.md", 3, 1, None, 3, 2.0, "aider", None, False))
        bob.watermarks.delete("/w/a.md")
    assert alice.watermarks.offsets() == [("/w/a.md", 10)] and bob.watermarks.all() == {}


@team
def test_a_shared_memorys_sources_show_only_what_the_user_may_see(as_user, cli) -> None:  # type: ignore[no-untyped-def]
    r = cli("add", "staging needs the corporate CA bundle", "--json", env={"HIPPO_USER": "alice"})
    assert r.exit_code == 0, r.stderr
    memory_id = r.records[0]["id"]
    alice, bob = as_user("alice"), as_user("bob")
    chunk = _ingest(alice, "s1", "/home/t/a.jsonl", ["the proxy wants the CA bundle"])[0]
    with alice.transaction():
        alice.memories.link(memory_id, chunk, T0)
    assert [s["text"] for s in alice.memories.sources(memory_id)] == ["the proxy wants the CA bundle"]
    assert [(s["chunk_id"], s["text"], s["session_key"]) for s in bob.memories.sources(memory_id)] \
        == [(chunk, None, None)]  # as a forgotten chunk is shown
    assert alice.chunks.session_id("s1") is not None and bob.chunks.session_id("s1") is None
    with alice.transaction():
        alice.meta.set("echo.shared", "on")
    assert [s["text"] for s in bob.memories.sources(memory_id)] == ["the proxy wants the CA bundle"]
    assert bob.chunks.session_id("s1") == alice.chunks.session_id("s1")


def _transcript(tmp_path: Path, name: str, words: str) -> Path:
    src = tmp_path / name
    src.write_bytes(orjson.dumps({"role": "user", "content": words}) + b"\n"
                    + orjson.dumps({"role": "assistant", "content": "noted, " + words}) + b"\n")
    return src


@team
def test_ingest_export_and_forget_by_two_users(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    alice, bob = {"HIPPO_USER": "alice"}, {"HIPPO_USER": "bob"}
    src = _transcript(tmp_path, "chat.jsonl", "the staging proxy needs the corporate CA bundle")
    args = ("ingest", str(src), "--idle-minutes", "0", "--format", "generic-jsonl")
    assert cli(*args, env=alice).exit_code == 0
    # Bob's ingest of a file at the same path is his own read of it (his own watermark).
    again = cli(*args, env=bob).records
    assert [e["status"] for e in again if e["event"] == "file"] == ["ingested"]
    export = ("export", "--store", "echo")
    mine = cli(*export, env=alice).records
    assert len(mine) == len(cli(*export, env=bob).records) > 0
    key = mine[0]["session"]
    assert cli("echo", "--forget-session", key, env=bob).exit_code == 0
    assert cli(*export, env=bob).records == [] and cli(*export, env=alice).records == mine

    # Shared: Bob sees Alice's transcript; `hippo config` says so.
    r = cli("config", "--set", "echo.shared=on", "--json", env=bob)
    assert r.exit_code == 0, r.stderr
    assert r.records == [{"name": "echo.shared", "value": "on", "origin": "store",
                          "help": "set for every user"}]
    assert cli(*export, env=bob).records == mine
    shown = {x["name"]: x for x in cli("config", "--json", env=alice).records}
    assert shown["echo.shared"]["value"] == "on" and shown["echo.shared"]["origin"] == "store"


@team
def test_echo_search_sees_only_the_users_own_sessions(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    alice, bob = {"HIPPO_USER": "alice"}, {"HIPPO_USER": "bob"}
    src = _transcript(tmp_path, "a.jsonl", "ERR_SSL_PROTOCOL_ERROR behind the proxy")
    r = cli("ingest", str(src), "--idle-minutes", "0", "--format", "generic-jsonl", env=alice)
    assert r.exit_code == 0, r.stderr
    query = ("echo", "ERR_SSL_PROTOCOL_ERROR proxy", "--json")
    assert cli(*query, env=alice).records
    assert cli(*query, env=bob).records == []
    assert cli("config", "--set", "echo.shared=on", env=alice).exit_code == 0
    assert [x["text"] for x in cli(*query, env=bob).records] == [
        x["text"] for x in cli(*query, env=alice).records]


def test_store_settings_are_checked(cli) -> None:  # type: ignore[no-untyped-def]
    for bad in ("echo.shared=maybe", "echo.share=on", "echo.shared"):
        r = cli("config", "--set", bad)
        assert r.exit_code == 2 and "--set" in r.stderr, r.stderr


@pytest.mark.sqlite_only(reason="a SQLite file has one user: there is no team to share with")
def test_a_sqlite_store_has_no_team_settings(cli) -> None:  # type: ignore[no-untyped-def]
    r = cli("config", "--set", "echo.shared=on")
    assert r.exit_code == 2 and "SQLite" in r.stderr
    assert "echo.shared" not in {x["name"] for x in cli("config", "--json").records}
