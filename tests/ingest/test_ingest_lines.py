"""What every reader must survive: torn tails, bad lines, huge lines, empty and garbage files."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ingest_support import real

from hippo.ingest.model import ReadResult, Skip
from hippo.ingest.readers import READERS, Reader, detect, read_head

LINE_READERS = ["claude-code", "codex", "generic-jsonl", "aider", "text"]
JSONL_READERS = ["claude-code", "codex", "generic-jsonl"]


def user_line(text: str, uuid: str) -> str:
    """A record all three JSONL readers understand as a user prompt."""
    return json.dumps(
        {
            "type": "user",
            "uuid": uuid,
            "sessionId": "s",
            "role": "user",
            "content": text,
            "message": {"role": "user", "content": text},
        }
    )


def codex_line(text: str) -> str:
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return json.dumps(
        {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": item}
    )


def record(reader: str, text: str, n: int) -> str:
    return codex_line(text) if reader == "codex" else user_line(text, f"u{n}")


def texts(result: ReadResult) -> list[str]:
    return [m.text for m in result.messages]


@pytest.mark.parametrize("name", JSONL_READERS)
def test_bad_lines_are_skipped_and_the_run_continues(tmp_path: Path, name: str) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        record(name, "one", 1).encode(),
        b'{"type": "user", "message": ',  # malformed
        b"\xff\xfe not utf-8 \xc3",  # invalid UTF-8
        b"[1, 2, 3]",  # valid JSON, not an object
        b"",  # blank: neither skipped nor a message
        record(name, "two", 2).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = READERS[name].read(path)
    assert texts(result) == ["one", "two"]
    assert result.skipped == [
        Skip(2, "malformed json"),
        Skip(3, "invalid utf-8"),
        Skip(4, "not an object"),
    ]
    assert [m.line_start for m in result.messages] == [1, 6]
    assert (result.end_offset, result.end_line) == (path.stat().st_size, 6)


@pytest.mark.parametrize("name", ["aider", "text"])
def test_invalid_utf8_line_in_text_formats(tmp_path: Path, name: str) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"#### first\n\nok line\n\xff\xfe\nmore\n")
    result = READERS[name].read(path)
    assert result.skipped == [Skip(4, "invalid utf-8")]
    assert result.end_offset == path.stat().st_size and result.end_line == 5


@pytest.mark.parametrize("name", JSONL_READERS)
def test_torn_last_line_is_left_for_next_run(tmp_path: Path, name: str) -> None:
    path = tmp_path / "s.jsonl"
    one, two = record(name, "one", 1) + "\n", record(name, "two", 2) + "\n"
    path.write_text(one + two[:25])
    first = READERS[name].read(path)
    assert texts(first) == ["one"] and first.skipped == []
    assert (first.end_offset, first.end_line) == (len(one.encode()), 1)
    path.write_text(one + two)
    rest = READERS[name].read(path, first.end_offset, first.end_line)
    assert texts(rest) == ["two"] and rest.messages[0].line_start == 2
    assert (rest.end_offset, rest.end_line) == (path.stat().st_size, 2)


@pytest.mark.parametrize("name", JSONL_READERS)
def test_complete_object_without_final_newline_is_consumed(tmp_path: Path, name: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(record(name, "one", 1))
    first = READERS[name].read(path)
    assert texts(first) == ["one"] and first.end_offset == path.stat().st_size
    # The writer's newline and the next record arrive later: nothing is read twice.
    path.write_text(record(name, "one", 1) + "\n" + record(name, "two", 2) + "\n")
    assert texts(READERS[name].read(path, first.end_offset, first.end_line)) == ["two"]


@pytest.mark.parametrize("name", ["aider", "text"])
def test_text_formats_leave_a_final_line_without_newline(tmp_path: Path, name: str) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("#### done\n\npartial repl")
    result = READERS[name].read(path)
    assert result.end_offset == len("#### done\n\n") and result.end_line == 2


@pytest.fixture(scope="module")
def huge_line_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Line 2 is a 50 MB JSON string, written in 1 MB blocks."""
    path = tmp_path_factory.mktemp("huge") / "big.jsonl"
    block = b"x" * (1 << 20)
    with path.open("wb") as fh:
        fh.write(user_line("before", "u1").encode() + b"\n")
        fh.write(b'{"type": "user", "message": {"content": "')
        for _ in range(50):
            fh.write(block)
        fh.write(b'"}}\n')
        fh.write(user_line("after", "u3").encode() + b"\n")
    return path


@pytest.mark.parametrize("name", ["claude-code", "generic-jsonl", "aider", "text"])
def test_50mb_line_is_skipped_while_streaming(huge_line_file: Path, name: str) -> None:
    reader: Reader = READERS[name]
    tracemalloc.start()
    try:
        result = reader.read(huge_line_file)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert Skip(2, "line too long") in result.skipped
    assert (result.end_offset, result.end_line) == (huge_line_file.stat().st_size, 3)
    assert peak < 30 * 1024 * 1024  # the 8 MB limit plus buffers, never the whole 50 MB line
    if name in ("claude-code", "generic-jsonl"):
        assert texts(result) == ["before", "after"]


@pytest.mark.parametrize("name", list(READERS))
def test_empty_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / "empty.json"
    path.write_bytes(b"")
    result = READERS[name].read(path)
    assert result.messages == []
    assert (result.end_offset, result.end_line) == (0, 0)


@pytest.mark.parametrize("name", list(READERS))
def test_offset_past_end_reads_nothing(tmp_path: Path, name: str) -> None:
    path = tmp_path / "short.jsonl"
    path.write_text(user_line("x", "u1") + "\n")
    size = path.stat().st_size
    result = READERS[name].read(path, size, 1)
    assert result.messages == [] and result.end_line == 1


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=3000))
def test_arbitrary_bytes_never_crash_any_reader(tmp_path: Path, data: bytes) -> None:
    for suffix in (".jsonl", ".json", ".md"):
        path = tmp_path / f"fuzz{suffix}"
        path.write_bytes(data)
        for reader in READERS.values():
            result = reader.read(path)
            assert 0 <= result.end_offset <= len(data)
            assert all(m.text.strip() for m in result.messages)
            for m in result.messages:
                m.text.encode("utf-8")  # storable as-is
        for line_reader in LINE_READERS:
            # Resuming from wherever a first read stopped must not fail either.
            first = READERS[line_reader].read(path)
            READERS[line_reader].read(path, first.end_offset, first.end_line)


_KEYS = [
    "message", "content", "role", "id", "uuid", "parentUuid", "sessionId", "isMeta",
    "isSidechain", "agentId", "timestamp", "cwd", "summary", "leafUuid", "payload", "messages",
    "toolCalls", "text", "tool_use_id", "input", "name", "arguments", "output", "call_id",
    "is_error", "isCompactSummary", "tool_calls", "function", "args", "result", "action",
]  # fmt: skip
_WORDS = st.sampled_from(
    ["user", "assistant", "gemini", "message", "text", "tool_use", "tool_result", "summary",
     "response_item", "function_call", "function_call_output", "custom_tool_call",
     "web_search_call", "session_meta", "compacted", "turn_context", "input_text", "Warmup",
     "<command-name>/x</command-name>", "<bash-input>ls</bash-input>", "2026-01-01T00:00:00Z",
     "\ud800", ""]
)  # fmt: skip
_SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _WORDS
_JSON = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(_KEYS + ["type"]), inner, max_size=3)
    ),
    max_leaves=6,
)
_RECORD = st.builds(
    lambda kind, rest: {"type": kind, **rest},
    _WORDS,
    st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=5),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=st.lists(_RECORD, max_size=6))
def test_structured_garbage_never_crashes(tmp_path: Path, records: list[dict[str, object]]) -> None:
    """Records shaped like the real formats but with wrong types and values everywhere."""
    jsonl = tmp_path / "fuzz.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    document = tmp_path / "fuzz.json"
    document.write_text(json.dumps({"sessionId": "s", "messages": records}))
    for path in (jsonl, document):
        for reader in READERS.values():
            result = reader.read(path)
            for m in result.messages:
                assert isinstance(m.text, str) and m.text.strip()
                m.text.encode("utf-8")


_ODD_VALUES: list[object] = [
    None,
    0,
    -1,
    1e308,
    True,
    "",
    "\ud800",
    [],
    {},
    [{}],
    {"type": []},
    "x" * 3,
]


def _mutate(value: object, rng: random.Random) -> object:
    """Replace one nested value of a real record by a value of the wrong type."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        return {**value, key: _mutate(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        return [*value[:i], _mutate(value[i], rng), *value[i + 1 :]]
    return rng.choice(_ODD_VALUES)


@pytest.mark.parametrize(
    "relative",
    [
        "claude-code/spotter__tool_heavy.jsonl",
        "claude-code/claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        "codex/codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        "gemini-cli/codemie-code__session-2026-01-16T11-01-file-ops-37b7abef.json",
    ],
)
def test_mutated_real_records_never_crash(tmp_path: Path, relative: str) -> None:
    """Seeded mutation fuzz: real records with one field at a time given a wrong type."""
    source = real(relative)
    reader = detect(source, read_head(source))
    if source.suffix == ".json":
        doc = json.loads(source.read_text())
        records, wrap = doc["messages"], lambda rs: json.dumps({**doc, "messages": rs})
    else:
        records = [json.loads(line) for line in source.read_text().splitlines()[:60]]
        wrap = lambda rs: "".join(json.dumps(r) + "\n" for r in rs)
    rng = random.Random(4)
    path = tmp_path / source.name
    for _ in range(40):
        mutated = [_mutate(r, rng) if rng.random() < 0.3 else r for r in records]
        path.write_text(wrap(mutated))
        for m in reader.read(path).messages:
            assert m.text.strip()
            m.text.encode("utf-8")


def test_line_limit_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    ok, long = b'{"role": "user", "content": "x"}', b'{"role": "user", "content": "xx"}'
    path.write_bytes(ok + b"\n" + long + b"\n" + ok + b"\n")
    result = READERS["generic-jsonl"].read(path, max_line_bytes=len(ok))
    assert result.skipped == [Skip(2, "line too long")]
    assert [m.line_start for m in result.messages] == [1, 3]
