"""Jobs at a terminal and in a pipe: readable lines and a summary for a person, JSON lines
for scripts (also with --json), the progress bar kept apart, Ctrl-C that says what it kept,
deferred files with their reason, `-` as stdin, --json accepted by every command."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson
import pytest

from hippo.docgen.tree import tree
from tests.cli.terminal import at_terminal

UUID = "7a1e0000-0000-4000-8000-00000000000{}"


def _claude(path: Path, n: int, turns: int = 4) -> Path:
    lines = [{"type": "user" if i % 2 == 0 else "assistant", "sessionId": UUID.format(n),
              "uuid": f"m{n}-{i}", "cwd": str(path.parent),
              "timestamp": f"2026-11-30T10:{i:02d}:00Z",
              "message": {"role": "user" if i % 2 == 0 else "assistant",
                          "content": f"session {n} turn {i}: we decided to keep the cache "
                                     f"warm for service number {n}"}}
             for i in range(turns)]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    old = 1_700_000_000  # long idle
    os.utime(path, (old, old))
    return path


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "HIPPO_EMBEDDER": "hash", **extra}


def test_every_command_accepts_json() -> None:
    missing = [c.name for c in tree().walk()
               if not c.subcommands and not any("--json" in o.opts for o in c.options)]
    assert missing == []


@pytest.mark.parametrize("args", [("extract",), ("consolidate",), ("retire",),
                                  ("export",), ("project", "list")])
def test_json_is_the_piped_form(cli, args: tuple[str, ...]) -> None:
    assert cli("add", "a memory to have something").exit_code == 0
    piped, flagged = cli(*args), cli(*args, "--json")
    assert flagged.exit_code == piped.exit_code == 0, flagged.stderr
    def shape(out: str) -> list[tuple[str, list[str]]]:  # a second run differs in values
        return [(e.get("event", ""), sorted(e)) for e in map(orjson.loads, out.splitlines())]

    assert shape(flagged.stdout) == shape(piped.stdout) and flagged.stdout


def test_cron_json_is_one_object_per_entry(cli) -> None:
    text = cli("cron", "--print").stdout  # piped: crontab's own format, for `| crontab -`
    entries = [x for x in text.splitlines() if x.strip() and not x.startswith("#")]
    assert [e["line"] for e in cli("cron", "--print", "--json").records] == entries


def test_ingest_at_a_terminal_reads_as_sentences_and_json_when_asked(
        tmp_path: Path, db_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    for n in range(3):
        _claude(folder / f"s{n}.jsonl", n)
    s = at_terminal(["--db", str(db_path), "ingest", str(folder)], 100, _env())
    assert s.rc == 0, s.text
    assert "{" not in s.text  # no JSON at a terminal
    assert len(re.findall(r"^ingested\s+\S+s\d\.jsonl: 4 messages -> \d+ chunks?$", s.text,
                          re.MULTILINE)) == 3, s.text
    assert re.search(r"^ingest run ingest-\S+: 3 files: 3 read, 0 unchanged, 0 deferred, "
                     r"0 skipped; 12 messages -> \d+ chunks in Echo$", s.text, re.MULTILINE)
    again = at_terminal(["--db", str(db_path), "ingest", str(folder), "--json"], 100, _env())
    events = [orjson.loads(x) for x in again.text.splitlines() if x.strip()]
    assert [e["event"] for e in events] == ["summary"] and events[0]["unchanged"] == 3


def test_the_progress_bar_never_shares_a_line_with_an_event(tmp_path: Path,
                                                           db_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    for n in range(3):
        _claude(folder / f"s{n}.jsonl", n, turns=40)
    env = _env()
    env.pop("HIPPO_NO_PROGRESS", None)  # a person watching: the bar is drawn
    s = at_terminal(["--db", str(db_path), "ingest", str(folder), "--json"], 120, env)
    assert s.rc == 0, s.text
    assert "ingest" in s.text and "kB" in s.text  # the bar was drawn (by bytes)...
    rows = [r for r in s.screen if r]
    # ...and what stays on the screen is the JSON lines, each whole on its own row (the bar
    # erased its line before each one and, transient, at the end).
    assert all(r.startswith('{"event"') for r in rows), rows
    events = [orjson.loads(r) for r in rows]
    assert [e["event"] for e in events] == ["file"] * 3 + ["summary"]


def test_ctrl_c_keeps_the_files_read_and_says_a_rerun_resumes(tmp_path: Path,
                                                             db_path: Path, cli) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    for n in range(4):
        _claude(folder / f"s{n}.jsonl", n)
    # A Ctrl-C (SIGINT) arrives inside the third file's transaction, before its commit.
    s = at_terminal(["--db", str(db_path), "ingest", str(folder)], 120,
                    _env(HIPPO_FAILPOINT="ingest.txn:3:INT"))
    assert s.rc == 130, s.text
    last = s.text.strip().splitlines()[-1]
    assert last == ("hippo: interrupted: kept 2 of 4 files read (2 chunks); the file in "
                    "progress was not stored. Run `hippo ingest` again to resume where this "
                    "run stopped")
    assert "Traceback" not in s.text
    sessions = {r["session"] for r in cli("export", "--store", "echo").records}
    assert sessions == {UUID.format(0), UUID.format(1)}
    rerun = cli("ingest", str(folder))
    assert rerun.exit_code == 0
    assert rerun.records[-1]["ingested"] == 2 and rerun.records[-1]["unchanged"] == 2
    chunks = cli("export", "--store", "echo").records
    assert len(chunks) == len({c["text"] for c in chunks}) == 4  # nothing twice


def test_a_deferred_file_says_why_and_when(cli, tmp_path: Path) -> None:
    live = _claude(tmp_path / "live.jsonl", 1)
    os.utime(live)  # written just now
    r = cli("ingest", str(live), "--idle-minutes", "30")
    assert r.exit_code == 0, r.stderr
    ev = r.records[0]
    assert ev["status"] == "deferred"
    assert re.fullmatch(r"written \d+ s ago, read once idle 30 min \(by a run after "
                        r"\d\d:\d\d UTC\)", ev["reason"]), ev["reason"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ev["read_after"])
    assert r.records[-1]["skipped"] == {}  # deferred is not skipped


def test_ingest_dash_reads_stdin_once(cli, tmp_path: Path) -> None:
    data = _claude(tmp_path / "piped.jsonl", 5).read_bytes()
    first = cli("ingest", "--format", "claude-code", "-", input=data)
    assert first.exit_code == 0, first.stderr
    assert first.records[0]["status"] == "ingested" and first.records[0]["messages"] == 4
    assert first.records[0]["session"] == UUID.format(5)
    again = cli("ingest", "-", input=data)  # the same transcript piped again: not stored twice
    assert again.exit_code == 0 and again.records[-1]["unchanged"] == 1
    assert len(cli("export", "--store", "echo").records) == len(
        [c for c in cli("export", "--store", "echo").records if c["session"] == UUID.format(5)])
    assert not list(tmp_path.rglob("stdin-*"))  # the spooled copy is gone
    empty = cli("ingest", "-", input=b"")
    assert empty.exit_code == 2 and empty.stderr.startswith("hippo: nothing on stdin")
    mixed = cli("ingest", "-", str(tmp_path), input=data)
    assert mixed.exit_code == 2 and "give it alone" in mixed.stderr


def test_ingest_format_completes_the_reader_names() -> None:
    from hippo.ingest.readers import READERS

    bash = (Path(__file__).resolve().parents[2] / "completions" / "hippo.bash").read_text()
    line = next(x for x in bash.splitlines() if x.strip().startswith('"ingest --format")'))
    assert set(line.split('"words:')[1].split('"')[0].split()) == set(READERS)


def test_consolidate_and_retire_at_a_terminal_print_a_summary(cli, db_path: Path) -> None:
    text = "the staging cluster is reachable through the bastion host in the eu region"
    seed = "".join(orjson.dumps({"text": t, "author": "machine"}).decode() + "\n"
                   for t in (text, text + " today"))
    assert cli("add", "-", input=seed).exit_code == 0
    s = at_terminal(["--db", str(db_path), "consolidate"], 80, _env())
    assert s.rc == 0, s.text
    assert "{" not in s.text
    assert re.search(r"^merged\s+#\d into #\d \(fact\): the staging", s.text, re.MULTILINE)
    assert re.search(r"^consolidate run consolidate-\S+: 2 memories checked \(\w+\), 1 merged",
                     s.text, re.MULTILINE)
    r = at_terminal(["--db", str(db_path), "retire", "--dry-run"], 80, _env())
    assert r.rc == 0 and re.search(r"^retire \(dry run\) : 0 memories retired", r.text,
                                   re.MULTILINE), r.text
