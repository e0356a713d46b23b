"""Chunking: bounds, boundaries, what is left out, long-message splitting, determinism."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ingest_support import read, real

from hippo.ingest.chunk import chunk_messages, estimate_tokens
from hippo.ingest.model import Message


def msg(role: str, text: str, line: int, kind: str = "message", *, side: bool = False) -> Message:
    ts = f"2026-01-01T00:00:{line:02d}Z"
    return Message(role, text, kind, ts, line, line, f"m{line}", "s", is_sidechain=side)


def words(n: int, word: str = "alpha") -> str:
    return " ".join([word] * n)


def test_packs_messages_and_renders_roles() -> None:
    messages = [
        msg("user", "How do I rotate the logs?", 1),
        msg("assistant", "Use logrotate with a daily rule.", 2),
        msg("assistant", "Bash: logrotate -d /etc/logrotate.conf", 3, "tool_call"),
        msg("tool", "reading config file /etc/logrotate.conf", 4, "tool_result"),
    ]
    [chunk] = chunk_messages(messages)
    assert chunk.text == (
        "user: How do I rotate the logs?\n\n"
        "assistant: Use logrotate with a daily rule.\n\n"
        "assistant: Bash: logrotate -d /etc/logrotate.conf\n\n"
        "tool: reading config file /etc/logrotate.conf"
    )
    assert chunk.roles == ["user", "assistant", "tool"]
    assert (chunk.line_start, chunk.line_end) == (1, 4)
    assert chunk.message_ids == ["m1", "m2", "m3", "m4"]
    assert (chunk.started_at, chunk.ended_at) == ("2026-01-01T00:00:01Z", "2026-01-01T00:00:04Z")
    assert chunk.session_id == "s"


def test_system_and_empty_messages_are_left_out_and_summaries_kept_apart() -> None:
    messages = [
        msg("system", "Earlier the team fixed the build.", 1, "summary"),
        msg("system", "You are a helpful assistant.", 2),
        msg("user", "   \n ", 3),
        msg("user", "real question", 4),
    ]
    summary, chunk = chunk_messages(messages)
    assert chunk.text == "user: real question" and chunk.message_ids == ["m4"]
    assert (summary.text, summary.roles) == ("summary: Earlier the team fixed the build.",
                                             ["summary"])
    assert chunk_messages([messages[1], messages[2]]) == []


SUMMARY = """Summary:
1. Primary Request and Intent:
   The user asked to make the importer resumable.

2. Key Technical Concepts:
   - **Watermarks** - how far each file was read
   - **Advisory locks** - one writer per job

3. Files and Code Sections:
   - `src/importer.py` (MODIFIED)
     - Resumes at the stored byte offset
     ```python
     def resume(path):
         - not a bullet, inside code
         return offset(path)
     ```
   - `tests/test_importer.py` (NEW)
     - Covers a killed run

4. Errors and fixes:
   - **Offset past EOF after truncation**: reset the watermark when the file shrank.
"""


def test_a_summary_is_cut_at_sections_and_bullets_only() -> None:
    one = msg("system", SUMMARY, 7, "summary")
    [whole] = chunk_messages([one])
    assert whole.text == "summary: " + SUMMARY.strip() and whole.roles == ["summary"]
    chunks = chunk_messages([msg("user", "hi", 6), one, msg("assistant", "ok", 8)],
                            max_tokens=70)
    assert chunks[0].roles == ["user"] and chunks[-1].roles == ["assistant"]
    pieces = [c.text.removeprefix("summary: ") for c in chunks[1:-1]]
    assert len(pieces) > 2 and all(c.roles == ["summary"] for c in chunks[1:-1])
    assert all(estimate_tokens(c.text) <= 70 for c in chunks)
    # Every piece starts at a boundary; sub-bullets and the code block stay with their item.
    starts = ("Summary:", "1.", "2.", "3.", "4.", "- ")
    assert all(p.lstrip().startswith(starts) for p in pieces)
    assert any("`src/importer.py`" in p and "not a bullet, inside code" in p for p in pieces)
    assert all(c.line_start == 7 and c.message_ids == ["m7"] for c in chunks[1:-1])


def test_splits_only_at_message_boundaries() -> None:
    messages = [msg("user" if i % 2 else "assistant", words(30), i) for i in range(1, 21)]
    chunks = chunk_messages(messages, max_tokens=100)
    assert len(chunks) > 1
    assert all(estimate_tokens(c.text) <= 100 for c in chunks)
    # Every message lands whole in exactly one chunk, in order.
    assert [i for c in chunks for i in c.message_ids] == [f"m{i}" for i in range(1, 21)]
    assert all(c.text.count("alpha") % 30 == 0 for c in chunks)


def test_long_message_is_split_at_paragraphs_then_sentences() -> None:
    paragraphs = [
        " ".join(f"Sentence {p}.{s} has some words in it." for s in range(8)) for p in range(6)
    ]
    long = msg("assistant", "\n\n".join(paragraphs), 7)
    chunks = chunk_messages(
        [msg("user", "explain", 6), long, msg("user", "thanks", 8)], max_tokens=120
    )
    assert chunks[0].text == "user: explain"
    middle = chunks[1:-1]
    assert len(middle) >= 3
    assert all(c.text.startswith("assistant: Sentence ") for c in middle)
    assert all(c.text.endswith(".") for c in middle)  # never cut inside a sentence
    assert all(c.message_ids == ["m7"] and (c.line_start, c.line_end) == (7, 7) for c in middle)
    assert chunks[-1].text == "user: thanks"
    assert all(estimate_tokens(c.text) <= 120 for c in chunks)
    rebuilt = " ".join(c.text.removeprefix("assistant: ") for c in middle)
    assert rebuilt.split() == long.text.split()


def test_unbreakable_blob_is_hard_cut() -> None:
    blob = "A" * 5000
    chunks = chunk_messages([msg("tool", blob, 1, "tool_result")], max_tokens=50)
    assert "".join(c.text.removeprefix("tool: ") for c in chunks) == blob
    assert all(estimate_tokens(c.text) <= 50 for c in chunks)


def test_session_or_sidechain_change_starts_a_new_chunk() -> None:
    a = msg("user", "main question", 1)
    b = msg("assistant", "subagent work", 2, side=True)
    c = Message("user", "other session", "message", None, 3, 3, "m3", "t")
    assert [ch.message_ids for ch in chunk_messages([a, b, c])] == [["m1"], ["m2"], ["m3"]]


def test_custom_counter_and_too_small_budget() -> None:
    def count(text: str) -> int:
        return len(text)

    chunks = chunk_messages([msg("user", words(20), 1)], max_tokens=40, count_tokens=count)
    assert all(len(c.text) <= 40 for c in chunks)
    with pytest.raises(ValueError, match="max_tokens"):
        chunk_messages([msg("user", "hi", 1)], max_tokens=2)


def test_estimate_counts_cjk_per_character() -> None:
    assert estimate_tokens("CLAUDE.mdファイルを更新") >= 8
    assert estimate_tokens("one two three") == 4
    assert estimate_tokens("") == 0


def test_real_transcript_chunks_respect_the_budget() -> None:
    result = read(real("claude-code/codemie-code__incremental-simple__turn-2.jsonl"))
    chunks = chunk_messages(result.messages, max_tokens=200)
    assert chunks == chunk_messages(result.messages, max_tokens=200)  # deterministic
    assert all(estimate_tokens(c.text) <= 200 for c in chunks)
    ids = [i for c in chunks for i in c.message_ids]
    expected = [m.message_id for m in result.messages]
    assert list(dict.fromkeys(ids)) == expected


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=400)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(_TEXT, max_size=8),
    max_tokens=st.integers(min_value=8, max_value=300),
)
def test_bounds_and_coverage_hold_for_any_text(texts: list[str], max_tokens: int) -> None:
    messages = [msg("user" if i % 2 else "assistant", t, i + 1) for i, t in enumerate(texts)]
    chunks = chunk_messages(messages, max_tokens=max_tokens)
    assert all(estimate_tokens(c.text) <= max_tokens for c in chunks)
    kept = [m.message_id for m in messages if m.text.strip()]
    assert list(dict.fromkeys(i for c in chunks for i in c.message_ids)) == kept
    # No word is lost or invented by splitting.
    for m in messages:
        pieces = [c.text.split(": ", 1)[1] for c in chunks if c.message_ids == [m.message_id]]
        if pieces and len(pieces) > 1:
            assert "".join("".join(p.split()) for p in pieces) == "".join(m.text.split())
