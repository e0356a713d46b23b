"""`hippo context`: the rule floor within a budget, deterministic, with an honest token count."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hippo.embed import tokens
from hippo.errors import NoDatabase
from hippo.memory import brain
from hippo.store import connect

REPORT = re.compile(r"^hippo: (\d+) tokens printed; rules (\d+) \((\d+)/(\d+) tokens")


def floor_key(rec: dict) -> tuple:
    return (rec["author"] != "human", -rec["importance"], not rec["pinned"], rec["id"])


def test_acceptance_project_a(cli, rules_db: Path) -> None:
    r = cli("context", "--project", "A")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("## Rules (project: A)\n")
    bullets = r.stdout.splitlines()[1:]
    assert bullets and all(b.startswith("- Rule ") for b in bullets)
    # The reported count is exactly the count of what was printed, and within budget.
    (line,) = r.stderr.splitlines()
    m = REPORT.match(line)
    assert m, line
    assert int(m[1]) == tokens.count(r.stdout) == int(m[3]) <= 800
    # Byte-identical across runs.
    assert cli("context", "--project", "A").stdout == r.stdout

    every = cli("context", "--project", "A", "--json", "--budget", "100000").records
    *rules, summary = every
    assert {x["project"] for x in rules} == {"A", None}
    assert all(x["type"] == "rule" and x["status"] == "active" for x in rules)
    # Machine-written rules only once a person verified or pinned them (conftest: 21 wait).
    assert all(x["author"] == "human" or x["verified_at"] or x["pinned"] for x in rules)
    assert len(rules) == 51 + 15 and summary["omitted"] == 0
    assert summary["unverified"] == 16 + 5 == len(summary["unverified_ids"])
    assert [x["id"] for x in rules] == [x["id"] for x in sorted(rules, key=floor_key)]

    (*shown, summary) = cli("context", "--project", "A", "--json").records
    assert summary["event"] == "summary" and summary["budget"] == 800
    assert summary["tokens"] == int(m[1])
    assert summary["included"] == len(shown) == len(bullets) and len(shown) < len(rules)
    assert summary["included"] + summary["omitted"] == len(rules)
    assert [f"- {x['text']}" for x in shown] == bullets
    # Human-authored first: no human rule after a machine one, none left out for a machine one.
    authors = [x["author"] for x in shown]
    assert authors == sorted(authors, key=lambda a: a != "human")
    left = set(summary["omitted_ids"])
    assert {x["id"] for x in shown} | left == {x["id"] for x in rules}
    assert sum(x["tokens"] for x in shown) + tokens.count("## Rules (project: A)\n") \
        == summary["tokens"]


def test_greedy_packing_is_the_documented_one(cli, rules_db: Path) -> None:
    *rules, _ = cli("context", "-p", "B", "--json", "--budget", "100000").records
    budget = 333
    used, expect = tokens.count("## Rules (project: B)\n"), []
    for rec in rules:
        cost = tokens.count(f"- {rec['text']}\n")
        if used + cost <= budget:
            expect.append(rec["id"])
            used += cost
    *shown, summary = cli("context", "-p", "B", "--json", "--budget", str(budget)).records
    assert [x["id"] for x in shown] == expect
    assert summary["tokens"] == used <= budget


def test_real_process_byte_identical_and_counted(hippo_proc, rules_db: Path) -> None:
    runs = [hippo_proc(["context", "--project", "A"]) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout
    m = REPORT.match(runs[0].stderr)
    assert m and int(m[1]) == tokens.count(runs[0].stdout)


def test_global_only_all_projects_and_nothing(cli, rules_db: Path) -> None:
    r = cli("context", "-p", "nowhere", "--json", "--budget", "100000")
    *rules, _ = r.records
    assert {x["project"] for x in rules} == {None} and len(rules) == 15
    *rules, _ = cli("context", "--all-projects", "--json", "--budget", "100000").records
    assert {x["project"] for x in rules} == {"A", "B", "C", None} and len(rules) == 170
    r = cli("context", "-p", "A", "--budget", "0")
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr.startswith("hippo: 0 tokens printed; rules 0 (0/0 tokens, left out 66: #")


def test_superseded_rules_leave_the_floor(cli, db_path: Path) -> None:
    old, new = (cli("add", t, "-t", "rule").records[0]["id"] for t in ("Use black", "Use ruff"))
    db = connect(db_path)
    with db.transaction():
        brain.update(db, old, {"superseded_by": new}, actor="human", action="supersede")
    assert cli("context").stdout == "## Rules (project: testproj)\n- Use ruff\n"


def test_empty_database_prints_nothing(cli, db_path: Path) -> None:
    r = cli("context")  # no database yet: said on stderr, nothing created
    assert r.exit_code == 0 and r.stdout == ""
    if isinstance(db_path, Path):
        assert "no database at" in r.stderr and not db_path.exists()
    else:  # a server's empty schema: no table made
        assert "has no hippo store yet" in r.stderr
        with pytest.raises(NoDatabase):  # no table was made
            connect(db_path, mode="read")
    connect(db_path).close()
    r = cli("context")
    assert r.exit_code == 0 and r.stdout == ""
    *_, summary = cli("context", "--json").records
    assert summary == {"event": "summary", "tokens": 0, "budget": 800, "included": 0,
                       "omitted": 0, "omitted_ids": [], "unverified": 0, "unverified_ids": []}


def test_non_ascii_rules_are_counted_by_the_tokenizer(cli) -> None:
    for text in ("Écris les messages de commit en français, s'il te plaît",
                 "Never ship on Friday 🚫🚢", "测试 must pass before merging", "a\u200bb \x1c c"):
        assert cli("add", text, "-t", "rule").exit_code == 0
    r = cli("context")
    assert r.stdout.count("\n- ") == 4
    assert REPORT.match(r.stderr)[1] == str(tokens.count(r.stdout))


def test_route_appends_guidance_with_its_own_budget(cli, rules_db: Path) -> None:
    r = cli("context", "-p", "A", "--route")
    rules_only = cli("context", "-p", "A").stdout
    assert r.stdout.startswith(rules_only + "\n## Guidance (project: A)\n")
    assert "- Deploy with `make deploy` from a clean tree\n" in r.stdout
    assert "port 8080" not in r.stdout
    assert REPORT.match(r.stderr)[1] == str(tokens.count(r.stdout))
    *records, summary = cli("context", "-p", "A", "--topic", "deploys", "--json").records
    assert [x["layer"] for x in records].count("guidance") == 1
    assert summary["budget"] == 800 + 1500
    assert set(summary["layers"]) == {"rule_floor", "guidance"}
    assert summary["tokens"] == sum(v["tokens"] for v in summary["layers"].values())


def test_no_embedding_stack_is_imported(rules_db: Path) -> None:
    probe = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('LOADED ' + ' '.join("
             "m for m in ('numpy', 'onnxruntime', 'tokenizers', 'openai', 'rich') "
             "if m in sys.modules) + '\\n')); from hippo.cli.main import main; main()")
    out = subprocess.run([sys.executable, "-c", probe, "--db", str(rules_db), "context", "-p",
                          "A"], capture_output=True, text=True, check=True)
    assert out.stderr.splitlines()[-1].strip() == "LOADED", out.stderr
