"""`hippo echo` ranking with BM25 after the vector scan and beside it (second connection):
the same results, and the same degradations when a retriever is down. (PostgreSQL has no
second connection: its BM25 runs after the scan both times, with the same results.)"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import hippo
from hippo.retrieve import echo_search

TURNS = [
    ("user", "The staging deploy fails with ERR_SSL_PROTOCOL_ERROR behind the proxy"),
    ("assistant", "Set NODE_EXTRA_CA_CERTS to the corporate CA bundle and retry the deploy."),
    ("user", "Caroline's laptop still runs Fedora 41, is that a problem?"),
    ("assistant", "No, Fedora 41 is fine; pin the node version in .nvmrc instead."),
    ("user", "Never use git commit --no-verify on main"),
    ("assistant", "Noted: hooks always run on main."),
]
QUERIES = ["ERR_SSL_PROTOCOL_ERROR deploy", "Caroline's laptop", "--no-verify", "CA bundle",
           "🙂", "zzzz qqqq"]


@pytest.fixture
def transcripts(cli, tmp_path: Path) -> Path:
    src = tmp_path / "chat.jsonl"
    src.write_bytes(b"".join(orjson.dumps({"role": r, "content": t}) + b"\n" for r, t in TURNS))
    r = cli("ingest", str(src), "--idle-minutes", "0", "--format", "generic-jsonl")
    assert r.exit_code == 0, r.stderr
    return src


def run_all(db_path: Path, monkeypatch: pytest.MonkeyPatch, min_rows: int) -> list:
    monkeypatch.setattr(echo_search, "PARALLEL_MIN_ROWS", min_rows)
    h = hippo.open(db_path, embedder="hash")
    try:
        out = []
        for q in QUERIES:
            res = echo_search.search(h, q, limit=3)
            out.append(([(r["id"], r["score"], r["ranks"]) for r in res.results], res.degraded))
        if isinstance(db_path, Path):  # SQLite: BM25 ran on a second connection, or not
            assert (h.db._reader is not None) is (min_rows == 0)  # type: ignore[attr-defined]
        return out
    finally:
        h.close()


def test_bm25_beside_the_scan_ranks_the_same(transcripts, db_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    after = run_all(db_path, monkeypatch, 10**9)
    beside = run_all(db_path, monkeypatch, 0)
    assert beside == after
    first = after[0][0]
    assert first and "bm25" in first[0][2]  # the identifier is found lexically
    assert after[4][1] == ["fts: no searchable words in the query (vector results only)"]


@pytest.mark.parametrize("min_rows", [10**9, 0], ids=["after", "beside"])
def test_fts_down_is_vector_only_either_way(transcripts, db_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            min_rows: int) -> None:
    h = hippo.open(db_path, embedder="hash")
    # SQLite's full-text index is a table; PostgreSQL's the chunks' tsvector column.
    h.db.execute("DROP TABLE echo_fts" if isinstance(db_path, Path)
                 else "ALTER TABLE echo_chunks DROP COLUMN tsv")
    h.close()
    out = run_all(db_path, monkeypatch, min_rows)
    results, degraded = out[0]
    assert results and all("bm25" not in ranks for _, _, ranks in results)
    assert len(degraded) == 1 and degraded[0].startswith("fts: full-text index unavailable (")


def test_a_session_neighbour_is_a_result_only_inside_the_filters(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Late interaction (the local model) adds each candidate's session neighbours; with
    `--role user` or `--until` a neighbour outside them is no result."""
    monkeypatch.setattr("hippo.ingest.run.CHUNK_TOKENS", 24)  # a turn a chunk
    src = tmp_path / "chat.jsonl"
    src.write_bytes(b"".join(orjson.dumps(
        {"role": r, "content": t, "timestamp": f"2026-04-0{i + 1}T10:00:00Z"}) + b"\n"
        for i, (r, t) in enumerate(TURNS)))
    r = cli("ingest", str(src), "--idle-minutes", "0", "--format", "generic-jsonl",
            embedder="local")
    assert r.exit_code == 0, r.stderr
    every = cli("echo", "staging deploy CA bundle", "--all-projects", "--limit", "6",
                embedder="local").records
    assert any("user" not in x["roles"] for x in every)  # the neighbours are there unfiltered
    users = cli("echo", "staging deploy CA bundle", "--all-projects", "--limit", "6",
                "--role", "user", embedder="local").records
    assert users and all("user" in x["roles"] for x in users), users
    early = cli("echo", "staging deploy CA bundle", "--all-projects", "--limit", "6",
                "--until", "2026-04-02T12:00:00Z", embedder="local").records
    assert early and all(x["started_at"] <= "2026-04-02T12:00:00Z" for x in early), early
