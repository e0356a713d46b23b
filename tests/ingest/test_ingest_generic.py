"""Generic JSON/JSONL and plain-text readers, and format detection/lookup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ingest_support import TRANSCRIPTS, read

from hippo.ingest.readers import READERS, detect, get_reader, read_head
from hippo.ingest.readers.generic import GENERIC, TEXT

RECORDS = [
    {"role": "system", "content": "You are helpful."},
    {"role": "human", "content": "How do I undo a commit?", "timestamp": "2025-05-01T09:00:00+02:00"},
    {"role": "assistant", "content": [{"type": "text", "text": "Use `git revert <sha>`."}],
     "tool_calls": [{"id": "t1", "function": {"name": "shell", "arguments": "{\"command\": \"git log -1\"}"}}]},
    {"role": "tool", "content": "commit 3f2a9c1"},
    {"type": "metadata", "model": "x"},
]  # fmt: skip


def test_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    assert detect(path, read_head(path)).name == "generic-jsonl"
    result = read(path)
    assert [(m.role, m.kind, m.text) for m in result.messages] == [
        ("system", "message", "You are helpful."),
        ("user", "message", "How do I undo a commit?"),
        ("assistant", "message", "Use `git revert <sha>`."),
        ("assistant", "tool_call", "shell: git log -1"),
        ("tool", "tool_result", "commit 3f2a9c1"),
    ]
    assert result.messages[1].timestamp == "2025-05-01T07:00:00Z"  # converted to UTC
    assert [(s.line, s.reason) for s in result.skipped] == [(5, "unknown record")]
    assert result.end_line == 5


@pytest.mark.parametrize("wrap", [False, True])
def test_json_document(tmp_path: Path, wrap: bool) -> None:
    path = tmp_path / "chat.json"
    doc = {"session_id": "s-1", "messages": RECORDS[:4]} if wrap else RECORDS[:4]
    path.write_text(json.dumps(doc, indent=2))
    assert detect(path, read_head(path)).name == "generic-jsonl"
    result = read(path)
    assert len(result.messages) == 5 and result.end_line == 4
    assert [m.line_start for m in result.messages] == [1, 2, 3, 3, 4]
    assert result.session.session_id == ("s-1" if wrap else None)
    rest = GENERIC.read(path, result.end_offset, 2)
    assert rest.messages == result.messages[2:]


def test_array_in_a_jsonl_named_file(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(RECORDS[:2]))
    assert [m.role for m in GENERIC.read(path).messages] == ["system", "user"]


def test_plain_text_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(
        "User: why is the cache cold?\n\n"
        "**Assistant:** The TTL is 0 in prod.\n\nSet it to 300.\n\n\n"
        "Human: thanks\nthat fixed it\n"
    )
    assert detect(path, read_head(path)).name == "text"
    result = read(path)
    assert [(m.role, m.text, m.line_start, m.line_end) for m in result.messages] == [
        ("user", "why is the cache cold?", 1, 1),
        ("assistant", "The TTL is 0 in prod.", 3, 3),
        ("assistant", "Set it to 300.", 5, 5),
        ("user", "thanks\nthat fixed it", 8, 9),
    ]
    assert (result.end_offset, result.end_line) == (path.stat().st_size, 9)


def test_plain_text_without_speakers_is_user(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("Decided to use SQLite.\n\nWAL mode on.\n")
    assert [(m.role, m.text) for m in TEXT.read(path).messages] == [
        ("user", "Decided to use SQLite."),
        ("user", "WAL mode on."),
    ]


def test_plain_text_open_paragraph_waits(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("first para\n\nsecond para line 1\nsecond para li")
    first = TEXT.read(path)
    assert [m.text for m in first.messages] == ["first para"]
    assert first.end_offset == len("first para\n\n") and first.end_line == 2
    path.write_text("first para\n\nsecond para line 1\nsecond para line 2\n")
    rest = TEXT.read(path, first.end_offset, first.end_line)
    assert [(m.text, m.line_start) for m in rest.messages] == [
        ("second para line 1\nsecond para line 2", 3)
    ]


def test_detect_real_files() -> None:
    expected = {
        "claude-code": "claude-code",
        "codex": "codex",
        "gemini-cli": "gemini-cli",
        "aider": "aider",
    }
    found = 0
    for folder, name in expected.items():
        for path in sorted((TRANSCRIPTS / folder).glob("*")):
            assert detect(path, read_head(path)).name == name, path.name
            found += 1
    if not found:
        pytest.skip("real transcripts not available")


def test_detect_by_content_without_telling_names(tmp_path: Path) -> None:
    claude = tmp_path / "a.jsonl"
    claude.write_text(
        '{"parentUuid":null,"sessionId":"s","type":"user","message":{"content":"x"}}\n'
    )
    codex = tmp_path / "b.jsonl"
    codex.write_text(
        '{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}\n'
    )
    gemini = tmp_path / "c.json"
    gemini.write_text('{"sessionId":"x","projectHash":"h","messages":[]}')
    aider = tmp_path / "history.md"
    aider.write_text("\n# aider chat started at 2025-01-01 00:00:00\n")
    assert [detect(p, read_head(p)).name for p in (claude, codex, gemini, aider)] == [
        "claude-code",
        "codex",
        "gemini-cli",
        "aider",
    ]
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)))
    assert detect(binary, read_head(binary)).name == "text"


def test_get_reader() -> None:
    assert get_reader("codex") is READERS["codex"]
    assert get_reader("Claude") is READERS["claude-code"]
    assert get_reader("gemini").name == "gemini-cli"
    with pytest.raises(ValueError, match="known formats: claude-code, codex, gemini-cli"):
        get_reader("word")
