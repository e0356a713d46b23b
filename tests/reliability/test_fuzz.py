"""Fuzzing the three doors user data comes in by: transcript files, search queries and
`hippo add -`. Nothing may crash; every error is one `hippo: ...` line; nothing is stored
by halves. The worst inputs found are kept in tests/fuzz_corpus/ and replayed here."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo.ingest.readers import READERS

CORPUS = Path(__file__).resolve().parents[1] / "fuzz_corpus"
FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
            HealthCheck.data_too_large]
# Sized so the whole tests/reliability directory stays near a minute on a 2-core machine;
# bench/reliability.py runs the same properties with more (RELIABILITY_FUZZ_SCALE).
SCALE = float(os.environ.get("RELIABILITY_FUZZ_SCALE", "1"))
EXAMPLES = {k: max(1, round(n * SCALE)) for k, n in
            {"shapes": 120, "ingest": 25, "search": 150, "add": 60}.items()}

KEYS = ["role", "content", "text", "message", "messages", "type", "id", "uuid", "sessionId",
        "session_id", "timestamp", "cwd", "payload", "parts", "tool_calls", "name",
        "arguments", "speaker", "author", "summary", "isMeta", "model"]
ODD_TEXT = st.sampled_from([
    "", " ", "\x00", "\ud800", "\udfff x", "\u202e", "\ufeff", "a" * 300, "NEAR(a b)",
    '"', "-", "*", "^", "user", "assistant", "tool", "system", "sk-ant-" + "A" * 40,
    "2026-01-01T00:00:00Z", "9999-99-99", "[chunk 1]", "From now on always lint.",
])
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40) | ODD_TEXT)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=5),
    max_leaves=12,
)


def dumps(value: Any) -> str:
    # json (not orjson) so lone surrogates and big integers survive as the file's text
    return json.dumps(value)


def check_read(path: Path) -> None:
    size = path.stat().st_size
    for reader in READERS.values():
        res = reader.read(path)
        assert 0 <= res.end_offset <= size
        for m in res.messages:
            assert isinstance(m.text, str) and m.text.strip()
            m.text.encode("utf-8")  # storable as it is
        READERS[reader.name].read(path, res.end_offset, res.end_line)  # resuming is safe


# -- transcript readers ---------------------------------------------------------------------

@settings(max_examples=EXAMPLES["shapes"], deadline=None, suppress_health_check=FIXTURES)
@given(records=st.lists(JSON, max_size=6), document=JSON)
def test_any_json_shape_never_crashes_a_reader(tmp_path: Path, records: list[Any],
                                               document: Any) -> None:
    jsonl = tmp_path / "shape.jsonl"
    jsonl.write_text("".join(dumps(r) + "\n" for r in records), encoding="utf-8",
                     errors="surrogatepass")
    whole = tmp_path / "shape.json"
    whole.write_text(dumps(document), encoding="utf-8", errors="surrogatepass")
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(dumps({"sessionId": "s", "messages": records}), encoding="utf-8",
                       errors="surrogatepass")
    for path in (jsonl, whole, wrapped):
        check_read(path)


TRANSCRIPT_LINE = (JSON.map(lambda v: dumps(v).encode("utf-8", "surrogatepass"))
                   | st.builds(lambda role, text: dumps({"role": role, "content": text}).encode(
                       "utf-8", "surrogatepass"),
                       st.sampled_from(["user", "assistant", "tool", "human", "x"]),
                       st.text(max_size=200) | ODD_TEXT)
                   | st.binary(max_size=80))


@settings(max_examples=EXAMPLES["ingest"], deadline=None, suppress_health_check=FIXTURES)
@given(lines=st.lists(TRANSCRIPT_LINE, min_size=1, max_size=8),
       suffix=st.sampled_from([".jsonl", ".json", ".md", ".txt"]), torn=st.booleans())
def test_fuzzed_transcripts_through_ingest_and_extract(cli, tmp_path: Path, lines: list[bytes],
                                                       suffix: str, torn: bool) -> None:
    """The whole path: reader, redaction, chunking, storage, then the rules extractor."""
    folder = tmp_path / "fuzz"
    folder.mkdir(exist_ok=True)
    path = folder / f"t{len(list(folder.iterdir()))}{suffix}"
    path.write_bytes(b"\n".join(lines) + (b"" if torn else b"\n"))
    for args in (["ingest", str(path), "--idle-minutes", "0"], ["extract"]):
        r = cli(*args)
        assert r.exit_code in (0, 3), (args, r.stderr)
        assert r.records  # every stdout line is JSON (parsed here)
        assert all(x.startswith("hippo: ") for x in r.stderr.splitlines() if x.strip())


# -- search ---------------------------------------------------------------------------------

QUERY = (st.text(max_size=300)
         | st.text(st.characters(codec=None), max_size=60)  # lone surrogates included
         | st.lists(st.sampled_from(['"', "-", ":", "*", "^", "(", ")", "AND", "OR", "NOT",
                                     "NEAR", "NEAR(", "src/app.py", "--force", "E1234", "{",
                                     "col:", "\x00", "'", "+", "\\", "\u3000", "ǅ", "²"]),
                     max_size=12).map(" ".join))


@pytest.fixture
def seeded(cli) -> Any:
    import hippo

    cli("add", "-", input="".join(
        orjson.dumps({"text": t, "type": ty}).decode() + "\n" for t, ty in [
            ("deploys go through src/app.py --force after review", "procedure"),
            ("error E1234 means the cache is cold", "fact"),
            ("next task: rotate the api keys by friday", "task"),
            ("we decided to keep postgres for events", "decision"),
            ("café naïve résumé — unicode survives", "fact"),
        ]))
    cli("ingest", str(_transcript_for_echo(cli)), "--idle-minutes", "0")
    return hippo.open(embedder="hash")


def _transcript_for_echo(cli: Any) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "echo.jsonl"
    path.write_text("".join(dumps({"role": r, "content": t}) + "\n" for r, t in [
        ("user", "why is E1234 showing up in src/app.py?"),
        ("assistant", "the cache is cold after --force deploys"),
    ]))
    return path


@settings(max_examples=EXAMPLES["search"], deadline=None, suppress_health_check=FIXTURES)
@given(query=QUERY)
def test_any_string_through_search_never_raises(seeded: Any, db_path: Path,
                                                query: str) -> None:
    import hippo
    from hippo.retrieve import echo_search

    h = hippo.open(db_path, embedder="hash")
    found = hippo.search(h, query, explain=True)
    assert all(0 <= r["score"] <= 1.5 for r in found.results)
    echo_search.search(h, query)
    h.close()


# -- add - ----------------------------------------------------------------------------------

FIELD_VALUES = {
    "text": st.text(max_size=60) | ODD_TEXT,
    "type": st.sampled_from(["fact", "rule", "task", "Rule", "nope", "", None, 3]),
    "tier": st.sampled_from(["semantic", "episodic", "x", None]),
    "project": st.none() | st.text(max_size=10),
    "tags": st.lists(st.text(max_size=8), max_size=4) | st.text(max_size=10) | st.integers(),
    "importance": SCALARS,
    "confidence": SCALARS,
    "author": st.sampled_from(["human", "machine", "robot", None]),
    "status": st.sampled_from(["active", "done", "deleted", "gone", None]),
    "pinned": SCALARS,
    "id": st.none() | st.integers(min_value=-2, max_value=2**64) | st.integers(1, 12),
    "consolidated_into": st.none() | st.integers(0, 15) | st.integers(2**62, 2**65),
    "superseded_by": st.none() | st.integers(0, 15),
    "created_at": st.none() | st.sampled_from(["2026-01-01", "yesterday", "2026-13-01", "1e9"]),
    "source": st.none() | st.dictionaries(st.text(max_size=5), SCALARS, max_size=2) | SCALARS,
    "bogus": SCALARS,
}
RECORD = st.fixed_dictionaries({"text": FIELD_VALUES["text"]}, optional={
    k: v for k, v in FIELD_VALUES.items() if k != "text"})
STDIN_LINE = (RECORD.map(lambda r: dumps(r).encode("utf-8", "surrogatepass"))
              | JSON.map(lambda v: dumps(v).encode("utf-8", "surrogatepass"))
              | st.binary(max_size=60))


def check_add(cli: Any, data: bytes) -> None:
    before = {r["id"]: r for r in cli("export").records}
    r = cli("add", "--json", "-", input=data)
    assert r.exit_code in (0, 1, 2, 3), r.stderr
    err = [x for x in r.stderr.splitlines() if x.strip()]
    assert all(x.startswith("hippo: ") for x in err), err
    after = {x["id"]: x for x in cli("export").records}
    new = {i: x for i, x in after.items() if i not in before}
    out = r.records
    if r.exit_code in (1, 2):
        assert out == [] and after == before and len(err) == 1  # nothing stored at all
        return
    assert (r.exit_code == 3) == bool(err)
    if err:
        assert err[-1] == f"hippo: stored {len(out)}, skipped {len(err) - 1} bad lines"
    added = [x for x in out if x["action"] == "added"]
    assert sorted(x["id"] for x in added) == sorted(new)  # each reported add is a whole row
    for x in out:
        assert after[x["id"]]["text"] == x["text"]
    inputs = set()
    for line in data.splitlines():
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        text = obj.get("text") if isinstance(obj, dict) else obj
        if isinstance(text, str):
            inputs.add(text.strip())
    assert all(x["text"] in inputs for x in new.values())  # never a made-up or cut text


@settings(max_examples=EXAMPLES["add"], deadline=None, suppress_health_check=FIXTURES)
@given(lines=st.lists(STDIN_LINE, max_size=6), crlf=st.booleans())
def test_add_stdin_never_crashes_or_half_stores(cli, lines: list[bytes], crlf: bool) -> None:
    check_add(cli, (b"\r\n" if crlf else b"\n").join(lines))


# -- the corpus of worst cases --------------------------------------------------------------

def corpus(kind: str) -> list[Path]:
    return sorted((CORPUS / kind).iterdir())


@pytest.mark.parametrize("path", corpus("readers"), ids=lambda p: p.name)
def test_corpus_readers(path: Path) -> None:
    check_read(path)


@pytest.mark.parametrize("path", corpus("add"), ids=lambda p: p.name)
def test_corpus_add(cli, path: Path) -> None:
    check_add(cli, path.read_bytes())


def test_corpus_queries(seeded: Any, db_path: Path) -> None:
    import hippo
    from hippo.retrieve import echo_search

    h = hippo.open(db_path, embedder="hash")
    for query in json.loads((CORPUS / "queries.json").read_text()):
        hippo.search(h, query, explain=True)
        echo_search.search(h, query)
    h.close()
