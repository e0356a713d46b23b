"""Search keeps answering when a part is down, says so, and never embeds a query twice."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import hippo
from hippo.core import Hippo
from hippo.embed.hashed import HashEmbedder
from hippo.errors import ConfigError, ProviderError
from hippo.memory.records import from_input
from hippo.retrieve import pipeline, vec
from hippo.retrieve.pipeline import search
from hippo.store.filters import MemoryFilter
from hippo.store.lexical import Terms
from tests.conftest import BACKEND

# What takes the full-text index away: FTS5's table, or Postgres's generated column.
DROP_FTS = {"sqlite": "DROP TABLE memories_fts",
            "postgres": "ALTER TABLE memories DROP COLUMN tsv"}[BACKEND]
COUNTER = {"sqlite": "SELECT value FROM counters WHERE name = ?",
           "postgres": "SELECT value FROM counters WHERE name = ?"}[BACKEND]


@pytest.fixture(autouse=True, params=["bm25 after the scan", "bm25 beside the scan"])
def bm25_thread(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Every test twice: BM25 on the search's connection, and in a thread on a second one."""
    beside = request.param == "bm25 beside the scan"
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_ROWS", 0 if beside else 10**9)
    return beside


@pytest.fixture
def h(db_path: Path) -> Hippo:
    h = hippo.open(db_path, embedder="hash")
    texts = ["The deploy key lives in the ops vault", "Deploys happen on Fridays",
             "The office plant needs water on Mondays"]
    h.add([from_input({"text": t}, h.types, default_project="testproj") for t in texts])
    return h


def counter(h: Hippo, name: str) -> int:
    return int(h.db.scalar(COUNTER, (name,)) or 0)


def fail(*_args: object, **_kwargs: object) -> None:
    raise ProviderError("embedding server down (connection refused)")


def test_repeated_query_costs_no_model_call(h: Hippo, monkeypatch: pytest.MonkeyPatch) -> None:
    calls, hits = counter(h, "embed.model_calls"), counter(h, "embed.cache_hits")
    now = datetime(2027, 1, 1, tzinfo=UTC)
    first = search(h, "where is the deploy key", now=now)
    assert counter(h, "embed.model_calls") == calls + 1
    monkeypatch.setattr(HashEmbedder, "embed_batch", fail)  # a model call would now fail
    again = hippo.open(h.settings.database, embedder="hash")  # a new process, in effect
    second = search(again, "where is the deploy key", now=now)
    assert second.results == first.results and second.degraded == []
    assert counter(again, "embed.model_calls") == calls + 1
    assert counter(again, "embed.cache_hits") == hits + 1


def test_embedder_down_gives_lexical_results(h: Hippo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(HashEmbedder, "embed_batch", fail)
    res = search(h, "deploy key vault", explain=True)
    assert res.degraded == [
        "embedder: embedding server down (connection refused) (lexical results only)"]
    top = res.results[0]
    assert top["text"] == "The deploy key lives in the ops vault"
    assert top["degraded"] == res.degraded
    assert top["explain"]["vector"] is None and top["explain"]["bm25"]["rank"] == 1
    # Only BM25 ran, so its first hit reaches the full fused score.
    assert top["explain"]["fused"]["score"] == 1.0
    assert all(r["explain"]["bm25"] is not None for r in res)


def test_embedder_that_cannot_start_is_a_degradation(h: Hippo,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def no_key(self: Hippo, store: str = "brain") -> None:
        raise ConfigError("OPENAI_API_KEY is not set; export it or choose --embedder local")

    monkeypatch.setattr(Hippo, "embedder", no_key)
    res = search(h, "deploys")
    assert res.degraded[0].startswith("embedder: OPENAI_API_KEY is not set")
    # Lexical only (porter stems deploys/deploy): the plant memory is not a candidate.
    assert {r["text"] for r in res} == {"Deploys happen on Fridays",
                                        "The deploy key lives in the ops vault"}


def test_model_mismatch_is_still_a_config_error(h: Hippo) -> None:
    other = hippo.open(h.settings.database, embedder="local")
    with pytest.raises(ConfigError, match="holds vectors of hash-bow-v1") as err:
        search(other, "deploys")
    assert err.value.exit_code == 78


def test_fts_unavailable_gives_vector_results(h: Hippo) -> None:
    h.db.execute(DROP_FTS)
    res = search(h, "deploy key vault", explain=True)
    assert len(res.degraded) == 1
    assert res.degraded[0].startswith("fts: full-text index unavailable (")
    assert res.degraded[0].endswith("(vector results only)")
    assert res.results[0]["text"] == "The deploy key lives in the ops vault"
    assert res.results[0]["explain"]["fused"]["score"] == 1.0  # vector alone is the maximum
    assert all(r["explain"]["bm25"] is None for r in res)


def test_no_searchable_words_is_vector_only(h: Hippo) -> None:
    res = search(h, "🙂 … ???")
    assert res.degraded == ["fts: no searchable words in the query (vector results only)"]
    assert len(res) == 3


def test_both_down_is_no_results_but_reasons(h: Hippo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(HashEmbedder, "embed_batch", fail)
    res = search(h, "!!!")
    assert res.results == [] and len(res.degraded) == 2


def test_cached_query_never_builds_the_onnx_session(db_path: Path) -> None:
    h = hippo.open(db_path, embedder="local")
    h.add([from_input({"text": "The VPN config is in the team wiki"}, h.types,
                      default_project="testproj")])
    assert search(h, "vpn config").results
    fresh = hippo.open(db_path)  # default embedder: the one the store was built with
    assert [r["text"] for r in search(fresh, "vpn config")] == ["The VPN config is in the team wiki"]
    emb = fresh.embedder("brain")
    assert emb.name == "local" and "_session" not in emb.__dict__


def test_vec0_and_exact_scan_agree_under_every_filter(h: Hippo) -> None:
    import random

    from hippo.memory import brain

    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    mems = [from_input({"text": " ".join(rng.sample(words, 4)) + f" {i}",
                        "type": rng.choice(["fact", "task", "rule"]),
                        "project": rng.choice(["testproj", "other", None]),
                        "tags": rng.sample(["a", "b", "c"], rng.randint(0, 2)),
                        "created_at": f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T"
                                      f"10:00:0{rng.randint(0, 9)}.{rng.randint(100, 999)}Z"},
                       h.types, default_project=None) for i in range(300)]
    h.add(mems)
    import numpy as np

    # Random unit vectors: distinct distances, so both orders are fully determined.
    gen = np.random.default_rng(7)
    with h.db.transaction():
        for mid in range(10, 300, 7):
            brain.update(h.db, mid, {"superseded_by": mid + 1}, actor="human", action="s")
        for mid in range(1, 301):
            v = gen.standard_normal(384)
            brain.vec_put(h.db, mid, brain.get(h.db, mid), v / np.linalg.norm(v))
    q = gen.standard_normal(384)
    query = (q / np.linalg.norm(q)).astype("<f4").tobytes()
    cases = [MemoryFilter.search(), MemoryFilter.search(projects=("testproj", None)), MemoryFilter.search(types=("task",)),
             MemoryFilter.search(tiers=("procedural",), projects=("other",)),
             MemoryFilter.search(since="2026-05-12T10:00:05.000Z", until="2026-08-15T10:00:03.500Z"),
             MemoryFilter.search(include_superseded=True, types=("rule", "fact")),
             MemoryFilter.search(projects=(None,), since="2026-03-01T00:00:00.000Z")]
    for f in cases:
        for k in (1, 5, 30):
            fast = h.db.vectors._knn(query, k, f)
            assert fast is not None
            exact = h.db.vectors._exact(query, k, f)
            assert [x.id for x in fast] == [x.id for x in exact], f
            assert [x.distance for x in fast] == pytest.approx([x.distance for x in exact],
                                                               abs=1e-6)
    tagged = vec.search(h.db, query, 30, MemoryFilter.search(tags=("a", "b")))
    rows = {r["id"]: r for r in h.db.rows("SELECT id, tags, superseded_by FROM memories")}
    assert tagged and all('"a"' in rows[x.id]["tags"] and '"b"' in rows[x.id]["tags"]
                          and rows[x.id]["superseded_by"] is None for x in tagged)


@pytest.mark.sqlite_only(reason="FTS5's index-only ranking checked against its joined query; "
                         "Postgres ranks in one query (test_bm25_on_postgres_is_fts5s)")
def test_fts_index_ranking_then_filters_equals_the_joined_query(h: Hippo) -> None:
    from hippo.memory import brain
    from hippo.store.clauses import where as where_sql
    from hippo.store.sqlite.lexical import MATCH

    words = ["backup", "restore", "replica", "vacuum", "index", "snapshot"]
    h.add([from_input({"text": f"{words[i % 6]} {words[(i * 7) % 6]} note {i}",
                       "project": ["testproj", "other", None][i % 3],
                       "type": ["fact", "task"][i % 2]}, h.types, default_project=None)
           for i in range(400)])
    with h.db.transaction():
        for mid in range(5, 400, 9):
            brain.update(h.db, mid, {"superseded_by": mid + 1}, actor="human", action="s")
    search = MemoryFilter.search
    for f in (search(), search(projects=("testproj", None)), search(types=("task",)),
              search(projects=("other",), types=("fact",)), search(tags=("none",))):
        for expr in ('"backup"', '"backup" OR "vacuum"', '"note"'):
            for k in (1, 7, 30):
                where, params = where_sql(h.db.dialect, f)
                joined = [(r["id"], -r["score"]) for r in h.db.rows(
                    MATCH.format(where=where), [expr, *params, k])]
                got = [(x.id, x.score) for x in h.db.lexical._ranked(expr, k, where, params)]
                assert got == joined, (f, expr, k)


def test_cached_search_does_not_wait_behind_a_writer(db_path: Path, h: Hippo,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached search writes only a counter, and does not wait for the write lock to do
    it. Checked without a clock: the busy timeout is ten minutes, and the writer gives
    its lock up on its own only after 20 s. Had the search waited, it would have counted
    its cache hit once the lock was free; it did not count it, so it did not wait."""
    import threading

    from hippo.store import connect

    first = search(h, "deploy key")
    monkeypatch.setenv("HIPPO_BUSY_TIMEOUT_MS", "600000")
    patient = hippo.open(db_path, embedder="hash")
    hits = counter(patient, "embed.cache_hits")
    locked, done = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        writer = connect(db_path)
        with writer.transaction():  # e.g. an ingest job in the middle of a batch
            locked.set()
            done.wait(20)
        writer.close()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        assert locked.wait(10)
        again = search(patient, "deploy key")
        counted = counter(patient, "embed.cache_hits")  # a read: WAL readers never wait
    finally:
        done.set()
        holder.join()
    assert [r["id"] for r in again] == [r["id"] for r in first] and again.degraded == []
    assert counted == hits  # the hit went uncounted: the search did not wait for the lock
    search(patient, "deploy key")  # with the lock free, the hit is counted
    assert counter(patient, "embed.cache_hits") == hits + 1


@pytest.mark.postgres_only(reason="compares Postgres's BM25 with FTS5's on the same memories")
def test_bm25_on_postgres_is_fts5s(db_path: Path, tmp_path: Path) -> None:
    """The same memories in a SQLite file and on the server: every query ranks the same
    rows in the same order with the same BM25 scores (FTS5's formula from stored stats)."""
    import random

    from hippo.memory import brain

    rng = random.Random(11)
    words = ["backup", "restore", "replica", "vacuums", "vacuum", "indexing", "snapshot",
             "deploy", "deploys", "key", "vault", "the", "a", "of"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 30))) + f" note {i}"
             for i in range(240)]
    texts += ["see src/app.py for the app", "app py src", "ERR_SSL_PROTOCOL_ERROR again",
              "ssl protocol error err", "Caroline's café, naïve 3.14 x@y.com foo-bar"]
    h = hippo.open(db_path, embedder="hash")
    sqlite_h = hippo.open(tmp_path / "fts5.db", embedder="hash")
    for store in (h, sqlite_h):
        store.add([from_input({"text": t, "project": ["testproj", "other", None][i % 3],
                               "type": ["fact", "task"][i % 2],
                               "tags": [["backup"], [], ["ops", "key"]][i % 3]},
                              store.types, default_project=None)
                   for i, t in enumerate(texts)])
        with store.db.transaction():
            for mid in range(5, 240, 9):
                brain.update(store.db, mid, {"superseded_by": mid + 1}, actor="human",
                             action="s")
    queries = [Terms(("backup",)), Terms(("backup", "vacuum"), "or"), Terms(("note",)),
               Terms(("deploy", "key")), Terms(("vacuums", "snapshot", "the"), "or"),
               Terms(("src app py",)), Terms(("ERR SSL PROTOCOL ERROR",)), Terms(("ssl",)),
               Terms(("Caroline", "cafe")), Terms(("café",)), Terms(("3 14",)),
               Terms(("foo bar", "ops"), "or"), Terms(("nothingatall",))]
    for f in (MemoryFilter.search(), MemoryFilter.search(projects=("testproj", None)), MemoryFilter.search(types=("task",)),
              MemoryFilter.search(include_superseded=True), MemoryFilter.search(tags=("ops",))):
        for terms in queries:
            for k in (1, 7, 300):
                want = sqlite_h.db.lexical.search(terms, k, f)
                got = h.db.lexical.search(terms, k, f)
                assert [x.id for x in got] == [x.id for x in want], (f, terms, k)
                assert [x.score for x in got] == pytest.approx([x.score for x in want],
                                                               rel=1e-9), (f, terms, k)
    # The statistics the triggers keep follow every insert, change and delete.
    h.db.execute("UPDATE memories SET text = ? WHERE id = ?", ("a much longer text " * 9, 242))
    h.db.execute("DELETE FROM memories WHERE id = ?", (243,))
    with h.db.transaction():
        h.db.execute("UPDATE memories SET tags = ? WHERE id < ?", ('["x", "y z"]', 30))
    kept = h.db.row("SELECT n, tokens FROM lexical_stats WHERE store = 'brain'")
    assert kept == h.db.row("SELECT count(*) AS n, sum(tsv_len) AS tokens FROM memories")
    sqlite_h.close()
    h.close()
