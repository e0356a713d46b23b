"""Moving a store: `hippo export | hippo import` carries both stores (Brain and Echo) and
the provenance links between them, exactly, from a SQLite file into the store under test
(a PostgreSQL schema on the postgres run) and from there into a new SQLite file again.
Every id is kept, and a later write never reuses one."""

from __future__ import annotations

from pathlib import Path

import orjson

SESSION = "a0b0c0d0-0000-4000-8000-000000000001"
TURNS = [
    ("user", "We decided to run the migrations with alembic upgrade head before each deploy."),
    ("assistant", "Understood; I will run them before deploys."),
    ("user", "Never force-push to main; the release branch is protected as well."),
    ("assistant", "Noted: no force pushes to main or release."),
]


def _transcript(path: Path, session: str, turns: list[tuple[str, str]], cwd: Path) -> Path:
    lines = [{"type": role, "sessionId": session, "uuid": f"{session[:4]}-m{i}",
              "cwd": str(cwd), "timestamp": f"2026-11-30T10:0{i}:00Z",
              "message": {"role": role, "content": text}} for i, (role, text) in enumerate(turns)]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def _provenance(cli, db, ids: list[int]) -> dict[int, list[tuple]]:
    """Each memory's links as (chunk, session, lines, text): not the session's row id,
    which an export does not carry."""
    out = {}
    for rec in cli("show", *map(str, ids), "--json", db=db).records:
        out[rec["id"]] = [(s["chunk_id"], s["session_key"], s["line_start"], s["line_end"],
                           s["text"]) for s in rec["provenance"]]
    return out


def _source_store(cli, tmp_path: Path) -> Path:
    src = tmp_path / "source.db"
    session = _transcript(tmp_path / "s.jsonl", SESSION, TURNS, tmp_path)
    assert cli("ingest", str(session), "--idle-minutes", "0", db=src).exit_code == 0
    r = cli("extract", db=src)
    assert r.exit_code == 0, r.stderr
    assert cli("add", "Deploys go through make stage", "--type", "procedure",
               "--tag", "deploy", "--tag", "ci", db=src).exit_code == 0
    gone = cli("add", "a soft-deleted note", "--json", db=src).records[0]["id"]
    assert cli("forget", str(gone), db=src).exit_code == 0
    return src


def _exports(cli, db) -> tuple[str, str]:
    brain, echo = cli("export", db=db), cli("export", "--store", "echo", db=db)
    assert brain.exit_code == 0 and echo.exit_code == 0, brain.stderr + echo.stderr
    return brain.stdout, echo.stdout


def test_export_import_round_trips_both_stores_and_links(cli, db_path, tmp_path: Path) -> None:
    src = _source_store(cli, tmp_path)
    brain, echo = _exports(cli, src)
    mems = [orjson.loads(line) for line in brain.splitlines()]
    chunks = [orjson.loads(line) for line in echo.splitlines()]
    linked = [m["id"] for m in mems if (m["source"] or {}).get("chunks")]
    assert chunks and linked, "the source store needs chunks and provenance links"
    links = _provenance(cli, src, [m["id"] for m in mems])
    assert any(links[i] for i in linked)

    # Brain first, Echo after (separate commands): the links follow once both are there.
    r = cli("import", "-", input=brain)
    assert r.exit_code == 0, r.stderr
    r = cli("import", "-", input=echo)
    assert r.exit_code == 0, r.stderr
    assert f"imported 0 memories and {len(chunks)} Echo chunks" in r.stderr
    assert _exports(cli, db_path) == (brain, echo)
    assert _provenance(cli, db_path, [m["id"] for m in mems]) == links

    # And back into a new SQLite file, both in one stream.
    back = tmp_path / "back.db"
    r = cli("import", "-", input="".join(_exports(cli, db_path)), db=back)
    assert r.exit_code == 0, r.stderr
    assert _exports(cli, back) == (brain, echo)
    assert _provenance(cli, back, [m["id"] for m in mems]) == links
    assert cli("doctor", db=db_path).exit_code == 0


def test_later_writes_never_reuse_an_imported_id(cli, db_path, tmp_path: Path) -> None:
    src = _source_store(cli, tmp_path)
    brain, echo = _exports(cli, src)
    top_memory = max(orjson.loads(line)["id"] for line in brain.splitlines())
    top_chunk = max(orjson.loads(line)["id"] for line in echo.splitlines())
    assert cli("import", "-", input=echo + brain).exit_code == 0
    new = cli("add", "a memory written after the import", "--json").records[0]
    assert new["id"] > top_memory
    other = _transcript(tmp_path / "t.jsonl", "b0b0c0d0-0000-4000-8000-000000000002",
                        [("user", "a later session, with its own words"),
                         ("assistant", "and a reply to it")], tmp_path)
    assert cli("ingest", str(other), "--idle-minutes", "0").exit_code == 0
    ids = [orjson.loads(line)["id"] for line in cli("export", "--store", "echo").stdout.splitlines()]
    assert len(ids) == len(set(ids)) and max(ids) > top_chunk
    # Importing the same export again is refused: ids are kept, never renumbered.
    r = cli("import", "-", input=echo)
    assert r.exit_code != 0 and "Echo chunk ids already exist" in r.stderr


def test_a_bad_chunk_line_costs_only_itself(cli, db_path, tmp_path: Path) -> None:
    src = _source_store(cli, tmp_path)
    _, echo = _exports(cli, src)
    first = orjson.loads(echo.splitlines()[0])
    bad = {**first, "id": 10**6, "roles": "user"}
    r = cli("import", "-", input=echo + orjson.dumps(bad).decode() + "\n")
    assert r.exit_code == 3, r.stderr
    assert "'roles' must be a list of strings" in r.stderr
    assert cli("export", "--store", "echo").stdout == echo
