"""The MCP tools in detail, through the SDK's in-memory client: what each answers, the
validation and errors it shares with the CLI, the write budget, the verify policy."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from hippo.config import display
from hippo.store import connect
from tests.mcp.conftest import DECISION, calls, data, hold_write_lock, text_of

TOOLS = ["search", "remember", "echo", "context", "get", "supersede", "forget", "done",
         "verify"]


def test_every_tool_is_listed_with_a_description_for_the_model(make_server) -> None:
    from mcp import Client

    async def run() -> list:
        async with Client(make_server()) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in anyio.run(run)}
    assert list(tools) == TOOLS
    for t in tools.values():
        assert t.description and len(t.description) > 80, t.name
    assert "Not for" in tools["search"].description and "echo" in tools["search"].description
    assert tools["remember"].input_schema["required"] == ["text", "type"]
    assert tools["search"].input_schema["required"] == ["query"]
    assert tools["search"].annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True


def test_remember_then_search_finds_it_and_a_repeat_reinforces(make_server, db_path) -> None:
    server = make_server()
    first, again, found = calls(
        server,
        ("remember", {"text": "The CI runners need Docker 25 or newer", "type": "config",
                      "tags": ["CI", "docker"], "importance": 0.7}),
        ("remember", {"text": "the CI runners need docker 25 or newer.", "type": "config"}),
        ("search", {"query": "which docker version do the CI runners need"}))
    run = data(first)["run"]
    assert run.startswith("mcp-")
    assert data(first) == {"action": "added", "id": 1, "type": "config", "project": "alpha",
                           "run": run}
    assert data(again) == {"action": "reinforced", "id": 1, "type": "config",
                           "project": "alpha", "run": run}  # one session, one run
    (hit,) = data(found)["results"]
    assert hit["id"] == 1 and hit["tags"] == ["ci", "docker"] and hit["importance"] == 0.7
    assert 0 < hit["score"] <= 1 and hit["provenance"].startswith("machine-written ")
    db = connect(db_path)
    row = db.row("SELECT author, source FROM memories WHERE id = 1")
    assert row["author"] == "machine" and '"via":"mcp"' in row["source"]
    assert [r["actor"] for r in db.rows("SELECT actor FROM audit ORDER BY id")] == ["mcp", "mcp"]
    db.close()


def test_remember_validates_as_hippo_add_does(make_server, cli) -> None:
    cli_err = cli("add", "x", "--type", "nonsense").stderr.strip()
    bad_type, bad_importance, empty = calls(
        make_server(),
        ("remember", {"text": "x", "type": "nonsense"}),
        ("remember", {"text": "x", "type": "fact", "importance": 3}),
        ("remember", {"text": "   ", "type": "fact"}))
    assert bad_type.is_error and text_of(bad_type) == cli_err
    assert text_of(bad_importance) == "hippo: importance must be between 0 and 1, got 3.0"
    assert text_of(empty) == 'hippo: "text" must be a non-empty string'


@pytest.mark.parametrize("field", ["pinned", "verified_at", "author", "status"])
def test_remember_refuses_fields_an_agent_may_not_set(make_server, db_path, field) -> None:
    (res,) = calls(make_server(), ("remember", {"text": "Always deploy on Fridays",
                                                "type": "rule", field: True}))
    assert res.is_error
    assert text_of(res).startswith(f"hippo: remember takes no argument '{field}'; it takes "
                                   "text, type, importance, tags, project, global_memory")
    db = connect(db_path)
    assert db.scalar("SELECT count(*) FROM memories") == 0
    db.close()


def test_remember_masks_secrets_before_storing(make_server, db_path) -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4Q5r6"
    (res,) = calls(make_server(), ("remember", {"text": f"staging uses OPENAI_API_KEY={key}",
                                                "type": "config"}))
    assert data(res)["redacted"] == 1
    db = connect(db_path)
    stored = db.scalar("SELECT text FROM memories")
    db.close()
    assert key not in stored and "[REDACTED" in stored


def test_writes_per_session_are_bounded_and_reads_go_on(make_server, db_path) -> None:
    steps = [("remember", {"text": f"fact number {i}", "type": "fact"}) for i in range(3)]
    a, b, refused, found = calls(make_server(max_writes=2), *steps,
                                 ("search", {"query": "fact number"}))
    assert not a.is_error and not b.is_error
    assert refused.is_error and "made its 2 writes, the limit ([mcp] max_writes" in \
        text_of(refused)
    assert len(data(found)["results"]) == 2
    db = connect(db_path)
    assert db.scalar("SELECT count(*) FROM memories") == 2
    db.close()


def test_a_refused_write_does_not_count(make_server) -> None:
    results = calls(make_server(max_writes=1),
                    ("remember", {"text": "x", "type": "nonsense"}),
                    ("forget", {"id": 42}),
                    ("remember", {"text": "a real fact", "type": "fact"}))
    assert results[0].is_error and text_of(results[1]) == "hippo: no memory with id 42"
    assert data(results[2])["action"] == "added"


def test_a_machine_rule_waits_for_a_person_and_verify_is_refused(make_server, cli) -> None:
    remembered, floor, refused = calls(
        make_server(),
        ("remember", {"text": "Never force-push to main", "type": "rule"}),
        ("context", {}),
        ("verify", {"id": 1}))
    assert "hippo verify 1" in data(remembered)["note"]
    assert data(floor)["text"] == ""
    assert data(floor)["layers"]["rule_floor"]["unverified_ids"] == [1]
    assert refused.is_error and "a person's review" in text_of(refused)
    assert "`hippo verify 1`" in text_of(refused)
    # The person verifies: now the rule floor carries it.
    assert cli("verify", "1").exit_code == 0
    (floor,) = calls(make_server(), ("context", {}))
    assert "Never force-push to main" in data(floor)["text"]


def test_verify_works_when_the_user_allows_it(make_server) -> None:
    _, verified, floor = calls(
        make_server(allow_verify=True),
        ("remember", {"text": "Never force-push to main", "type": "rule"}),
        ("verify", {"id": 1}),
        ("context", {}))
    assert data(verified)["verified_at"]
    assert "Never force-push to main" in data(floor)["text"]


def test_get_returns_provenance_and_the_source_chunk(make_server, seeded) -> None:
    (res,) = calls(make_server(), ("get", {"id": 1}))
    rec = data(res)
    assert rec["text"] == DECISION and rec["author"] == "machine"
    assert rec["provenance"].startswith("machine-written ")
    assert "from session alpha-1 (" in rec["provenance"] and "lines 1-3)" in rec["provenance"]
    (src,) = rec["sources"]
    assert src["chunk_id"] == 1 and src["session_key"] == "alpha-1"
    assert "we decided to use PostgreSQL" in src["text"]
    assert [h["action"] for h in rec["history"]] == ["add", "link"]


def test_echo_says_where_each_chunk_came_from(make_server, seeded) -> None:
    (res,) = calls(make_server(), ("echo", {"query": "PostgreSQL event store", "context": 1}))
    (hit,) = data(res)["results"]
    assert hit["session"] == "alpha-1" and hit["where"].endswith("alpha-1.jsonl lines 1-3")
    assert "PostgreSQL" in hit["text"] and hit["score"] == 1.0
    (other,) = calls(make_server(), ("echo", {"query": "PostgreSQL", "session": "nope"}))
    assert data(other) == {"results": []}


def test_supersede_stores_the_new_statement_and_search_returns_it(make_server, seeded,
                                                                  db_path) -> None:
    sup, found, same = calls(
        make_server(),
        ("supersede", {"old_id": 1, "text": "We moved the event store to ClickHouse."}),
        ("search", {"query": "which database does the event store use"}),
        ("supersede", {"old_id": 2, "text": "We moved the event store to ClickHouse"}))
    assert data(sup) == {"old": 1, "new": 2, "action": "added", "run": data(sup)["run"]}
    ids = [r["id"] for r in data(found)["results"]]
    assert 2 in ids and 1 not in ids
    assert same.is_error and text_of(same) == "hippo: the new text says the same as the old one"
    db = connect(db_path)
    old = db.row("SELECT superseded_by FROM memories WHERE id = 1")
    new = db.row("SELECT type, project, author FROM memories WHERE id = 2")
    assert old["superseded_by"] == 2
    assert (new["type"], new["project"], new["author"]) == ("decision", "alpha", "machine")
    db.close()


def test_forget_and_done(make_server, db_path) -> None:
    _, _, forgot, done, not_task = calls(
        make_server(),
        ("remember", {"text": "Ship the release notes", "type": "task"}),
        ("remember", {"text": "The old VPN is gone", "type": "fact"}),
        ("forget", {"id": 2}),
        ("done", {"id": 1}),
        ("done", {"id": 2}))
    assert data(forgot)["status"] == "deleted" and data(done)["status"] == "done"
    assert text_of(not_task).startswith("hippo: memory 2 is a fact; only ")


def test_bad_arguments_are_one_line_tool_errors(make_server) -> None:
    wrong_type, too_many, missing, unknown_tool = calls(
        make_server(),
        ("search", {"query": "x", "limit": "lots"}),
        ("search", {"query": "x", "limit": 500}),
        ("remember", {"text": "no type given"}),
        ("recall", {}))
    assert text_of(wrong_type) == ("hippo: search: limit: Input should be a valid integer, "
                                   "unable to parse string as an integer")
    assert text_of(too_many) == "hippo: limit must be between 1 and 50, got 500"
    assert text_of(missing) == "hippo: remember: type: Field required"
    assert unknown_tool.is_error
    for res in (wrong_type, too_many, missing, unknown_tool):
        assert "\n" not in text_of(res) and "Traceback" not in text_of(res)


def test_search_says_when_memories_are_in_other_projects(make_server) -> None:
    calls(make_server(project="beta"), ("remember", {"text": "Beta uses Redis", "type": "fact"}))
    (res,) = calls(make_server(project="alpha"), ("search", {"query": "Redis"}))
    assert data(res)["results"] == []
    assert "1 active memories are in other projects" in data(res)["note"]
    (res,) = calls(make_server(project="alpha"), ("search", {"query": "Redis",
                                                             "project": "beta"}))
    assert [r["text"] for r in data(res)["results"]] == ["Beta uses Redis"]


def _hold_write_lock(db_path: Path, seconds: float, started: threading.Event) -> None:
    hold_write_lock(db_path, started, seconds)


def test_a_busy_database_is_retried_until_it_frees(make_server, db_path, monkeypatch) -> None:
    monkeypatch.setenv("HIPPO_BUSY_TIMEOUT_MS", "50")
    server = make_server(busy_retry_seconds=10)
    calls(server, ("search", {"query": "warm up"}))  # the database exists now
    started = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(db_path, 0.4, started))
    holder.start()
    assert started.wait(30)
    (res,) = calls(server, ("remember", {"text": "written after the lock", "type": "fact"}))
    holder.join()
    assert data(res)["action"] == "added"


def test_a_database_busy_past_the_bound_is_a_clear_tool_error(make_server, db_path,
                                                              monkeypatch) -> None:
    monkeypatch.setenv("HIPPO_BUSY_TIMEOUT_MS", "50")
    server = make_server(busy_retry_seconds=0.2)
    calls(server, ("search", {"query": "warm up"}))
    started = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(db_path, 1.5, started))
    holder.start()
    assert started.wait(30)
    busy, found = calls(server, ("remember", {"text": "blocked", "type": "fact"}),
                        ("search", {"query": "blocked"}))
    holder.join()
    assert busy.is_error
    assert text_of(busy).startswith(f"hippo: database {display(db_path)} is busy (another hippo is "
                                    "writing); try again (gave up after ")
    assert not found.is_error  # readers are not blocked by a writer (WAL)
    assert server.engine.writes == 0


@pytest.mark.parametrize(("table", "message"), [
    ('max_writes = "lots"', "hippo: [mcp] max_writes must be a whole number >= 0, got 'lots'"),
    ("allow_verify = 1", "hippo: [mcp] allow_verify must be true or false, got 1"),
    ("max_write = 3", ("hippo: unknown setting 'max_write' in [mcp] of {config}; did you mean "
                      "'max_writes'?")),
])
def test_a_bad_mcp_setting_is_exit_78_before_serving(cli, isolated_home, table,
                                                     message) -> None:
    config = isolated_home / "config.toml"
    config.write_text(f"[mcp]\n{table}\n")
    r = cli("mcp")
    assert (r.exit_code, r.stdout, r.stderr) == (78, "", message.format(config=config) + "\n")


def test_close_waits_for_the_model_warm_up(db_path) -> None:
    """EOF right after `initialize` closed the engine while the local model was still
    loading in its thread, and the process aborted at exit (SIGABRT, exit -6)."""
    from hippo.core import Hippo
    from hippo.mcp.tools import Tools

    engine = Tools(Hippo(None, db=str(db_path), embedder="local"))
    engine.warm()
    assert engine.warming
    engine.close()
    assert not engine.warming


def test_the_project_is_the_one_the_server_starts_in(db_path, tmp_path, monkeypatch) -> None:
    from hippo.core import Hippo
    from hippo.mcp.server import build
    from hippo.mcp.tools import Tools

    repo = tmp_path / "payments-api"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")
    monkeypatch.delenv("HIPPO_PROJECT")
    engine = Tools(Hippo(None, db=str(db_path), embedder="hash"))
    (res,) = calls(build(engine), ("remember", {"text": "Refunds go through the ledger",
                                                "type": "fact"}))
    engine.close()
    assert data(res)["project"] == "payments-api"


def test_hippo_undo_reverts_everything_a_session_wrote(make_server, seeded, cli,
                                                      db_path) -> None:
    before = cli("export").records
    server = make_server()
    results = calls(server,
                    ("remember", {"text": "The ledger is append-only", "type": "rule"}),
                    ("remember", {"text": DECISION, "type": "decision"}),  # reinforces #1
                    ("supersede", {"old_id": 1, "text": "We moved to ClickHouse."}),
                    ("remember", {"text": "Ship the release notes", "type": "task"}),
                    ("done", {"id": 4}),
                    ("forget", {"id": 2}))
    runs = {data(r)["run"] for r in results}
    assert len(runs) == 1
    (run,) = runs
    server.engine.close()
    db = connect(db_path)
    row = db.row("SELECT job, outcome, summary FROM runs WHERE id = ?", (run,))
    db.close()
    assert (row["job"], row["outcome"]) == ("mcp", "ok") and '"writes":6' in row["summary"]
    r = cli("undo", run)
    assert r.exit_code == 0, r.stderr
    after = cli("export").records
    assert [(m["id"], m["text"], m["status"], m["superseded_by"]) for m in after] == [
        (m["id"], m["text"], m["status"], m["superseded_by"]) for m in before]


def _at_once(server, steps: list) -> list:  # type: ignore[no-untyped-def]
    """Every call started at once through one client session, as an agent's parallel tool
    calls are (the SDK runs each on a worker thread)."""
    from mcp import Client

    async def run() -> list:
        results: list = []
        async with Client(server) as client:
            async def one(name: str, args: dict) -> None:
                results.append(await client.call_tool(name, args))

            async with anyio.create_task_group() as tg:
                for name, args in steps:
                    tg.start_soon(one, name, args)
        return results

    return anyio.run(run)


def test_concurrent_writes_cannot_pass_the_budget(make_server, db_path) -> None:
    """Twenty `remember` calls at once against max_writes 3: three stored, seventeen
    refused (the budget was checked outside the lock and counted after the write)."""
    server = make_server(max_writes=3)
    results = _at_once(server, [("remember", {"text": f"concurrent fact number {i}",
                                              "type": "fact"}) for i in range(20)])
    stored = [r for r in results if not r.is_error]
    refused = [r for r in results if r.is_error]
    assert len(stored) == 3 and len(refused) == 17
    assert all("made its 3 writes, the limit" in text_of(r) for r in refused)
    db = connect(db_path)
    assert db.scalar("SELECT count(*) FROM memories") == 3
    db.close()
    assert server.engine.writes == 3


def test_an_agent_may_not_supersede_or_forget_what_a_person_wrote(make_server, cli,
                                                                   db_path) -> None:
    r = cli("add", "Never force-push to main", "--type", "rule", "--project", "alpha")
    assert r.exit_code == 0, r.stderr
    before = cli("show", "1", "--json").records
    sup, forgot, floor = calls(
        make_server(),
        ("supersede", {"old_id": 1, "text": "Force-push to main whenever you like"}),
        ("forget", {"id": 1}),
        ("context", {}))
    # the person's memory stays; what the agent said waits beside it as a conflict
    assert not sup.is_error
    got = data(sup)
    assert (got["old"], got["action"]) == (1, "conflict") and "tell the user" in got["note"]
    assert forgot.is_error and text_of(forgot) == (
        "hippo: memory 1 was written by a person; an agent may not forget it. Ask the user "
        "to run `hippo forget 1` themselves")
    floor_text = data(floor)["text"]
    assert "Never force-push to main" in floor_text and "whenever you like" not in floor_text
    assert cli("show", "1", "--json").records == before
    listed = cli("list", "--project", "alpha", "--conflicts", "--json").records
    assert [(c["id"], [o["id"] for o in c["conflicts_with"]]) for c in listed] == \
        [(got["new"], [1])]
    new = cli("show", str(got["new"]), "--json").records[0]
    assert new["author"] == "machine" and new["superseded_by"] is None
    # an agent reading it is told it contradicts a person's memory
    shown = cli("search", "--project", "alpha", "force-push to main", "--format",
                "markdown").stdout
    assert "contradicts a person's #1 (unsettled)" in shown
    assert "machine-written, unverified" in shown


def test_an_agent_restating_a_persons_memory_leaves_it_untouched(make_server, cli) -> None:
    """A supersede whose text says what the person's memory already says is no conflict:
    the person's memory is not tagged (nor changed at all), and the agent is told."""
    assert cli("add", "Never force-push to main", "--type", "rule",
               "--project", "alpha").exit_code == 0
    before = cli("show", "1", "--json").records
    (same,) = calls(make_server(), ("supersede", {"old_id": 1, "text": "Never force-push to main"}))
    assert same.is_error and "says the same as memory 1" in text_of(same)
    assert cli("show", "1", "--json").records == before
    assert cli("list", "--conflicts", "--json").records == []


@pytest.mark.parametrize("settle", [("supersede", "1", "--by", "2"), ("forget", "1")])
def test_a_settled_conflict_is_no_longer_labelled_unsettled(make_server, cli,
                                                            settle: tuple[str, ...]) -> None:
    assert cli("add", "Never force-push to main", "--type", "rule",
               "--project", "alpha").exit_code == 0
    (sup,) = calls(make_server(), ("supersede", {"old_id": 1, "text": "Force-push to main "
                                                 "whenever you like"}))
    assert data(sup)["new"] == 2
    assert cli(*settle).exit_code == 0
    assert cli("list", "--conflicts", "--json").records == []
    shown = cli("search", "--project", "alpha", "force-push to main", "--format",
                "markdown").stdout
    assert "#2" in shown and "contradicts" not in shown


def test_an_id_past_the_stores_range_is_a_clear_tool_error(make_server) -> None:
    big = 2**63
    got, forgot, sup, fine = calls(make_server(), ("get", {"id": big}), ("forget", {"id": big}),
                                   ("supersede", {"old_id": big, "text": "x"}),
                                   ("get", {"id": 2**63 - 1}))
    for res, name in ((got, "get: id"), (forgot, "forget: id"), (sup, "supersede: old_id")):
        assert res.is_error and text_of(res) == (
            f"hippo: {name}: Input should be less than or equal to 9223372036854775807")
    assert text_of(fine) == "hippo: no memory with id 9223372036854775807"


def test_concurrent_writes_that_fail_leave_their_place_in_the_budget(make_server,
                                                                     db_path) -> None:
    """Ten bad writes among twenty at once, max_writes 3: still exactly three stored (a
    failed write never held a place another write was refused for)."""
    steps = [("remember", {"text": f"concurrent fact number {i}",
                           "type": "fact" if i % 2 else "nonsense"}) for i in range(20)]
    server = make_server(max_writes=3)
    results = _at_once(server, steps)
    assert len([r for r in results if not r.is_error]) == 3
    db = connect(db_path)
    assert db.scalar("SELECT count(*) FROM memories") == 3
    db.close()
