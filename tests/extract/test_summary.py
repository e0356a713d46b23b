"""Compaction summaries and session structure as sources of the `rules` extractor.

Hand-made excerpts in each format (a Claude Code summary line, its acompact agent file, a
Codex `compacted` item, renamed and missing sections, a session compacted twice, a summary
in another language), and conversation excerpts in Python and JavaScript for the gate and
error -> fix rules. Nothing breaks and nothing is invented: every word of every memory is
in the chunks it cites.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest

from hippo.extract import EchoChunk, SessionChunks
from hippo.extract.rules import RulesExtractor
from hippo.extract.summary import parse
from hippo.ingest.chunk import chunk_messages
from hippo.ingest.model import Message
from tests.extract.conftest import memories

CLAUDE_SUMMARY = """Analysis:
Let me chronologically analyze the conversation:
1. The user asked for a resumable importer.
   - Claimed with `tk start 12`

Summary:
1. Primary Request and Intent:
   The user asked to make the importer resumable after a crash.

2. Key Technical Concepts:
   - **Watermarks** - how far each file was read, stored per path
   - **Advisory locks** - one writer per job, so two cron runs never overlap
   - Python packaging

3. Files and Code Sections:
   - **`src/importer/resume.py`** (NEW)
     - Resumes reading at the stored byte offset
     - Current full content:
     ```python
     def resume(path):
         return offset(path)
     ```
   - **`tests/test_resume.py`** (NEW - 4 tests)
     - All 4 tests pass

4. Errors and fixes:
   - **Offset past EOF after the file was truncated**: reset the watermark when the file shrank.
   - **`sqlite3.OperationalError: database is locked`** under two writers:
     - Fixed by opening with `timeout=30` and one transaction per file

5. Problem Solving:
   - Chose byte offsets over line counts because lines can be rewritten in place.

6. All user messages:
   - "make the importer resumable, it keeps starting over"

7. Pending Tasks:
   - Document the `--resume` flag in the README
   - Add a test for a file that grows while it is read

8. Current Work:
   Writing the README section.

9. Optional Next Step:
   Document the `--resume` flag in the README.
"""


def chunks_of(*messages: Message, max_tokens: int = 400) -> list[EchoChunk]:
    out = []
    for i, c in enumerate(chunk_messages(list(messages), max_tokens=max_tokens), start=1):
        out.append(EchoChunk(i, i - 1, "/t/s.jsonl", tuple(c.roles), c.line_start, c.line_end,
                             tuple(c.message_ids), c.started_at, c.text))
    return out


def session(*messages: Message, key: str = "s1", max_tokens: int = 400) -> SessionChunks:
    return SessionChunks(1, key, "alpha", "claude-code", None,
                         chunks_of(*messages, max_tokens=max_tokens))


def summary_msg(text: str, line: int = 10) -> Message:
    return Message("system", text, "summary", None, line, line, f"u{line}")


def extracted(s: SessionChunks) -> dict[str, str]:
    return {c.text: c.type for c in RulesExtractor().extract(s)}


def test_a_claude_code_summary_yields_one_statement_per_item() -> None:
    found = extracted(session(summary_msg(CLAUDE_SUMMARY)))
    assert found == {
        "Watermarks - how far each file was read, stored per path": "fact",
        "Advisory locks - one writer per job, so two cron runs never overlap": "fact",
        "`src/importer/resume.py`: Resumes reading at the stored byte offset": "fact",
        ("Offset past EOF after the file was truncated: reset the watermark when the file "
         "shrank."): "insight",
        ("`sqlite3.OperationalError: database is locked` under two writers: Fixed by opening "
         "with `timeout=30` and one transaction per file"): "insight",
        ("Chose byte offsets over line counts because lines can be rewritten in place."):
            "insight",
        "Document the `--resume` flag in the README": "task",
        "Add a test for a file that grows while it is read": "task",
    }  # the next step repeats a pending task: one memory


def test_what_is_left_out_of_a_summary() -> None:
    text = " ".join(extracted(session(summary_msg(CLAUDE_SUMMARY))))
    # the analysis, the request, the person's quoted words, status, test counts, code blocks,
    # and a bare label ("Python packaging") are not memories
    for absent in ("Claimed", "tk start", "make the importer resumable", "README section",
                   "All 4 tests", "def resume", "Python packaging", "Current full content"):
        assert absent not in text


def test_summary_chunks_cut_anywhere_give_the_same_statements() -> None:
    whole = extracted(session(summary_msg(CLAUDE_SUMMARY)))
    for budget in (40, 60, 90):
        s = session(summary_msg(CLAUDE_SUMMARY), max_tokens=budget)
        assert len(s.chunks) > 2
        assert extracted(s) == whole
        # each statement cites the chunks that hold its item (and the item it belongs to)
        for c in RulesExtractor().extract(s):
            assert 1 <= len(c.evidence) <= 2


def test_renamed_missing_and_unknown_sections() -> None:
    text = """## Goal
Ship the exporter.

## Gotchas we hit
- `orjson.dumps` returns bytes, not str: decode before writing to a text stream

## Where things live
- `hippo/export.py` - writes one JSON object per line

## Notes
- The nightly job runs at 03:00 UTC from `cron/nightly`
- Remember this for later
"""
    assert extracted(session(summary_msg(text))) == {
        ("`orjson.dumps` returns bytes, not str: decode before writing to a text stream"):
            "insight",
        "`hippo/export.py` - writes one JSON object per line": "fact",
        "The nightly job runs at 03:00 UTC from `cron/nightly`": "fact",
    }
    # no sections at all: plain prose with nothing that names a thing gives nothing
    assert extracted(session(summary_msg("We talked about the weather and lunch plans."))) == {}


def test_a_summary_in_another_language_breaks_nothing_and_invents_nothing() -> None:
    text = """Resumen:
1. Conceptos técnicos clave:
   - **Marcas de agua** - hasta dónde se leyó cada archivo, guardado por ruta
2. Errores y correcciones:
   - **`KeyError: 'cwd'`** en sesiones antiguas: se usa `record.get("cwd")`
"""
    found = extracted(session(summary_msg(text)))
    assert found  # unknown section names: items that name something are still facts
    for statement in found:
        assert set(_words(statement)) <= set(_words(text))


def test_codex_compacted_item_is_a_summary_source(tmp_path: Path) -> None:
    from hippo.ingest.readers.codex import READER

    path = tmp_path / "rollout-2026-01-01T00-00-00-abc.jsonl"
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
         "payload": {"id": "abc", "cwd": "/w/alpha", "timestamp": "2026-01-01T00:00:00Z"}},
        {"timestamp": "2026-01-01T00:05:00Z", "type": "compacted",
         "payload": {"message": "Errors and fixes:\n- `pytest -x` hung on the network "
                                "test: mark it `@pytest.mark.slow` and skip it in CI\n"}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    msgs = [m for m in READER.read(path).messages if m.kind == "summary"]
    assert len(msgs) == 1
    found = extracted(session(*msgs))
    assert found == {"`pytest -x` hung on the network test: mark it `@pytest.mark.slow` and "
                     "skip it in CI": "insight"}


def test_a_session_compacted_twice_links_instead_of_duplicating(tmp_path: Path, cli,
                                                                db_path: Path) -> None:
    """Both summaries repeat an item: one memory with both chunks. The first summary's
    pending task the second no longer lists is marked done; undo reverts the run."""
    first = CLAUDE_SUMMARY
    second = CLAUDE_SUMMARY.replace(
        "   - Document the `--resume` flag in the README\n", "").replace(
        "9. Optional Next Step:\n   Document the `--resume` flag in the README.\n",
        "9. Optional Next Step:\n   Add a test for a file that grows while it is read.\n")
    path = tmp_path / "proj" / "11111111-2222-4333-8444-555555555555.jsonl"
    path.parent.mkdir()
    _write_claude(path, [first])
    assert cli("ingest", str(path), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    before = {m["text"]: m for m in memories(db_path)}
    assert before["Document the `--resume` flag in the README"]["status"] == "active"

    _write_claude(path, [first, second])
    assert cli("ingest", str(path), "--idle-minutes", "0").exit_code == 0
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    events = [orjson.loads(x) for x in r.stdout.splitlines()]
    after = {m["text"]: m for m in memories(db_path)}
    assert len(after) == len(before)  # the second summary repeats the first: links only
    assert after["Document the `--resume` flag in the README"]["status"] == "done"
    assert after["Add a test for a file that grows while it is read"]["status"] == "active"
    watermark = after["Watermarks - how far each file was read, stored per path"]
    assert len(watermark["source"]["chunks"]) == 2  # linked to both summaries
    assert events[-1]["done"] == 1
    # a re-run adds nothing; undo of the second run restores the tasks
    again = cli("extract")
    assert [orjson.loads(x) for x in again.stdout.splitlines()][-1]["added"] == 0
    run = events[-1]["run_id"]
    assert cli("undo", run).exit_code == 0
    restored = {m["text"]: m for m in memories(db_path)}
    assert restored["Document the `--resume` flag in the README"]["status"] == "active"
    assert len(restored["Watermarks - how far each file was read, stored per path"]["source"][
        "chunks"]) == 1


def _write_claude(path: Path, summaries: list[str]) -> None:
    sid = path.stem
    lines, n = [], 0
    for i, text in enumerate(summaries):
        for role, content in (("user", f"work on step {i}"),
                              ("assistant", "I'll start with the importer.")):
            n += 1
            lines.append({"type": role, "uuid": f"r{n}", "parentUuid": None, "sessionId": sid,
                          "cwd": "/w/alpha", "timestamp": f"2026-01-01T00:{n:02d}:00Z",
                          "message": {"role": role, "content": content}})
        n += 1
        lines.append({"type": "system", "subtype": "compact_boundary", "uuid": f"b{n}",
                      "sessionId": sid, "timestamp": f"2026-01-01T00:{n:02d}:00Z"})
        n += 1
        lines.append({"type": "user", "uuid": f"c{n}", "parentUuid": f"b{n - 1}",
                      "sessionId": sid, "cwd": "/w/alpha", "isCompactSummary": True,
                      "timestamp": f"2026-01-01T00:{n:02d}:00Z",
                      "message": {"role": "user", "content": (
                          "This session is being continued from a previous conversation that "
                          "ran out of context. The summary below covers the earlier portion "
                          "of the conversation.\n\n" + text)}})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")


def test_parse_keeps_sub_items_under_their_parent() -> None:
    sections = {s.title: s for s in parse(CLAUDE_SUMMARY)}
    files = sections["Files and Code Sections"]
    assert [i.text.split("`")[1] for i in files.items] == ["src/importer/resume.py",
                                                           "tests/test_resume.py"]
    assert [c.text for c in files.items[0].children] == [
        "Resumes reading at the stored byte offset", "Current full content:"]
    assert "Analysis" not in sections and "Primary Request and Intent" in sections


# -- the conversation: wrap-ups, the gate, error -> fix, answers --------------------------

def conv(*blocks: tuple[str, str]) -> SessionChunks:
    msgs = [Message(role, text, "tool_call" if kind == "call" else
                    "tool_result" if role == "tool" else "message", None, i, i, f"m{i}")
            for i, (role, text, kind) in enumerate(
                ((r, t, "call" if r == "call" else "") for r, t in blocks), start=1)]
    for m in msgs:
        if m.role == "call":
            m.role = "assistant"
    return session(*msgs, max_tokens=60)


PYTHON_GATE = [
    ("user", "Add retries to the uploader."),
    ("call", "Edit: /w/alpha/src/upload.py"),
    ("tool", "The file /w/alpha/src/upload.py has been updated."),
    ("call", "Bash: ruff check . && pytest -q tests/test_upload.py 2>&1 | tail -5"),
    ("tool", "[error] FAILED tests/test_upload.py::test_retry - AssertionError: 2 != 3"),
    ("call", "Edit: /w/alpha/src/upload.py"),
    ("tool", "The file /w/alpha/src/upload.py has been updated."),
    ("call", "Bash: ruff check . && pytest -q tests/test_upload.py 2>&1 | tail -5"),
    ("tool", "5 passed in 0.4s"),
    ("call", "Bash: git add -A && git commit -m 'uploader: retry 3 times'"),
    ("tool", "[main 1a2b3c] uploader: retry 3 times"),
    ("user", "Now log each retry."),
    ("call", "Edit: /w/alpha/src/upload.py"),
    ("tool", "The file /w/alpha/src/upload.py has been updated."),
    ("call", "Bash: ruff check . && pytest -q"),
    ("tool", "41 passed in 2.1s"),
    ("call", "Bash: git commit -am 'uploader: log retries'"),
    ("tool", "[main 4d5e6f] uploader: log retries"),
]


def test_a_tracker_command_before_each_commit_is_not_a_check() -> None:
    seq: list[tuple[str, str]] = []
    for turn in PYTHON_GATE:  # before each commit, a close in the tracker
        if "git commit" in turn[1]:
            seq += [("call", "Bash: bd close alpha-1.2"), ("tool", "✓ Closed alpha-1.2")]
        seq.append(turn)
    found = extracted(conv(*seq))
    assert found["Before committing, run: `ruff check`, `pytest -q`"] == "procedure"


def test_the_gate_is_what_runs_before_every_commit_python() -> None:
    found = extracted(conv(*PYTHON_GATE))
    assert found["Before committing, run: `ruff check`, `pytest -q`"] == "procedure"
    fix = ('`ruff check && pytest -q` failed with "FAILED tests/test_upload.py::test_retry - '
           'AssertionError: 2 != 3"; it passed after editing `alpha/src/upload.py`')
    assert found[fix] == "insight"
    assert not any("passed in" in t or "uploader: retry" in t for t in found)  # tool output


def test_a_failure_whose_output_names_no_error_is_no_fix() -> None:
    quiet = [("tool", "[error] Getting extensions in current project...\nRunning setup")
             if t[1].startswith("[error] FAILED") else t for t in PYTHON_GATE]
    found = extracted(conv(*quiet))
    assert not any("failed with" in t for t in found), list(found)


def test_the_gate_and_a_fix_in_javascript_with_codex_style_calls() -> None:
    blocks = [
        ("user", "Fix the date parsing bug."),
        ("call", 'exec_command: {"cmd":"npm ci"}'),
        ("tool", "added 312 packages"),
        ("call", "exec_command: npm run lint && npx vitest run src/date.test.js"),
        ("tool", ("Process exited with code 1\nTypeError: Cannot read properties of undefined"
                 " (reading 'getTime')")),
        ("call", "apply_patch: src/date.js"),
        ("tool", "Success. Updated the following files: M src/date.js"),
        ("call", "exec_command: npm run lint && npx vitest run src/date.test.js"),
        ("tool", "Process exited with code 0\n12 passed"),
        ("call", "exec_command: git commit -am 'date: parse ISO weeks'"),
        ("tool", "[main 77aa] date: parse ISO weeks"),
        ("user", "and the time zones"),
        ("call", "apply_patch: src/tz.js"),
        ("tool", "Success."),
        ("call", "exec_command: npm run lint && npx vitest run"),
        ("tool", "Process exited with code 0"),
        ("call", "exec_command: git commit -am 'tz: offsets'"),
        ("tool", "[main 88bb] tz: offsets"),
    ]
    found = extracted(conv(*blocks))
    assert found["Before committing, run: `npm run lint`, `npx vitest run`"] == "procedure"
    assert any(t.startswith("`npm run lint && npx vitest run` failed with \"TypeError: Cannot "
                            "read properties of undefined") and t.endswith("`src/date.js`")
               for t in found)


def test_no_gate_from_one_commit_and_no_wrapup_without_one() -> None:
    one = PYTHON_GATE[:11] + [("assistant", ("Done:\n- Added `retry()` with 3 attempts\n"
                                            "- Backoff doubles each time (`base=0.5`)"))]
    found = extracted(conv(*one))
    assert not any(t.startswith("Before committing") for t in found)
    # the turn's closing list: one statement, its items together
    assert "Added `retry()` with 3 attempts; Backoff doubles each time (`base=0.5`)" in found
    proposal = [("user", "What would you change?"),
                ("assistant", "I would:\n- Add `retry()` with 3 attempts\n- Log each one")]
    assert extracted(conv(*proposal)) == {}  # nothing was done: a proposal, not a wrap-up


def test_assistant_findings_and_the_persons_answers() -> None:
    blocks = [
        ("user", "why does the export hang?"),
        ("assistant", ("Let me check whether the problem is the lock. The problem was that "
                      "`export()` held the write lock while it streamed to stdout.")),
        ("assistant", ("The framework generates `handle_event(\"save\")` for every form. So I "
                      "don't need a manual handler.")),
        ("assistant", "Good. The default timeout is `30s`."),
        ("user", ('Answer to "Tests fail on main too. Fix them here or leave them?": fix '
                 "them here")),
    ]
    found = extracted(conv(*blocks))
    assert found == {
        ("The problem was that `export()` held the write lock while it streamed to stdout."):
            "insight",
        ('The framework generates `handle_event("save")` for every form. So I don\'t need a '
         "manual handler."): "insight",
        "The default timeout is `30s`.": "config",
        'Answer to "Tests fail on main too. Fix them here or leave them?": fix them here':
            "decision",
    }


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"\w+", text)]


# Words the extractor's own templates add (a gate's and a fix's framing, a subject's colon,
# a constant's "`NAME` in `FILE` is [now] V", a fix's "and running `pip install X`").
TEMPLATE = {"before", "committing", "run", "failed", "with", "it", "passed", "after",
            "editing", "closed", "committed", "on", "of", "at", "fixed", "in", "is", "now",
            "and", "running"}


SESSIONS = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts" / \
    "claude-code-sessions"


@pytest.mark.skipif(not SESSIONS.exists(), reason="shared sessions not present")
def test_real_sessions_every_word_is_in_the_cited_chunks(cli, db_path: Path) -> None:
    paths = [str(p) for p in sorted(SESSIONS.iterdir()) if p.suffix == ".jsonl" or p.is_dir()]
    assert cli("ingest", "--idle-minutes", "0", *paths).exit_code in (0, 3)
    r = cli("extract")
    assert r.exit_code == 0, r.stderr
    mems = memories(db_path)
    assert 60 <= len(mems) <= 300
    from hippo.store import connect

    db = connect(db_path)
    for m in mems:
        cited = " ".join(row["text"] for row in db.memories.sources(m["id"])
                         if row["text"] is not None)
        missing = set(_words(m["text"])) - set(_words(cited)) - TEMPLATE
        assert not missing, (m["text"], missing)
        assert "\n" not in m["text"] and len(m["text"]) <= 400
    # the compaction agent's run is not a source; its prompt never becomes a memory
    assert not any("Your task is to create a detailed summary" in m["text"] for m in mems)
    # a second run adds nothing
    again = [orjson.loads(x) for x in cli("extract").stdout.splitlines()]
    assert again[-1]["added"] == 0
