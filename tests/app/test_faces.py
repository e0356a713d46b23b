"""The command line and the MCP tools are two faces of one application layer (`hippo.app`):
the same call through each returns the same results (ids, order, scores) and the same
notes, over a small real store (hash embedder: the model's quality is not under test).

Each face words a note its own way (a stderr line, a `note` field): the notes are compared
by kind and numbers. Where the faces differ by design it is said: the CLI's "Echo holds
chunks" note has no MCP counterpart (an agent has the `echo` tool), and a write through
the MCP is the machine's, audited as "mcp" (through the CLI, a person's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import BACKEND

CLI = Callable[..., Any]
HOME = "testproj"  # the project of both faces' calls (tests/conftest.py: HIPPO_PROJECT)
MEMORIES = [  # (text, type, project)
    ("The deploy pipeline runs on staging every Friday", "decision", HOME),
    ("Never deploy on a Friday afternoon without a rollback plan", "rule", HOME),
    ("Write the release notes for the deploy", "task", HOME),
    ("The staging cluster has four nodes", "fact", HOME),
    ("The billing service retries failed payments three times", "fact", "billing"),
    ("Billing deploys go through the payments staging cluster", "decision", "billing"),
]
SESSION = "5e551011-0000-4000-8000-0000000000fa"


def _transcript(tmp_path: Path) -> Path:
    """One session of project `webapp` (its cwd), for Echo."""
    project_dir = tmp_path / "webapp"
    project_dir.mkdir()
    lines = [{"type": "user", "sessionId": SESSION, "uuid": f"u{i}", "cwd": str(project_dir),
              "timestamp": f"2026-11-30T10:0{i}:00Z",
              "message": {"role": "user", "content": text}}
             for i, text in enumerate(["the flaky deploy of the webapp again",
                                       "the staging cluster lost a node during the deploy",
                                       "we rolled the webapp back by hand"])]
    path = tmp_path / "webapp.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


@pytest.fixture
def store(cli: CLI, tmp_path: Path) -> None:
    """Six memories in two projects (no global one), and Echo chunks of a third."""
    for text, type_, project in MEMORIES:
        r = cli("add", "-p", project, "--type", type_, text)
        assert r.exit_code == 0, r.stderr
    r = cli("ingest", str(_transcript(tmp_path)), "--idle-minutes", "0")
    assert r.exit_code == 0, r.stderr


@pytest.fixture
def engines(db_path: Path) -> Iterator[Callable[..., Any]]:
    """The MCP tools (`hippo.mcp.tools.Tools`, in-process) on a store, in a project."""
    from hippo.core import Hippo
    from hippo.mcp.params import McpParams
    from hippo.mcp.tools import Tools

    made: list[Any] = []

    def make(project: str = HOME, db: Path | str = db_path) -> Any:
        engine = Tools(Hippo(None, db=str(db), embedder="hash", project=project),
                        McpParams(allow_verify=True))
        made.append(engine)
        return engine

    yield make
    for engine in made:
        engine.close()


def cli_notes(stderr: str) -> list[tuple[str, tuple[float, ...]]]:
    """The CLI's notes (stderr lines) as (kind, numbers)."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("hippo: degraded: "):
            out.append(("degraded", ()))
        elif line.startswith("hippo: no result scored "):
            out.append(("under-floor", _numbers(line)))
        elif line.startswith("hippo: no match in "):
            out.append(("elsewhere", _numbers(line.split(";", 1)[1])))
        elif line.startswith("hippo: no memories match; Echo holds "):
            out.append(("echoed", _numbers(line.split(" of ", 1)[0])))
        else:
            raise AssertionError(f"a CLI line no note says: {line!r}")
    return out


def mcp_notes(answer: dict[str, Any]) -> list[tuple[str, tuple[float, ...]]]:
    """The MCP tool's notes (`degraded`, `note`) as (kind, numbers)."""
    out: list[tuple[str, tuple[float, ...]]] = [("degraded", ())
                                                 for _ in answer.get("degraded", ())]
    note = answer.get("note")
    if note is None:
        return out
    if note.startswith("no result scored "):
        out.append(("under-floor", _numbers(note)))
    elif note.startswith("no match in "):
        out.append(("elsewhere", _numbers(note.split(";", 1)[1])))
    else:
        raise AssertionError(f"an MCP note no kind says: {note!r}")
    return out


def _numbers(text: str) -> tuple[float, ...]:
    return tuple(float(n) for n in re.findall(r"\d+(?:\.\d+)?", text))


# (what, the CLI's arguments, the MCP engine's project, the search tool's arguments)
SEARCHES = [
    ("default scope", (), HOME, {}),
    ("another project", ("-p", "billing"), HOME, {"project": "billing"}),
    ("another project's own call", ("-p", "billing"), "billing", {}),
    ("every project", ("--all-projects",), HOME, {"all_projects": True}),
    ("a type", ("--type", "decision", "--type", "rule"), HOME,
     {"type_": ["decision", "rule"]}),
    ("a limit", ("-n", "2"), HOME, {"limit": 2}),
    ("everything under the floor", ("--min-score", "0.99"), HOME, {"min_score": 0.99}),
    ("nothing in scope, memories elsewhere", ("-p", "vacant"), "vacant", {}),
    ("an empty Brain beside Echo chunks", ("-p", "webapp"), "webapp", {}),
]

FOUND = {"default scope", "another project", "another project's own call", "every project",
         "a type", "a limit"}


@pytest.mark.parametrize(("what", "flags", "project", "args"), SEARCHES,
                         ids=[s[0] for s in SEARCHES])
def test_search_is_the_same_through_both_faces(cli: CLI, store: None, engines: Any,
                                               what: str, flags: tuple[str, ...],
                                               project: str, args: dict[str, Any]) -> None:
    query = "deploy staging cluster"
    r = cli("search", "--json", *flags, query)
    assert r.exit_code == 0, r.stderr
    answer = engines(project).search(query, **args)
    got = [(m["id"], round(m["score"], 3)) for m in r.records]
    assert bool(got) == (what in FOUND), what
    assert got == [(m["id"], m["score"]) for m in answer["results"]], what
    notes = cli_notes(r.stderr)
    if what.startswith(("an empty Brain", "every project, Echo")):
        # The CLI alone points at Echo (an agent has the `echo` tool for it).
        assert notes[0][0] == "echoed" and notes[0][1][0] > 0
        notes = notes[1:]
    assert notes == mcp_notes(answer), what
    if what.startswith(("nothing in scope", "an empty Brain")):
        assert notes == [("elsewhere", (float(len(MEMORIES)),))]
    if what == "everything under the floor":
        assert not got and notes[0][0] == "under-floor"


def test_echo_is_the_same_through_both_faces(cli: CLI, store: None, engines: Any) -> None:
    r = cli("echo", "--json", "-n", "3", "flaky deploy of the webapp")
    assert r.exit_code == 0, r.stderr
    answer = engines().echo("flaky deploy of the webapp", limit=3)
    assert r.records and [(c["id"], c["score"]) for c in r.records] == [
        (c["id"], c["score"]) for c in answer["results"]]
    one = cli("echo", "--json", "--session", SESSION, "--context", "1", "rolled back")
    answer = engines().echo("rolled back", session=SESSION, context=1)
    assert [(c["id"], c["score"], [n["id"] for n in c.get("context", ())])
            for c in one.records] == [(c["id"], c["score"], [n["id"] for n in c.get("context", ())])
                                      for c in answer["results"]]


@pytest.mark.parametrize("route", [False, True])
def test_context_is_the_same_through_both_faces(cli: CLI, store: None, engines: Any,
                                                route: bool) -> None:
    assert cli("add", "--type", "procedure", "Deploy with make release").exit_code == 0
    r = cli("context", "--json", *(("--route",) if route else ()))
    assert r.exit_code == 0, r.stderr
    *records, summary = r.records
    answer = engines().context(route=route)
    assert answer["tokens"] == summary["tokens"]
    layers = summary.get("layers") or {"rule_floor": {
        k: summary[k] for k in ("tokens", "budget", "included", "omitted", "omitted_ids",
                                "unverified", "unverified_ids")}}
    assert answer["layers"] == layers
    assert [m["id"] for m in records] and all(f"#{m['id']}" in answer["text"] or
                                              m["text"] in answer["text"] for m in records)


def test_get_is_show_through_both_faces(cli: CLI, store: None, engines: Any) -> None:
    (shown,) = cli("show", "--json", "2").records
    got = engines().get(2)
    for key in ("id", "text", "type", "project", "status", "tags", "importance", "author"):
        assert got[key] == shown[key], key
    assert [(e["at"], e["action"], e["actor"]) for e in shown["history"]] == [
        (e["at"], e["action"], e["actor"]) for e in got["history"]]
    assert [s["chunk_id"] for s in shown["provenance"]] == [s["chunk_id"]
                                                            for s in got["sources"]]


STATE = ("id", "text", "type", "project", "status", "superseded_by", "tags", "importance")


def _state(cli: CLI, db: Path | str) -> list[dict[str, Any]]:
    r = cli("list", "--json", "--all-projects", "--status", "all", db=db)
    assert r.exit_code == 0, r.stderr
    return sorted(({k: m[k] for k in STATE} for m in r.records), key=lambda m: m["id"])


@pytest.mark.skipif(BACKEND == "postgres", reason="two stores: one file each")
def test_writes_leave_the_same_store_through_both_faces(cli: CLI, tmp_path: Path,
                                                        engines: Any) -> None:
    """remember then get, supersede, done, forget: the same store state either way (the
    author and the audit's actor are each face's own: a person, or the agent)."""
    a, b = tmp_path / "cli.db", tmp_path / "mcp.db"
    mcp = engines(HOME, b)
    texts = [("The cache TTL is ten minutes", "config"), ("Rotate the API keys", "task"),
             ("Use tabs in the Makefile", "rule")]
    for text, type_ in texts:
        r = cli("add", "--type", type_, "--json", text, db=a)
        mid = r.records[0]["id"]
        done = mcp.remember(text, type_)
        assert (mid, r.records[0]["action"]) == (done["id"], done["action"])
        assert cli("show", "--json", str(mid), db=a).records[0]["text"] == mcp.get(mid)["text"]
    # supersede 1 by a new text: through the CLI, add it and link the two
    r = cli("add", "--type", "config", "--json", "The cache TTL is five minutes", db=a)
    assert cli("supersede", "1", "--by", str(r.records[0]["id"]), db=a).exit_code == 0
    assert mcp.supersede(1, "The cache TTL is five minutes")["new"] == r.records[0]["id"]
    assert cli("done", "2", db=a).exit_code == 0
    assert mcp.done(2)["status"] == "done"
    assert cli("forget", "3", db=a).exit_code == 0
    assert mcp.forget(3)["status"] == "deleted"
    assert _state(cli, a) == _state(cli, b)
    assert [m["status"] for m in _state(cli, a)] == ["active", "done", "deleted", "active"]


def test_one_spelling_of_scope(db_path: Path) -> None:
    """`Scope`: a project and global memories (the call's own by default), or every
    project; the pipeline's filter from it is the one the old spellings gave."""
    from hippo.app.search import HERE, scope
    from hippo.core import Hippo
    from hippo.retrieve.pipeline import make_filters
    from hippo.retrieve.request import Scope

    assert scope() == HERE == Scope() and scope("") == HERE
    assert HERE.projects("p") == ("p", None) and HERE.projects(None) == (None,)
    assert scope("q").projects("p") == ("q", None)
    assert scope(every=True).projects("p") is None and scope("q", every=True).projects("p") is None
    h = Hippo(None, db=str(db_path), embedder="hash", project="p")
    try:
        assert make_filters(h) == make_filters(h, projects=["p", None])
        assert make_filters(h, projects=scope("q")) == make_filters(h, projects=["q", None])
        assert make_filters(h, projects=scope(every=True)) == make_filters(h, projects=None)
    finally:
        h.close()
