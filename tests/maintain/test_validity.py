"""Validity as data (issue 32, part 1): `valid_from` and `valid_to` on every memory, on both
backends; the migration of an older store; supersede sets `valid_to` and undo takes it back;
`--as-of` answers what was held then; what is current never includes a replaced memory."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hippo.config import is_server
from hippo.core import Hippo
from hippo.maintain import lifecycle
from hippo.ops.jobs import job
from hippo.store import connect
from tests.maintain.conftest import jsonl

OLD = "The API listens on port 8080"
NEW = "The API listens on port 9090"


def _lines(stderr: str) -> list[str]:
    return [x for x in stderr.splitlines() if x.strip()]


def _older_store(db_path: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store with the schema steps before the validity one, holding: memory 1 linked to an
    Echo chunk said at 2026-01-02T03:04:05Z, memory 2 not linked, memory 3 superseded by 2
    (audited at 2026-02-01), memory 4 superseded with no audit of it."""
    if is_server(db_path):
        from hippo.store.postgres import migrations
    else:
        from hippo.store.sqlite import migrations  # type: ignore[no-redef]
    steps = migrations.MIGRATIONS
    at = [name for name, _ in steps].index(
        "p0002_validity" if is_server(db_path) else "0009_validity")
    monkeypatch.setattr(migrations, "MIGRATIONS", steps[:at])
    db = connect(db_path)
    try:
        with db.transaction():
            db.execute("INSERT INTO echo_sessions(id, session_key, format, "
                       "source_path) VALUES (1, 's1', 'generic', '/t.jsonl')")
            for cid, at in ((1, "2026-01-02T03:04:05Z"), (2, "2026-01-03T00:00:00.000Z")):
                db.execute("INSERT INTO echo_chunks(id, session_id, seq, "
                           "source_path, roles, started_at, text, content_hash, "
                           "created_at) VALUES (?, 1, ?, '/t.jsonl', 'user', ?, 'said', "
                           "'h', '2026-03-01T00:00:00.000Z')", (cid, cid, at))
            for mid, by in ((1, None), (2, None), (3, 2), (4, 2)):
                db.execute("INSERT INTO memories(id, text, type, tier, author, "
                           "created_at, updated_at, superseded_by, dedup_key, "
                           "content_hash) VALUES (?, ?, 'fact', 'semantic', 'machine', "
                           "'2026-03-01T00:00:00.000Z', '2026-03-05T00:00:00.000Z', ?, "
                           "?, '')", (mid, f"memory {mid}", by, f"k{mid}"))
            for cid in (2, 1):
                db.execute("INSERT INTO memory_sources(memory_id, chunk_id, "
                           "added_at) VALUES (1, ?, '2026-03-01T00:00:00.000Z')", (cid,))
            db.execute("INSERT INTO audit(memory_id, actor, action, at) VALUES "
                       "(3, 'human', 'supersede', '2026-02-01T00:00:00.000Z')")
    finally:
        db.close()
    monkeypatch.setattr(migrations, "MIGRATIONS", steps)


def test_the_migration_backfills_validity_on_an_older_store(cli, db_path, monkeypatch) -> None:
    _older_store(db_path, monkeypatch)
    r = cli("list", "--json")  # a read command needs the step: one line, exit 78
    assert r.exit_code == 78 and len(_lines(r.stderr)) == 1 and "older hippo" in r.stderr
    assert r.stdout == ""
    connect(db_path).close()  # any write migrates
    got = {m["id"]: (m["valid_from"], m["valid_to"])
           for m in cli("export").records}
    assert got == {
        1: ("2026-01-02T03:04:05.000Z", None),  # the earliest source chunk, canonical form
        2: ("2026-03-01T00:00:00.000Z", None),  # no source: created_at
        3: ("2026-03-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"),  # the supersede's audit
        4: ("2026-03-01T00:00:00.000Z", "2026-03-05T00:00:00.000Z"),  # else its last update
    }
    # As of 2026-03-02, 3 was already replaced (in February), 4 not yet; as of 2026-01-10
    # only what the January chunk said held.
    assert _ids(cli("list", "--as-of", "2026-01-10", "--json")) == [1]
    assert _ids(cli("list", "--as-of", "2026-03-02", "--json")) == [1, 2, 4]


def test_supersede_sets_valid_to_and_undo_restores_the_export(cli, seed, db_path,
                                                              check) -> None:
    seed([{"text": OLD, "type": "config"}, {"text": NEW, "type": "config"}])
    before = cli("export").stdout
    for rec in cli("export").records:
        assert rec["valid_from"] == rec["created_at"] and rec["valid_to"] is None
    h = Hippo.open(db_path, embedder="hash")
    with job(h.db, "supersede") as run:
        lifecycle.supersede(h.db, 1, 2, actor="extract", run_id=run.id)
    h.close()
    (old,) = cli("show", "1", "--json").records
    assert old["superseded_by"] == 2 and old["valid_to"] == old["updated_at"]
    assert old["replaced_by"] == {"id": 2, "text": NEW, "at": old["valid_to"],
                                  "by": "extract", "run_id": run.id, "chunks": []}
    (new,) = cli("show", "2", "--json", "--no-history").records
    assert new["replaces"] == [{"id": 1, "text": OLD, "valid_to": old["valid_to"],
                                "run_id": run.id}]
    assert new["replaced_by"] is None and new["valid_to"] is None
    r = cli("undo", run.id)
    assert r.exit_code == 0, r.stderr
    assert cli("export").stdout == before
    check(db_path)
    # A person's supersede and --clear: valid_to set, then cleared.
    assert cli("supersede", "1", "--by", "2").exit_code == 0
    (old,) = cli("show", "1", "--json").records
    assert old["valid_to"] == old["updated_at"]
    assert cli("supersede", "1", "--clear").exit_code == 0
    (old,) = cli("show", "1", "--json").records
    assert old["superseded_by"] is None and old["valid_to"] is None


def test_show_prints_the_chain_at_a_terminal(cli, seed) -> None:
    import io

    from rich.console import Console

    from hippo.cli.show import _print_chain

    seed([{"text": OLD, "type": "config"}, {"text": NEW, "type": "config"}])
    assert cli("supersede", "1", "--by", "2").exit_code == 0
    (old,) = cli("show", "1", "--json").records
    (new,) = cli("show", "2", "--json").records
    for rec, want in ((old, f"  replaced by #2 at {old['valid_to']} (by human): {NEW}"),
                      (new, f"  replaces #1 (valid until {old['valid_to']}): {OLD}")):
        buf = io.StringIO()
        _print_chain(Console(file=buf, width=200), rec)
        assert buf.getvalue().splitlines() == [want]


def _ids(result) -> list[int]:
    return sorted(r["id"] for r in result.records)


def test_as_of_answers_what_was_held_then(cli, seed) -> None:
    seed([{"text": OLD, "type": "config", "created_at": "2026-01-01T00:00:00.000Z"},
          {"text": NEW, "type": "config", "created_at": "2026-02-01T00:00:00.000Z"}])
    assert cli("supersede", "1", "--by", "2").exit_code == 0  # now
    query = ("search", "API listens port", "--json")
    assert _ids(cli(*query)) == [2]  # what is current
    assert _ids(cli(*query, "--as-of", "2026-01-15")) == [1]  # before the new one
    assert _ids(cli(*query, "--as-of", "2026-02-15T12:00Z")) == [1, 2]  # not yet replaced
    assert _ids(cli(*query, "--as-of", "2099-01-01")) == [2]  # replaced by then
    assert _ids(cli(*query, "--include-superseded")) == [1, 2]
    assert _ids(cli("list", "--json", "--as-of", "2026-01-15")) == [1]
    assert _ids(cli("list", "--json", "--as-of", "2026-02-15")) == [1, 2]
    # `list` is an inspection: it shows the replaced one too, its superseded_by set.
    assert [(r["id"], r["superseded_by"]) for r in cli("list", "--json").records] == [
        (2, None), (1, 2)]
    assert _ids(cli(*query, "--as-of", "2025-12-01")) == []


@pytest.mark.parametrize("args", [("search", "port", "--as-of", "last tuesday"),
                                  ("list", "--as-of", "2026-13-45"),
                                  ("search", "port", "--as-of", "99999999d")])
def test_a_bad_as_of_exits_2_with_one_line(cli, seed, args) -> None:
    seed([{"text": OLD}])
    r = cli(*args)
    assert r.exit_code == 2 and r.stdout == ""
    assert len(_lines(r.stderr)) == 1 and "--as-of" in r.stderr, r.stderr


def test_export_import_round_trips_validity(cli, seed, tmp_path: Path) -> None:
    records = [
        {"id": 1, "text": OLD, "type": "config", "created_at": "2026-01-05T00:00:00.000Z",
         "valid_from": "2026-01-01T09:30:00.000Z", "superseded_by": 2,
         "valid_to": "2026-02-03T10:00:00.000Z", "updated_at": "2026-02-03T10:00:00.000Z"},
        {"id": 2, "text": NEW, "type": "config", "created_at": "2026-02-03T10:00:00.000Z"},
        {"id": 3, "text": "the cache expires next year", "valid_to": "2099-01-01T00:00:00.000Z"},
    ]
    out = seed(records)
    assert [r["id"] for r in out] == [1, 2, 3]
    exported = cli("export").stdout
    recs = [orjson.loads(x) for x in exported.splitlines()]
    assert [(r["valid_from"], r["valid_to"]) for r in recs] == [
        ("2026-01-01T09:30:00.000Z", "2026-02-03T10:00:00.000Z"),
        ("2026-02-03T10:00:00.000Z", None), (recs[2]["created_at"], "2099-01-01T00:00:00.000Z")]
    back = tmp_path / "back.db"
    r = cli("import", "-", input=exported, db=back)
    assert r.exit_code == 0, r.stderr
    assert cli("export", db=back).stdout == exported
    # A validity that ends later is current until then.
    assert 3 in _ids(cli("search", "cache expires", "--json"))
    assert 1 not in _ids(cli("search", "cache expires", "--json"))
    r = cli("add", "-", input=jsonl([{"text": "x", "valid_from": "2026-02-01T00:00:00Z",
                                      "valid_to": "2026-01-01T00:00:00Z"}]))
    assert r.exit_code == 3 and "valid_to 2026-01-01T00:00:00.000Z is before" in r.stderr


def test_what_is_current_never_includes_a_replaced_memory(cli, seed, db_path) -> None:
    rules = ["Always run make lint before committing",
             "Always run make check before committing"]
    for text in rules:
        assert cli("add", text, "--type", "rule").exit_code == 0
    seed([{"text": "an expired fact about lint", "valid_to": "2026-01-01T00:00:00.000Z"}])
    assert cli("supersede", "1", "--by", "2").exit_code == 0
    context = cli("context").stdout
    assert rules[1] in context and rules[0] not in context
    hits = cli("search", "run make lint before committing", "--json").records
    assert [h["id"] for h in hits] == [2]
    # The prompt hook's recall without the pipeline: BM25 alone, current memories only.
    from hippo.layers.floor import Route
    from hippo.layers.recall import lexical

    h = Hippo.open(db_path, embedder="hash")
    try:
        found = lexical(h, "make lint committing expired fact", Route(project=h.project))
    finally:
        h.close()
    assert [r["id"] for r in found] == [2]
