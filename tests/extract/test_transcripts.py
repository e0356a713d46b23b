"""`rules` on the real transcripts in ../shared/data/transcripts, checked against a hand-read set.

Each file was read in full. Its people mostly ask questions and give one-off instructions
("show tools", "delete js", "start phoenix in background"); the durable statements are the
aider user's markdown conventions and config locations, and the Codex user's decision on
the context-compaction default. Tool output in these files is full of cue words (skill
files saying "you ABSOLUTELY MUST", aider's "filenames are always relative", TodoWrite's
"Ensure that you continue...") and must yield nothing.
"""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import orjson
import pytest

from hippo.extract import EchoChunk
from hippo.extract.blocks import messages, prose_lines, sentences, split_blocks
from hippo.extract.rules import scan
from hippo.store import connect
from tests.conftest import DATA
from tests.extract.conftest import memories

T = DATA / "transcripts"
pytestmark = pytest.mark.skipif(not T.exists(), reason="shared transcripts not present")

# file name -> {(type, text)}: hand-verified against the transcripts; each must be found (the
# statements around them are many more: their bound and their form are checked below).
EXPECTED: dict[str, set[tuple[str, str]]] = {
    "Monochromatic__.aider.chat.history.md": {
        ("config", r"The eslint config is at packages\config\eslint\src\index.ts."),
        ("config", r"The oxlint config is at packages\config\oxlint\index.jsonc."),
        ("config", r"The dprint config is at packages\config\dprint\index.json."),
        ("rule", "Be sure to be concise in the changes you make."),
        ("rule", ("Make sure each sentence or long phrase in a sentence is on a new line in "
                  "markdown.")),
        ("rule", "Ensure each sentence or long phrase is on its own line."),
        ("rule", ("For numbered lists, pad the `1.` marker with enough space after it so it "
                  "is always 4 characters long.")),
    },
    "codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": {
        ("decision", "Let's update the defailt context compart to 90 in env var"),
        ("fact", ("OpenCode documents context compaction under the `compaction` config object, "
                  "so this keeps the change in the env-injected config path.")),
    },
    "codemie-code__-tmp-private__4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl": set(),
    "codemie-code__-tmp-private__agent-36541525.jsonl": set(),
    "spotter__short.jsonl": set(),
}
# Never a statement: narration of intent, a question, a request of the session.
NOT_STATEMENTS = re.compile(r"^(?:let me|i'll|now let me|can you|could you)\b|\?$", re.IGNORECASE)


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    from typer.testing import CliRunner

    from hippo.cli.app import app

    tmp = tmp_path_factory.mktemp("real")
    src = tmp / "t"
    # The long compacted sessions have tests of their own (test_sessions.py).
    shutil.copytree(T, src, ignore=shutil.ignore_patterns("claude-code-sessions"))
    db = tmp / "hippo.db"
    runner = CliRunner()
    env = {"HIPPO_HOME": str(tmp / "home"), "HIPPO_NO_PROGRESS": "1"}
    res = runner.invoke(app, ["--db", str(db), "--embedder", "hash", "ingest", str(src),
                              "--idle-minutes", "0"], env=env)
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(app, ["--db", str(db), "--embedder", "hash", "extract"], env=env)
    assert res.exit_code == 0, res.stderr
    return db, [orjson.loads(line) for line in res.stdout.splitlines()]


def test_each_file_yields_the_hand_verified_memories(extracted) -> None:
    db, events = extracted
    per_file: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for mem in memories(db):
        assert mem["author"] == "machine" and mem["source"]["extractor"] == "rules"
        per_file[Path(mem["source"]["file"]).name].add((mem["type"], mem["text"]))
    for name in sorted(EXPECTED):
        print(f"{name}: {len(per_file.get(name, ()))}")
        for mtype, text in sorted(per_file.get(name, ())):
            print(f"    {mtype:9} {text}")
    for name, expected in EXPECTED.items():
        assert expected <= per_file.get(name, set()), name
        if not expected:  # no statement to learn there: greetings, tool runs, one-off asks
            assert len(per_file.get(name, ())) <= 2, name
    for name, found in per_file.items():
        assert len(found) <= 50, name  # the precision budget, per file
        assert not [t for _, t in found if NOT_STATEMENTS.search(t)], name
    summary = events[-1]
    assert summary["event"] == "summary" and summary["added"] == sum(map(len, per_file.values()))
    sessions = connect(db).scalar("SELECT count(DISTINCT session_id) FROM echo_chunks")
    assert summary["sessions"] == sessions and summary["sessions_skipped"] == 0


def test_provenance_points_at_the_turn_that_said_it(extracted) -> None:
    """Every memory cites the chunks it came from, and every word of it is in what a person
    or the agent said there (a tool's output is never a source, but for the one line of a
    state or a commit that git or a test run printed), apart from the framing words of a
    rewritten config fact and of a fix."""
    db, _ = extracted
    conn = connect(db)
    for mem in memories(db):
        rows = conn.rows("SELECT c.text, c.source_path, c.line_start, c.line_end FROM "
                         "memory_sources s JOIN echo_chunks c ON c.id = s.chunk_id "
                         "WHERE s.memory_id = ?", (mem["id"],))
        assert {r["source_path"] for r in rows} == {mem["source"]["file"]}
        assert [min(r["line_start"] for r in rows), max(r["line_end"] for r in rows)] == \
            mem["source"]["lines"]
        said = " ".join(text for r in rows for role, text in split_blocks(r["text"])
                        if role in ("user", "assistant") or (role == "tool" and (
                            "state" in mem["tags"] or mem["text"].startswith("Committed "))))
        words = set(re.findall(r"\w+", mem["text"].lower()))
        missing = words - set(re.findall(r"\w+", said.lower())) - {"the", "is", "at", "config",
                                                                  "committed", "on", "of",
                                                                  "fixed", "in"}
        assert not missing, (mem["text"], missing)


def test_tool_output_and_injected_text_yield_none(extracted) -> None:
    """The cue patterns DO fire on these files' tool output; the extractor ignores it all."""
    db, _ = extracted
    conn = connect(db)
    rows = conn.rows("SELECT * FROM echo_chunks ORDER BY session_id, seq")
    chunks = [EchoChunk(r["id"], r["seq"], r["source_path"], tuple(r["roles"].split(",")),
                        r["line_start"], r["line_end"], tuple(orjson.loads(r["message_ids"])),
                        r["started_at"], r["text"]) for r in rows]
    not_prose = [m for m in messages(chunks) if not m.is_prose]
    fired = [hit[1] for m in not_prose for line in prose_lines(m.text)
             for s in sentences(line) if (hit := scan(s, "user"))]
    assert len(fired) >= 10  # e.g. "Ensure that you continue to use the todo list ..."
    stored = {m["text"] for m in memories(db)}
    assert not stored & set(fired)
    assert not any("todo list" in t or "in-chat filenames" in t for t in stored)
