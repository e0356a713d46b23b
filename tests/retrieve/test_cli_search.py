"""`hippo search` on the command line: hostile queries, output formats, degradations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from hippo.embed import tokens
from hippo.memory.records import FIELDS
from tests.conftest import BACKEND

CLI = Callable[..., Any]

STORED = {
    "ERR_SSL_PROTOCOL_ERROR": "The kiosk browser logs ERR_SSL_PROTOCOL_ERROR after the cert swap",
    "src/app.py": "The entry point is src/app.py and it reads settings from the env",
    "--no-verify": "Never commit with --no-verify; the hooks run ruff and mypy",
    "--force-with-lease": "Push rebased branches with --force-with-lease only",
    "E1234": "Lint code E1234 means an unused import",
    "key:value": "Labels are written as key:value pairs in the manifest",
    r"C:\Users\build\cache": r"Windows runners keep the cache in C:\Users\build\cache",
    "user@example.com": "Alerts go to user@example.com during the freeze",
    "v2.3.1-rc.1": "The release candidate v2.3.1-rc.1 fixed the login loop",
    "O'Brien": "O'Brien owns the billing service",
}

HOSTILE = [
    *STORED,  # 10 queries naming a stored identifier
    '"unbalanced quote',
    '""""',
    "'single quoted words'",
    "deploy AND staging OR prod NOT friday",
    "NEAR(deploy staging, 2)",
    "text:secret tags:ops",
    "*",
    "^start -minus +plus",
    "((( )))",
    "🚀🔥 deploy 👀",
    "SELECT * FROM memories; DROP TABLE memories; --",
    "%s %d {0} ${HOME} $(rm -rf /)",
    "tab\tand\nnewline\r\n",
    "e\u0301 \u202eright-to-left\u202c",
    "",
    "   ",
    "deploy " * 1500,  # 10.5 KB
]


@pytest.fixture
def corpus(cli: CLI) -> None:
    lines = "\n".join(orjson.dumps({"text": t}).decode() for t in STORED.values())
    lines += "\n" + orjson.dumps({"text": "We deploy to staging every Friday",
                                  "type": "decision"}).decode()
    r = cli("add", "-", input=lines)
    assert r.exit_code == 0, r.stderr


def test_hostile_queries_exit_zero_and_identifiers_are_found(cli: CLI, corpus: None) -> None:
    assert len(HOSTILE) == 27
    for query in HOSTILE:
        r = cli("search", "--json", "--", query)
        assert r.exit_code == 0, (query, r.stderr)
        records = r.records  # every stdout line is JSON
        if query in STORED:
            assert records[0]["text"] == STORED[query], query
            assert records[0]["degraded"] == []
        if not query.strip():
            assert r.stdout == "" and r.stderr == ""


def test_json_lines_carry_the_spec_record_score_and_degraded(cli: CLI, corpus: None) -> None:
    r = cli("search", "deploy staging", "--limit", "3")
    assert r.exit_code == 0 and r.stderr == ""
    assert len(r.records) == 3
    first = r.records[0]
    assert list(first) == [*FIELDS, "score", "degraded"]
    assert first["text"] == "We deploy to staging every Friday"
    scores = [x["score"] for x in r.records]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] <= scores[0] <= 1
    explained = cli("search", "deploy staging", "-n", "1", "--explain").records[0]
    assert set(explained["explain"]) == {"bm25", "vector", "fused", "hint", "relevance", "mmr",
                                         "freshness", "importance", "rerank", "final",
                                         "match"}
    # No late interaction with this embedder: no match factor, the score is the final one.
    assert explained["explain"]["match"] is None
    assert explained["score"] == explained["explain"]["final"]


def test_stdin_query_and_filters(cli: CLI, corpus: None) -> None:
    r = cli("search", "-", input="lint code E1234\n")
    assert r.records[0]["text"] == STORED["E1234"]
    r = cli("search", "deploy", "--type", "decision")
    assert [x["type"] for x in r.records] == ["decision"]
    r = cli("search", "deploy", "--type", "rule")
    assert r.exit_code == 0 and r.stdout == "" and r.stderr == ""  # no results: silence
    r = cli("search", "deploy", "--since", "1d", "--until", "2999-01-01", "--tier", "semantic")
    assert r.records and all(x["tier"] == "semantic" for x in r.records)


def test_project_scope_flags(cli: CLI) -> None:
    cli("add", "Blue team deploys with Argo", "--project", "blue")
    cli("add", "Red team deploys with Flux", "--project", "red")
    cli("add", "Everyone deploys through CI", "--global")
    texts = lambda r: {x["text"] for x in r.records}
    assert texts(cli("search", "deploys", "--project", "blue")) == {
        "Blue team deploys with Argo", "Everyone deploys through CI"}
    assert len(cli("search", "deploys", "--all-projects").records) == 3
    assert texts(cli("--project", "red", "search", "deploys")) == {
        "Red team deploys with Flux", "Everyone deploys through CI"}


def test_nothing_in_scope_says_where_the_memories_are(cli: CLI) -> None:
    """Searching from another project's directory finds nothing: stdout stays empty (exit
    0) and stderr says how many memories other projects hold and how to reach them."""
    cli("add", "Blue team deploys with Argo", "--project", "blue")
    cli("add", "Red team deploys with Flux", "--project", "red")
    cli("add", "An old idea", "--project", "red")
    cli("forget", "3")  # not active: not counted
    r = cli("search", "deploys", "--json")  # HIPPO_PROJECT=testproj
    assert (r.exit_code, r.stdout) == (0, "")
    assert r.stderr == ("hippo: no match in project 'testproj' or global memories; 2 active "
                        "memories are in other projects (--all-projects searches every "
                        "project, -p NAME another one)\n")
    r = cli("search", "deploys", "--project", "blue", "--json")
    assert [x["text"] for x in r.records] == ["Blue team deploys with Argo"] and r.stderr == ""
    r = cli("search", "deploys", "--all-projects", "--type", "rule", "--json")
    assert (r.stdout, r.stderr) == ("", "")  # every project was searched: nothing to add
    r = cli("search", "deploys", "--project", "red", "--type", "rule", "--json")
    assert r.stderr == ("hippo: no match in project 'red' or global memories; 1 active "
                        "memory is in other projects (--all-projects searches every "
                        "project, -p NAME another one)\n")


def test_markdown_within_budget(cli: CLI, corpus: None) -> None:
    r = cli("search", "deploy staging release", "--format", "markdown", "-n", "10")
    assert r.exit_code == 0
    assert r.stdout.startswith("## Relevant memories\n- We deploy to staging every Friday "
                               "(decision, testproj, ")
    assert sum(line.startswith("- ") for line in r.stdout.splitlines()) == 10
    small = cli("search", "deploy staging release", "-f", "markdown", "-b", "40", "-n", "10")
    assert tokens.count(small.stdout) <= 40
    assert sum(line.startswith("- ") for line in small.stdout.splitlines()) == 1
    assert "tokens printed" in small.stderr and "left out" in small.stderr
    # A budget just below the best result's full bullet: its text is cut to fit.
    from hippo.retrieve.render import HEADING, line

    query = "kiosk browser cert swap"
    (best,) = cli("search", query, "-n", "1").records
    budget = tokens.count(HEADING + line(best)) - 3
    cut = cli("search", query, "-f", "markdown", "-b", str(budget))
    assert tokens.count(cut.stdout) <= budget
    assert "…" in cut.stdout and cut.stdout.rstrip().endswith(f"#{best['id']})")
    assert "cut to fit" in cut.stderr
    nothing = cli("search", query, "-f", "markdown", "-b", "3")
    assert nothing.exit_code == 0 and nothing.stdout == "" and "left out" in nothing.stderr
    as_json = cli("search", "deploy", "-f", "markdown", "--json")
    assert as_json.records  # --json wins over --format markdown


def test_table_format(cli: CLI, corpus: None) -> None:
    r = cli("search", "deploy staging", "--format", "table", "--explain", "-n", "2",
            env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert "bm25" in r.stdout and "We deploy to staging" in r.stdout
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(r.stdout.splitlines()[0])


def test_degradation_is_on_stderr_and_in_every_result(cli: CLI, corpus: None,
                                                      db_path: Path) -> None:
    from hippo.store import connect

    # The full-text index taken away: FTS5's table, or Postgres's generated column.
    connect(db_path).execute({"sqlite": "DROP TABLE memories_fts",
                              "postgres": "ALTER TABLE memories DROP COLUMN tsv"}[BACKEND])
    r = cli("search", "deploy staging")
    assert r.exit_code == 0
    (line,) = r.stderr.splitlines()
    assert line.startswith("hippo: degraded: fts: full-text index unavailable")
    assert all(x["degraded"] == [line.removeprefix("hippo: degraded: ")] for x in r.records)


def test_usage_and_config_errors(cli: CLI, corpus: None, tmp_path: Path) -> None:
    r = cli("search", "x", "--format", "yaml")
    assert r.exit_code == 2 and "unknown format 'yaml'" in r.stderr
    r = cli("search", "x", "--type", "memo")
    assert r.exit_code == 2 and "unknown type 'memo'" in r.stderr
    cfg = tmp_path / "config.toml"
    cfg.write_text("[search]\nmmr_lambda = 2\n")
    r = cli("search", "x", env={"HIPPO_CONFIG": str(cfg)})
    assert r.exit_code == 78 and "mmr_lambda" in r.stderr and r.stdout == ""


@pytest.mark.parametrize("command", ["search", "echo"])
def test_a_byte_that_is_not_utf8_in_the_query_is_read_as_a_space(cli: CLI, tmp_path: Path,
                                                                command: str) -> None:
    """Python reads such a byte (argv, or stdin with `-`) as a lone surrogate, which the
    tokenizer refuses: the model's side of the search used to drop out. Now the byte is
    a space, the model and BM25 read the rest, and the change is reported once."""
    text = "Hooks are resolved at runtime from the plugin registry"
    if command == "search":
        assert cli("add", text, embedder="local").exit_code == 0
    else:
        session = tmp_path / "s.jsonl"
        session.write_text(orjson.dumps({"role": "user", "content": text}).decode() + "\n")
        assert cli("ingest", str(session), "--idle-minutes", "0",
                   embedder="local").exit_code == 0
    for args, stdin in (([command, "--json", "hooks\udcff resolved"], None),
                        ([command, "--json", "-"], b"hooks\xff resolved\n")):
        r = cli(*args, input=stdin, embedder="local")
        assert r.exit_code == 0, r.stderr
        assert r.stderr.splitlines() == [
            "hippo: degraded: query: 1 byte not valid UTF-8, read as space"], r.stderr
        assert text in r.records[0]["text"]
        assert r.records[0]["degraded"] == ["query: 1 byte not valid UTF-8, read as space"]


def test_min_score_keeps_only_results_that_match(cli: CLI) -> None:
    """With the local model a search's scores compare across queries, so one threshold
    serves every query: a question about nothing stored keeps nothing (and says so on
    stderr), a real one keeps its match."""
    for text in ("Never force-push to main; use --force-with-lease on feature branches",
                 "Staging deploys run from the deploy/ directory with make stage",
                 "We chose apsw over sqlite3 because stdlib cannot load extensions"):
        assert cli("add", text, embedder="local").exit_code == 0
    everything = cli("search", "--json", "best pizza in naples", embedder="local")
    assert len(everything.records) == 3 and {r["score"] for r in everything.records} == {0.0}
    r = cli("search", "--json", "--min-score", "0.3", "best pizza in naples", embedder="local")
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr == "hippo: no result scored 0.3 or more (best 0.00)\n"
    r = cli("search", "--json", "--min-score", "0.3", "can I force-push to main?",
            embedder="local")
    assert r.exit_code == 0, r.stderr
    assert [x["text"][:24] for x in r.records] == ["Never force-push to main"]
    assert all(x["score"] >= 0.3 for x in r.records)
    assert cli("search", "q", "--min-score", "1.5").exit_code == 2
