"""`hippo guidance`: procedural memories of a route, never rules, topics match any tag."""

from __future__ import annotations

import orjson

from hippo.embed import tokens

MEMORIES = [
    {"text": "Deploy: make deploy from a clean main", "type": "procedure", "project": "A",
     "tags": ["deploys"], "importance": 0.9},
    {"text": "Run migrations with alembic upgrade head", "type": "procedure", "project": "A",
     "tags": ["migrations"]},
    {"text": "Use uv for virtualenvs", "type": "tool", "project": None},
    {"text": "CI config lives in .ci/run", "type": "config", "project": "A", "author": "machine",
     "importance": 1.0},
    {"text": "Fact promoted to procedural tier", "type": "fact", "tier": "procedural",
     "project": "A"},
    {"text": "Procedure of project B", "type": "procedure", "project": "B", "tags": ["deploys"]},
    {"text": "A rule stays in the floor", "type": "rule", "project": "A"},
    {"text": "A plain fact", "type": "fact", "project": "A"},
    {"text": "Retired procedure", "type": "procedure", "project": "A", "status": "retired"},
]


def load(cli) -> dict[str, int]:
    r = cli("add", "-", input="\n".join(orjson.dumps(m).decode() for m in MEMORIES))
    assert r.exit_code == 0, r.stderr
    return {x["text"]: x["id"] for x in r.records}


def test_route_project(cli) -> None:
    ids = load(cli)
    *recs, summary = cli("guidance", "-p", "A", "--json").records
    assert [x["text"] for x in recs] == [
        "Deploy: make deploy from a clean main",  # human, 0.9
        "Run migrations with alembic upgrade head",  # human, 0.5, lower id first
        "Use uv for virtualenvs",
        "Fact promoted to procedural tier",
        "CI config lives in .ci/run",  # machine last despite importance 1.0
    ]
    assert {x["layer"] for x in recs} == {"guidance"}
    assert summary["included"] == 5 and summary["omitted_ids"] == []
    r = cli("guidance", "-p", "A")
    assert r.stdout.startswith("## Guidance (project: A)\n- Deploy: make deploy")
    assert r.stderr.startswith(f"hippo: {tokens.count(r.stdout)} tokens printed; guidance 5 (")
    assert ids  # (ids exist; the order above is by author, importance, then id)


def test_topics_match_any_tag(cli) -> None:
    load(cli)
    *recs, _ = cli("guidance", "-p", "A", "--topic", "deploys", "--topic", "MIGRATIONS",
                   "--json").records
    assert [x["text"] for x in recs] == ["Deploy: make deploy from a clean main",
                                         "Run migrations with alembic upgrade head"]
    r = cli("guidance", "-p", "A", "--topic", "deploys")
    assert r.stdout.startswith("## Guidance (project: A; topics: deploys)\n")
    *recs, _ = cli("guidance", "--all-projects", "--topic", "deploys", "--json").records
    assert {x["project"] for x in recs} == {"A", "B"}


def test_budget_and_nothing(cli) -> None:
    load(cli)
    *recs, summary = cli("guidance", "-p", "A", "--budget", "20", "--json").records
    assert summary["tokens"] <= 20 and summary["omitted"] == 5 - len(recs) > 0
    r = cli("guidance", "-p", "nowhere", "--topic", "nothing-tagged")
    assert r.exit_code == 0 and r.stdout == ""
