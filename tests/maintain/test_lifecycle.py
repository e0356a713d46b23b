"""Corrections by a person: done, verify, edit, supersede — all audited as "human"."""

from __future__ import annotations

import numpy as np

from hippo.config import is_server
from hippo.embed.cache import from_blob
from hippo.store import connect

# What vector filters see of memory 1 (PostgreSQL: its row; vec0: its metadata columns).
VEC_META = "SELECT type, tier, project FROM memories_vec WHERE memory_id = 1"
PG_VEC_META = ("SELECT m.type, m.tier, coalesce(m.project, '') AS project FROM memories_vec v "
               "JOIN memories m ON m.id = v.memory_id WHERE v.memory_id = 1")
FTS_RELEASE = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'release'"
FTS_RELEASE_PG = "SELECT id FROM memories WHERE tsv @@ to_tsquery('hippo_text', 'release')"



def history(cli, mid: int) -> list[tuple[str, str]]:
    (rec,) = cli("show", str(mid), "--json").records
    return [(h["action"], h["actor"]) for h in rec["history"]]


def test_done_only_for_episodic_and_leaves_vectors(cli, seed, db_path, check) -> None:
    seed([{"text": "ship the release notes", "type": "task"}, {"text": "a fact"}])
    r = cli("done", "1", "--json")
    assert r.exit_code == 0 and r.records[0]["status"] == "done"
    assert history(cli, 1)[-1] == ("done", "human")
    r = cli("done", "2")
    assert r.exit_code == 2 and "is a fact; only observability, task, todo can be done" in r.stderr
    check(db_path)


def test_verify_restarts_freshness(cli, seed) -> None:
    seed([{"text": "the api lives at api.internal", "created_at": "2025-01-01T00:00:00Z"}])
    (rec,) = cli("verify", "1", "--json").records
    assert rec["confirmed_at"] is not None and rec["confirmed_at"] > "2026"
    assert rec["verified_at"] == rec["confirmed_at"]  # a person did: the floor may load it
    assert history(cli, 1)[-1] == ("verify", "human")
    assert cli("verify", "99").exit_code == 1


def test_edit_text_reembeds_and_makes_it_human(cli, seed, db_path, check) -> None:
    seed([{"text": "deploy with make ship", "type": "procedure", "tags": ["ops"]}])
    db = connect(db_path)
    old = from_blob(db.scalar("SELECT embedding FROM memories_vec WHERE memory_id = 1"))
    r = cli("edit", "1", "--text", "deploy with make release", "--tag", "Release",
            "--untag", "ops", "--importance", "0.9", "--json")
    assert r.exit_code == 0, r.stderr
    (rec,) = r.records
    assert rec["text"] == "deploy with make release" and rec["author"] == "human"
    assert rec["tags"] == ["release"] and rec["importance"] == 0.9
    new = from_blob(db.scalar("SELECT embedding FROM memories_vec WHERE memory_id = 1"))
    from hippo import embed

    expect = embed.get("hash").embed_batch(["deploy with make release"])[0]
    assert not np.allclose(old, new) and np.allclose(new, expect)
    assert db.scalar(FTS_RELEASE_PG if is_server(db_path) else FTS_RELEASE) == 1
    assert history(cli, 1)[-1] == ("edit", "human")
    check(db_path)


def test_edit_refuses_text_tag_or_project_that_is_not_utf8(cli, seed, db_path, check) -> None:
    """As `add` does: one line, exit 2, the memory untouched. The text used to reach the
    tokenizer and fail there ("unexpected TypeError", exit 1), from argv or stdin."""
    seed([{"text": "deploy with make ship", "type": "procedure"}])
    cases = [(["--text", "deploy\udcff"], None, "text"),
             (["--text", "-"], b"deploy with make \xff\n", "text"),
             (["--tag", "ops\udcff"], None, "tag"),
             (["--project", "web\udcff"], None, "project")]
    for args, stdin, name in cases:
        r = cli("edit", "1", *args, input=stdin)
        assert r.exit_code == 2 and r.stdout == "", r.stderr
        assert r.stderr.startswith(f"hippo: {name} is not valid UTF-8 (an undecodable byte at ")
        assert len(r.stderr.splitlines()) == 1
    (rec,) = cli("show", "1", "--json").records
    assert rec["text"] == "deploy with make ship" and rec["tags"] == []
    check(db_path)


def test_edit_type_moves_tier_with_it_and_project(cli, seed, db_path, check) -> None:
    seed([{"text": "node 20 is required"}])
    (rec,) = cli("edit", "1", "--type", "config", "--global", "--json").records
    assert rec["type"] == "config" and rec["tier"] == "procedural" and rec["project"] is None
    db = connect(db_path)
    assert db.row(PG_VEC_META if is_server(db_path) else VEC_META) == {
        "type": "config", "tier": "procedural", "project": ""}
    (rec,) = cli("edit", "1", "--tier", "semantic", "--project", "web", "--json").records
    assert rec["tier"] == "semantic" and rec["project"] == "web"
    assert cli("edit", "1", "--type", "nope").exit_code == 2
    assert cli("edit", "1", "--importance", "3").exit_code == 2
    check(db_path)


def test_supersede_and_clear(cli, seed) -> None:
    seed([{"text": "use node 18"}, {"text": "use node 20"}, {"text": "use node 22"}])
    (rec,) = cli("supersede", "1", "--by", "2", "--json").records
    assert rec["superseded_by"] == 2 and rec["status"] == "active"
    cli("supersede", "2", "--by", "3")
    r = cli("supersede", "3", "--by", "1")
    assert r.exit_code == 2 and "cycle" in r.stderr
    assert cli("supersede", "1", "--by", "1").exit_code == 2
    assert cli("supersede", "1").exit_code == 2
    (rec,) = cli("supersede", "1", "--clear", "--json").records
    assert rec["superseded_by"] is None
    assert [a for a, _ in history(cli, 1)] == ["add", "supersede", "unsupersede"]


def test_superseded_memories_are_not_merged(cli, seed) -> None:
    text = "the staging cluster is reachable through the bastion host in the eu region"
    seed([{"text": text}, {"text": text + " today"}, {"text": "something else entirely"}])
    cli("supersede", "1", "--by", "3")
    r = cli("consolidate")
    assert not [e for e in r.records if e["event"] == "merge"]


def test_superseded_leaves_default_search_and_shows_flagged(cli, seed) -> None:
    seed([{"text": "the ci runner image is ubuntu 22.04"},
          {"text": "the ci runner image is ubuntu 24.04"}])
    cli("supersede", "1", "--by", "2")
    ids = [r["id"] for r in cli("search", "ci runner image ubuntu", "--json").records]
    assert ids == [2]
    both = cli("search", "ci runner image ubuntu", "--include-superseded", "--json").records
    assert {r["id"]: r["superseded_by"] for r in both} == {1: 2, 2: None}
