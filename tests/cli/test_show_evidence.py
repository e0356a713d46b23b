"""`hippo show ID` shows the lines of the source chunk a memory was learnt from, not the
chunk's first lines (often a tool's start-up banner)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from hippo.cli.show import evidence
from tests.cli.terminal import at_terminal

BANNER = ("Aider v0.82.2 Main model: anthropic/claude-sonnet with diff edit format, "
          "Weak model: anthropic/claude-haiku Git repo: .git with 312 files Repo-map: "
          "using 4096 tokens, auto refresh")
DECISION = "We decided to run the migrations with alembic upgrade head before each deploy."


def test_evidence_is_the_run_of_lines_holding_the_memorys_words() -> None:
    chunk = "\n".join([BANNER, "user: can you check the queue settings?",
                       f"user: {DECISION}", "assistant: Noted, I will keep that in mind.",
                       "assistant: The queue uses redis streams."])
    assert evidence(chunk, DECISION) == [f"user: {DECISION}"]
    two = "Deploys go through make stage; the staging cluster lives in eu-west-1"
    chunk2 = ("tool: ok\nuser: deploys go through make stage\n"
              "user: and the staging cluster lives in eu-west-1\ntool: done")
    assert evidence(chunk2, two) == ["user: deploys go through make stage",
                                     "user: and the staging cluster lives in eu-west-1"]
    assert evidence("tool: nothing alike here", "zebra crossing") == ["tool: nothing alike here"]
    assert evidence("", "x") == []


def test_a_long_line_is_cut_to_the_sentences_that_match() -> None:
    line = ("assistant: " + "The build is green on every platform. " * 8 + DECISION + " "
            + "Unrelated closing remarks follow here. " * 8)
    got = evidence(line, DECISION)
    assert got == [DECISION]


def test_show_prints_the_evidence_lines_not_the_banner(cli, tmp_path: Path,
                                                        db_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    turns = [("user", BANNER), ("assistant", "Ready. What should we work on?"),
             ("user", DECISION), ("assistant", "Understood; I will run them before deploys.")]
    lines = [{"type": role, "sessionId": "5h0w0000-0000-4000-8000-000000000001",
              "uuid": f"m{i}", "cwd": str(tmp_path), "timestamp": f"2026-11-30T10:0{i}:00Z",
              "message": {"role": role, "content": text}} for i, (role, text) in enumerate(turns)]
    session.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    assert cli("ingest", str(session), "--idle-minutes", "0").exit_code == 0
    extracted = [e for e in cli("extract").records if e["event"] == "memory"]
    mem = next(e for e in extracted if "alembic" in e["text"])
    shown = cli("show", str(mem["id"])).records[0]
    src = shown["provenance"][0]
    assert src["text"].startswith("user: Aider v0.82.2")  # the chunk starts with the banner
    assert src["evidence"] == [f"user: {DECISION}"]
    s = at_terminal(["--db", str(db_path), "show", str(mem["id"]), "--no-history"], 100,
                    {**os.environ, "HIPPO_EMBEDDER": "hash"})
    assert s.rc == 0, s.text
    assert f"> user: {DECISION}" in " ".join(s.text.split())
    assert "Aider v0.82.2 Main model" not in s.text.split("source chunk")[1]
