"""Late interaction with the real local model: what is cached when, and what a search loads.

`hippo add` caches each memory's ternary token matrix in the same model pass as its
vector; a new query runs the model once for its vector and its token matrix (cached
without its token ids: docs/privacy.md); a repeated query loads neither numpy nor
onnxruntime and ranks exactly as the first time.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

import hippo
from hippo.memory.records import from_input
from hippo.retrieve.params import SearchParams
from hippo.retrieve.tokencache import QUERY_SUFFIX, TOKENS_SUFFIX
from hippo.retrieve.tokenmatrix import TokenMatrix
from tests.conftest import BACKEND

MODEL = "all-MiniLM-L6-v2-int8"
NOTES = [
    "The deploy script needs AWS_PROFILE=prod and runs from a clean tree.",
    "Postgres backups run nightly at 02:00 UTC and are kept for 30 days.",
    "We pinned typer below 0.29 because 0.29 imports pydantic at start-up.",
    "The staging cluster rotates its credentials every ninety days.",
    "Dana owns the quarterly budget review.",
]
# Prints the search's JSON lines, then which of the heavy modules the process imported.
PROBE = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('LOADED ' + ' '.join("
         "m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules) + '\\n')); "
         "from hippo.cli.main import main; main()")


class Raw:
    """A plain connection to the test's store, for what a test sets up or reads behind
    hippo's back: the SQLite file through apsw, or the server through psycopg (there `?`
    is `%s` and a blob literal x'..' is bytea)."""

    def __init__(self, db_path: Path | str) -> None:
        self.pg = BACKEND == "postgres"
        if self.pg:
            import psycopg

            self.conn: Any = psycopg.connect(str(db_path), autocommit=True)
        else:
            self.conn = apsw.Connection(str(db_path))

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        if self.pg:
            sql = re.sub(r"x'([0-9a-fA-F]*)'", r"'\\x\1'::bytea", sql).replace("?", "%s")
            return self.conn.execute(sql, params or None)
        return self.conn.execute(sql, params)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self.conn.transaction() if self.pg else self.conn:
            yield

    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Hold the store's write lock (as a writer in the middle of a batch does)."""
        if self.pg:
            from hippo.store.postgres.database import WRITER_CLASS

            lock = "SELECT pg_advisory_{}lock(%s, hashtext(current_schema()))"
            self.conn.execute(lock.format(""), (WRITER_CLASS,))
            try:
                yield
            finally:
                self.conn.execute(lock.format("un"), (WRITER_CLASS,))
        else:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            finally:
                self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.conn.close()


def counters(db_path: Path) -> dict[str, int]:
    conn = Raw(str(db_path))
    try:
        return dict(conn.execute("SELECT name, value FROM counters"))
    finally:
        conn.close()


def cached(db_path: Path, model: str) -> int:
    conn = Raw(str(db_path))
    try:
        return conn.execute("SELECT count(*) FROM embed_cache WHERE model = ?",
                            (model,)).fetchone()[0]
    finally:
        conn.close()


def ingest(cli, tmp_path: Path, records: list[dict[str, object]]) -> int:
    """`records` as one generic JSONL transcript through `hippo ingest` with the local
    model; the number of chunks it stored."""
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "s1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in records),
                                     encoding="utf-8")
    r = cli("ingest", str(folder), "--idle-minutes", "0", "--format", "generic-jsonl",
            embedder="local")
    assert r.exit_code == 0, r.stderr
    return int(r.records[-1]["chunks"])


def user_lines(texts: list[str]) -> list[dict[str, object]]:
    return [{"role": "user", "content": t} for t in texts]


@pytest.fixture
def local_db(db_path: Path) -> Path:
    h = hippo.open(db_path, embedder="local")
    h.add([from_input({"text": t}, h.types, default_project="proj") for t in NOTES])
    h.close()
    return db_path


def search(db_path: Path, query: str) -> tuple[list[dict[str, object]], str]:
    out = subprocess.run([sys.executable, "-c", PROBE, "--db", str(db_path), "search",
                          "--json", "--explain", "--all-projects", "--", query],
                         capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()], out.stderr.splitlines()[-1]


def test_add_caches_token_matrices_in_the_same_model_pass(local_db: Path) -> None:
    assert cached(local_db, MODEL) == len(NOTES)
    assert cached(local_db, MODEL + TOKENS_SUFFIX) == len(NOTES)
    c = counters(local_db)
    assert c["embed.model_calls"] == 1  # one batch, one pass for vectors and tokens
    assert c["embed.texts_embedded"] == len(NOTES)


def test_new_query_runs_the_model_once_and_a_repeat_loads_no_model(local_db: Path) -> None:
    before = counters(local_db)["embed.model_calls"]
    first, loaded = search(local_db, "when do the database backups run?")
    assert "onnxruntime" in loaded
    assert counters(local_db)["embed.model_calls"] == before + 1
    # The query's vector and token matrix were cached; no candidate needed the model.
    assert cached(local_db, MODEL) == len(NOTES) + 1
    assert cached(local_db, MODEL + TOKENS_SUFFIX) == len(NOTES)
    assert cached(local_db, MODEL + QUERY_SUFFIX) == 1
    conn = Raw(str(local_db))
    (blob,) = conn.execute("SELECT vector FROM embed_cache WHERE model = ?",
                           (MODEL + QUERY_SUFFIX,)).fetchone()
    conn.close()
    stored = TokenMatrix.from_blob(bytes(blob))  # masked: not the ids that spell it
    from hippo.embed.wordpiece import encode
    spelled = set(encode("when do the database backups run?", 256).ids)
    assert not spelled & set(stored.ids)
    assert first[0]["text"] == NOTES[1]
    assert all("late" in r["explain"] for r in first)

    again, loaded = search(local_db, "when do the database backups run?")
    assert loaded.strip() == "LOADED", loaded  # neither numpy, nor onnxruntime, nor tokenizers
    assert counters(local_db)["embed.model_calls"] == before + 1
    assert [(r["id"], r["explain"]["late"]) for r in again] == \
           [(r["id"], r["explain"]["late"]) for r in first]
    # Scores move only with the clock (freshness).
    assert [r["score"] for r in again] == pytest.approx([r["score"] for r in first], abs=1e-6)


def test_score_says_when_nothing_stored_matches_and_keeps_the_order(local_db: Path) -> None:
    """`score` is the final score times the query's match factor: a question about
    something stored keeps the SPEC blend (factor 1), one about nothing stored scores 0
    although some memory still ranks first with a final score near 0.95."""
    found, _ = search(local_db, "when do the database backups run?")
    for r in found:
        m = r["explain"]["match"]
        assert m["best_late"] > 0.4 and m["factor"] == 1.0 and m["by"] == "late"
        assert r["score"] == r["explain"]["final"]

    junk, _ = search(local_db, "quantum chromodynamics on a lattice")
    assert len(junk) == len(NOTES)  # still answered, in the same order as before
    finals = [r["explain"]["final"] for r in junk]
    assert finals == sorted(finals, reverse=True) and finals[0] > 0.9
    for r in junk:
        m = r["explain"]["match"]
        assert m["best_late"] < 0.2 and m["factor"] == 0.0 and m["by"] == "late"
        assert r["score"] == 0.0

    # A weak match scales every score by the same factor, so the order holds.
    h = hippo.open(local_db, embedder="local")
    try:
        res = hippo.search(h, "quantum chromodynamics on a lattice", explain=True,
                           projects=None, params=SearchParams(match_floor=0.0, match_full=0.4))
    finally:
        h.close()
    factor = res.results[0]["explain"]["match"]["factor"]
    assert 0.0 < factor < 1.0
    assert [r["score"] for r in res.results] == \
           pytest.approx([factor * f for f in finals], abs=1e-6)
    assert [r["id"] for r in res.results] == [r["id"] for r in junk]


def test_a_memory_from_a_date_the_query_names_is_a_match(local_db: Path) -> None:
    h = hippo.open(local_db, embedder="local")
    try:
        (dated,) = h.add([from_input({"text": "Rotated the office wifi password",
                                      "created_at": "2023-05-07T10:00:00Z"}, h.types,
                                     default_project="proj")])
        res = hippo.search(h, "what happened on 7 May 2023", limit=10, explain=True,
                           projects=None)
    finally:
        h.close()
    mine = [r for r in res.results if r["id"] == dated.record["id"]]
    assert mine and mine[0]["explain"]["date"] > 0  # found through its date, not its words
    # Three years old, but the query asks about its day: not stale for this query.
    assert mine[0]["explain"]["freshness"]["value"] == 1.0
    assert mine[0]["explain"]["freshness"]["age_days"] > 900
    for r in res.results:
        assert r["explain"]["match"]["by"] == "date" and r["explain"]["match"]["factor"] == 1
        assert r["score"] == r["explain"]["final"]


def test_busy_database_still_gets_vector_results_for_a_new_query(
        local_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Another writer holds the lock: the query's vector cannot be cached, but it is used.
    blocker = Raw(str(local_db))
    try:
        with blocker.writer_lock():
            monkeypatch.setenv("HIPPO_BUSY_TIMEOUT_MS", "50")
            h = hippo.open(local_db)
            res = hippo.search(h, "who rotates the credentials of the staging cluster?",
                               projects=None, explain=True)
            h.close()
    finally:
        blocker.close()
    assert res.results[0]["text"] == NOTES[3]
    assert not [d for d in res.degraded if d.startswith("embedder")], res.degraded
    assert res.results[0]["explain"]["vector"] is not None
    assert "late" in res.results[0]["explain"]
    assert cached(local_db, MODEL) == len(NOTES)  # nothing was written


@pytest.mark.sqlite_only(reason="upgrades a hippo 0.1 SQLite file (its 0003 step); no "
                         "Postgres store ever held int8 token matrices")
def test_int8_token_matrices_of_hippo_0_1_are_dropped_on_upgrade(local_db: Path) -> None:
    conn = Raw(str(local_db))
    conn.execute("INSERT INTO embed_cache(model, content_hash, vector, created_at) "
                 "VALUES (?, 'abc', x'00', '2026-01-01T00:00:00.000Z')", (MODEL + "#tokens",))
    conn.execute("DELETE FROM _migrations WHERE name = '0003_ternary_tokens'")
    conn.close()
    h = hippo.open(local_db)
    assert h.db.scalar("SELECT count(*) FROM _migrations WHERE name = '0003_ternary_tokens'")
    h.close()
    assert cached(local_db, MODEL + "#tokens") == 0
    assert cached(local_db, MODEL + TOKENS_SUFFIX) == len(NOTES)


def test_echo_encodes_only_a_new_query(cli, db_path: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingest caches every chunk's token matrix in the pass that embeds it, so a search
    runs the model for the new query alone (no candidate is encoded at search time)."""
    from hippo.embed.local import LocalEmbedder
    from hippo.retrieve.echo_search import search as echo_search

    chunks = ingest(cli, tmp_path, [
        {"session_id": "s1", "cwd": "/home/dev/alpha", "id": f"m{i}",
         "role": "user" if i % 2 == 0 else "assistant", "content": text,
         "timestamp": f"2026-03-02T10:00:{i:02d}Z"} for i, text in enumerate(NOTES)])
    assert chunks >= 1
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == cached(db_path, MODEL) == chunks
    assert counters(db_path)["embed.model_calls"] == 1  # one pass: vectors and tokens

    calls: list[list[str]] = []
    forward = LocalEmbedder.forward

    def counting(self, texts, **kw):  # type: ignore[no-untyped-def]
        calls.append(list(texts))
        return forward(self, texts, **kw)

    monkeypatch.setattr(LocalEmbedder, "forward", counting)
    query = "when do the database backups run?"
    h = hippo.open(db_path)
    first = echo_search(h, query)
    assert calls == [[query]]  # vector and tokens, one pass; every candidate was cached
    assert first.results and "Postgres backups" in first.results[0]["text"]
    calls.clear()
    echo_search(h, query)
    h.close()
    assert calls == []  # query and candidates all cached now


def test_hard_forget_erases_the_token_matrix_too(local_db: Path) -> None:
    # A token matrix stores the text's token ids: the text could be read back from it.
    from hippo.embed.cache import content_hash

    h = hippo.open(local_db)
    target = next(r for r in h.db.rows("SELECT id, text FROM memories") if r["text"] == NOTES[0])
    h.close()
    assert cached(local_db, MODEL + TOKENS_SUFFIX) == len(NOTES)
    r = subprocess.run([sys.executable, "-m", "hippo", "--db", str(local_db), "forget",
                        "--hard", str(target["id"])], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0, r.stderr
    conn = Raw(str(local_db))
    try:
        left = conn.execute("SELECT model FROM embed_cache WHERE content_hash = ?",
                            (content_hash(NOTES[0]),)).fetchall()
    finally:
        conn.close()
    assert left == []
    assert cached(local_db, MODEL + TOKENS_SUFFIX) == len(NOTES) - 1


def test_a_damaged_token_matrix_is_encoded_again(local_db: Path) -> None:
    conn = Raw(str(local_db))
    conn.execute("UPDATE embed_cache SET vector = x'0100000080010000' WHERE model = ?",
                 (MODEL + TOKENS_SUFFIX,))  # a header that promises a row that is not there
    conn.close()
    h = hippo.open(local_db)
    res = hippo.search(h, "who rotates the credentials of the staging cluster?", projects=None,
                       explain=True)
    h.close()
    assert res.degraded == []
    assert res.results[0]["text"] == NOTES[3]
    assert "late" in res.results[0]["explain"]
    # ... and written back whole: the next search finds it cached.

    conn = Raw(str(local_db))
    try:
        blobs = [b for (b,) in conn.execute("SELECT vector FROM embed_cache WHERE model = ?",
                                            (MODEL + TOKENS_SUFFIX,))]
    finally:
        conn.close()
    repaired = 0
    for b in blobs:
        try:
            TokenMatrix.from_blob(bytes(b))
            repaired += 1
        except ValueError:
            pass
    assert repaired == len(blobs) == len(NOTES)  # the five memories (the query: no ids)


def test_late_interaction_off_stores_no_token_matrices(cli, db_path: Path, tmp_path: Path,
                                                       isolated_home: Path) -> None:
    """`late_pool = 0` turns the stage off, and with it the token matrices a write would
    store (about 100 bytes a token): neither `add` nor `ingest` keeps one."""
    (isolated_home / "config.toml").write_text("[search]\nlate_pool = 0\n")
    assert cli("add", NOTES[0], embedder="local").exit_code == 0
    ingest(cli, tmp_path, user_lines([NOTES[1]]))
    assert cached(db_path, MODEL) == 2
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == 0
    found = cli("echo", "when do the database backups run?", "--json", embedder="local")
    assert found.exit_code == 0 and "Postgres backups" in found.records[0]["text"]
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == 0  # not at search time either


def test_reindex_force_fills_the_token_matrices_an_old_archive_lacks(
        cli, db_path: Path, tmp_path: Path, isolated_home: Path) -> None:
    """Chunks ingested without token matrices (before they were cached at ingest, or with
    the stage off) get them from `reindex --store echo --force`, vectors unchanged."""
    config = isolated_home / "config.toml"
    config.write_text("[search]\nlate_pool = 0\n")
    chunks = ingest(cli, tmp_path, user_lines(NOTES))
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == 0
    config.unlink()
    r = cli("reindex", "--store", "echo", "--embedder", "local", "--force", embedder=None)
    assert r.exit_code == 0, r.stderr
    assert r.records[-1]["result"] == "swapped"
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == cached(db_path, MODEL) == chunks
    assert counters(db_path)["embed.model_calls"] == 2  # ingest, then the tokens at reindex


def test_rows_written_while_reindex_runs_get_token_matrices_at_the_swap(
        cli, db_path: Path, tmp_path: Path, isolated_home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk written between reindex's last catch-up and its swap is embedded inside the
    swap's transaction; it gets its token matrix in that same model pass, as every other
    row does, instead of leaving it for a search to encode."""
    from hippo.maintain import reindex

    config = isolated_home / "config.toml"
    config.write_text("[search]\nlate_pool = 0\n")
    chunks = ingest(cli, tmp_path, user_lines(NOTES[:2]))
    config.unlink()
    fill = reindex._fill

    def fill_then_another_writer(db, t, emb, todo, batch, settings):  # type: ignore[no-untyped-def]
        fill(db, t, emb, todo, batch, settings)
        # Another command's chunk lands now, stored without a token matrix (late_pool = 0
        # there), after the side table was filled.
        config.write_text("[search]\nlate_pool = 0\n")
        folder = tmp_path / "late"
        folder.mkdir()
        (folder / "s2.jsonl").write_text(json.dumps(user_lines([NOTES[3]])[0]) + "\n")
        r = cli("ingest", str(folder), "--idle-minutes", "0", "--format", "generic-jsonl",
                embedder="local")
        assert r.exit_code == 0 and r.records[-1]["chunks"] == 1, r.stderr
        config.unlink()

    monkeypatch.setattr(reindex, "_fill", fill_then_another_writer)
    r = cli("reindex", "--store", "echo", "--embedder", "local", "--force", embedder=None)
    assert r.exit_code == 0 and r.records[-1]["result"] == "swapped", r.stderr
    assert cached(db_path, MODEL) == chunks + 1
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == chunks + 1


def test_doctor_counts_missing_token_matrices_and_fix_encodes_them(
        cli, db_path: Path, tmp_path: Path, isolated_home: Path) -> None:
    """Chunks stored without token matrices are a note from `hippo doctor` (exit 0), and
    `--fix` encodes them once; memories are counted the same way."""
    config = isolated_home / "config.toml"
    config.write_text("[search]\nlate_pool = 0\n")
    assert cli("add", NOTES[0], embedder="local").exit_code == 0
    chunks = ingest(cli, tmp_path, user_lines(NOTES[1:]))

    def token_check(*args: str) -> tuple[int, dict[str, object]]:
        res = cli("doctor", *args, embedder=None)
        return res.exit_code, next(x for x in res.records if x["check"] == "token-matrices")

    assert token_check() == (0, {"event": "check", "check": "token-matrices", "ok": True})
    config.unlink()  # late interaction back on: the missing ones now matter
    code, check = token_check()
    assert code == 0 and check["ok"] is True
    assert chunks == 1  # four short messages make one chunk
    assert check["detail"] == ("1 transcript chunk and 1 memory without a cached "
                               "token matrix: a search encodes each one it meets; --fix "
                               "encodes them now")
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == 0
    code, check = token_check("--fix")
    assert code == 0 and check["fixed"] == f"encoded {chunks + 1}"
    assert cached(db_path, MODEL + TOKENS_SUFFIX) == chunks + 1
    assert token_check() == (0, {"event": "check", "check": "token-matrices", "ok": True})


def test_doctor_compacts_token_matrices_cached_with_repeats(cli, db_path: Path,
                                                            tmp_path: Path) -> None:
    """A file created now holds only compact matrices (no note). One cached before near-copy
    tokens were dropped is a note (exit 0); `--fix` compacts it from the stored planes,
    without the model, to exactly what a write stores now, and search still finds it."""
    from hippo.retrieve.tokenmatrix import TokenMatrix
    from hippo.store.embed_cache import TOKENS_DISTINCT_KEY

    text = "run the tests, then run the tests again: the tests decide, the tests always decide"
    chunks = ingest(cli, tmp_path, user_lines([text]))

    def repeats(*args: str) -> tuple[int, dict[str, object]]:
        res = cli("doctor", *args, embedder=None)
        return res.exit_code, next(x for x in res.records if x["check"] == "token-repeats")

    assert repeats() == (0, {"event": "check", "check": "token-repeats", "ok": True})
    conn = Raw(str(db_path))
    model = MODEL + TOKENS_SUFFIX
    (compact,) = [bytes(b) for (b,) in conn.execute(
        "SELECT vector FROM embed_cache WHERE model = ?", (model,))]
    # As hippo before December 2026 left it: every repeat stored, and no marker.
    (stored,) = [t for (t,) in conn.execute("SELECT text FROM echo_chunks")]
    h = hippo.open(db_path, embedder="local")
    _, [(ids, vecs, words)] = h.embedder("echo").forward([stored])
    h.close()
    full = TokenMatrix.from_vectors(ids, vecs, words, distinct=2.0).to_blob()
    assert len(full) > len(compact)
    with conn.transaction():
        conn.execute("UPDATE embed_cache SET vector = ? WHERE model = ?", (full, model))
        conn.execute("DELETE FROM meta WHERE key = ?", (TOKENS_DISTINCT_KEY,))
        conn.execute("INSERT INTO embed_cache VALUES (?, 'damaged', x'0102', '2026-01-01')",
                     (model,))  # too short to parse: left for a search to replace
    conn.close()

    code, check = repeats()
    assert code == 0 and check["ok"] is True and check["detail"].startswith(
        "2 token matrices cached before December 2026 may keep near-copies")
    code, check = repeats("--fix")
    assert code == 0 and check["fixed"].startswith("compacted 1 of 2 (")
    conn = Raw(str(db_path))
    assert conn.execute("SELECT vector FROM embed_cache WHERE model = ? AND content_hash "
                        "<> 'damaged'", (model,)).fetchone()[0] == compact
    conn.close()
    assert repeats() == (0, {"event": "check", "check": "token-repeats", "ok": True})
    r = cli("echo", "--json", "do the tests decide", embedder="local")
    assert r.exit_code == 0 and chunks == 1 and text in r.records[0]["text"]
