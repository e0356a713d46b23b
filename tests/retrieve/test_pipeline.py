"""The search pipeline end to end on tiny corpora: actual scores, hint, MMR, scope, filters.

The hash embedder is deterministic; scores are checked against the SPEC formulas.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import hippo
from hippo.core import Hippo
from hippo.errors import ConfigError, UsageError
from hippo.memory.records import from_input
from hippo.retrieve.params import SearchParams
from hippo.retrieve.pipeline import search
from tests.conftest import BACKEND

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).isoformat()


@pytest.fixture
def h(db_path: Path) -> Hippo:
    return hippo.open(db_path, embedder="hash")


def add(h: Hippo, text: str, project: str | None = "testproj", **fields: Any) -> int:
    mem = from_input({"text": text, "project": project, **fields}, h.types,
                     default_project="testproj")
    (change,) = h.add([mem])
    return int(change.record["id"])


def by_id(result: Any) -> dict[int, dict[str, Any]]:
    return {r["id"]: r for r in result.results}


def test_blend_scores_are_the_spec_formula(h: Hippo) -> None:
    a = add(h, "Rotate the signing keys before the audit", type="task", importance=0.8,
            created_at=ago(30))
    b = add(h, "Lunch menu has soup on Tuesdays", type="fact", importance=0.2,
            created_at=ago(365))
    res = search(h, "signing keys audit", explain=True, now=NOW)
    assert [r["id"] for r in res] == [a, b]
    ra, rb = by_id(res)[a], by_id(res)[b]
    # a: rank 1 in both retrievers → normalised RRF 1.0; a task 30 days old (τ 90).
    assert ra["explain"]["bm25"]["rank"] == 1 and ra["explain"]["vector"]["rank"] == 1
    assert ra["explain"]["fused"] == {"score": 1.0, "raw": pytest.approx(2 / 61, abs=1e-15)}
    assert ra["explain"]["freshness"]["value"] == pytest.approx(math.exp(-30 / 90), abs=1e-12)
    assert ra["score"] == pytest.approx(0.75 * 1.0 + 0.10 * 0.8 + 0.15 * math.exp(-1 / 3),
                                        abs=1e-12)
    assert ra["score"] == pytest.approx(0.9374796965860683, abs=1e-12)
    # b: no lexical match, vector rank 2 only → (1/62) / (2/61); a fact a year old (τ 365).
    assert rb["explain"]["bm25"] is None and rb["explain"]["vector"]["rank"] == 2
    assert rb["explain"]["fused"]["score"] == pytest.approx(61 / 124, abs=1e-15)
    assert rb["score"] == pytest.approx(0.75 * 61 / 124 + 0.02 + 0.15 * math.exp(-1), abs=1e-12)
    for r in res:
        e = r["explain"]
        assert e["final"] == r["score"] and e["relevance"] == e["fused"]["score"]
        assert e["importance"] == r["importance"] and e["rerank"] is None
        assert r["degraded"] == []
    # Without --explain: the same records and scores, no explain key.
    plain = search(h, "signing keys audit", now=NOW)
    assert [(r["id"], r["score"]) for r in plain] == [(a, ra["score"]), (b, rb["score"])]
    assert "explain" not in plain.results[0]
    assert list(plain.results[0])[-2:] == ["score", "degraded"]


def test_confirmation_refreshes_and_user_types_set_tau(db_path: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[types.incident]\ntau_days = 10\ntier = "episodic"\n')
    monkeypatch.setenv("HIPPO_CONFIG", str(cfg))
    h = hippo.open(db_path, embedder="hash")
    m = add(h, "Incident: the queue stalled", type="incident", created_at=ago(100),
            confirmed_at=ago(5))
    (r,) = search(h, "queue stalled", explain=True, now=NOW, params=SearchParams(mmr_k=1)
                  ).results
    assert r["id"] == m
    assert r["explain"]["freshness"] == {"value": pytest.approx(math.exp(-0.5), abs=1e-12),
                                         "age_days": pytest.approx(5.0), "tau_days": 10.0}


def test_task_hint_lifts_tasks_only(h: Hippo) -> None:
    task = add(h, "Renew the domain before it expires", type="task", created_at=ago(1))
    fact = add(h, "The domain is registered with Gandi", type="fact", created_at=ago(1))
    res = by_id(search(h, "next domain", explain=True, now=NOW))
    assert res[task]["explain"]["hint"] == 0.05
    assert res[fact]["explain"]["hint"] == 0.0
    e = res[task]["explain"]
    assert e["relevance"] == pytest.approx(min(1.0, e["fused"]["score"] + 0.05), abs=1e-15)
    no_hint = by_id(search(h, "domain", explain=True, now=NOW))
    assert no_hint[task]["explain"]["hint"] == 0.0


def test_mmr_keeps_one_copy_of_a_repeated_fact(h: Hippo) -> None:
    copies = [add(h, f"The staging database password rotates monthly (note {i})")
              for i in range(6)]
    others = [add(h, f"The staging database {job} job reads the password from the vault")
              for job in ("backup", "vacuum", "reindex", "snapshot", "audit", "export")]
    query = "staging database password"
    res = search(h, query, explain=True, limit=2, now=NOW)
    first, second = res.results
    assert first["id"] in copies and second["id"] in others
    # The second is scored with MMR's redundancy penalty: (1−λ)/λ · cosine to the first.
    e = second["explain"]
    sim = e["mmr"]["max_similarity"]
    assert 0.3 < sim < 0.7
    assert e["mmr"]["penalty"] == pytest.approx(0.35 / 0.65 * sim, abs=1e-12)
    assert e["relevance"] == pytest.approx(e["fused"]["score"] - e["mmr"]["penalty"], abs=1e-12)
    assert e["mmr"]["score"] == pytest.approx(0.65 * e["fused"]["score"] - 0.35 * sim, abs=1e-9)
    # Without the penalty in the score (MMR only picks the 10), the copies come back.
    literal = search(h, query, limit=2, now=NOW, params=SearchParams(mmr_penalty_weight=0.0))
    assert {r["id"] for r in literal} <= set(copies)


def test_pipeline_mmr_matches_numpy_mmr(h: Hippo) -> None:
    import numpy as np

    from hippo.embed.cache import from_blob
    from hippo.retrieve import vec
    from hippo.retrieve.mmr import mmr

    for i in range(8):
        add(h, f"release checklist item {i} covers {['tests', 'docs', 'tags', 'notes'][i % 4]}")
    res = search(h, "release checklist tests", explain=True, limit=8, now=NOW)
    ids = [r["id"] for r in res]
    rel = {r["id"]: r["explain"]["fused"]["score"] for r in res}
    blobs = vec.embeddings(h.db, ids)
    vectors = np.array([from_blob(blobs[i]) for i in ids])
    expected = mmr(ids, rel, vectors, k=8, lam=0.65)
    got = sorted((r["explain"]["mmr"]["rank"], r["id"], r["explain"]["mmr"]["score"])
                  for r in res)
    assert [i for _, i, _ in got] == [i for i, _ in expected]
    for (_, _, g), (_, e) in zip(got, expected, strict=True):
        assert g == pytest.approx(e, abs=1e-6)  # float32 cosines in SQLite vs numpy


def test_scope_is_current_project_plus_global(h: Hippo) -> None:
    mine = add(h, "Deploys go through the release train")
    shared = add(h, "Deploys need a change ticket", project=None)
    theirs = add(h, "Deploys are manual on Sundays", project="other")
    assert {r["id"] for r in search(h, "deploys")} == {mine, shared}
    assert {r["id"] for r in search(h, "deploys", projects=None)} == {mine, shared, theirs}
    assert {r["id"] for r in search(h, "deploys", projects=["other"])} == {theirs}
    assert {r["id"] for r in search(h, "deploys", projects=["other", None])} == {theirs, shared}


def test_filters_apply_inside_both_retrievers(h: Hippo) -> None:
    # 40 strong matches elsewhere would fill both retrievers' 30 slots if the scope were
    # applied afterwards; the weak in-scope memory must still be found.
    h.add([from_input({"text": f"kubernetes upgrade kubernetes upgrade {i}",
                       "project": "other"}, h.types, default_project=None) for i in range(40)])
    weak = add(h, "Before the kubernetes upgrade read the long release notes of the vendor")
    assert [r["id"] for r in search(h, "kubernetes upgrade")] == [weak]
    # Type, tier and tag filters are inside too.
    h.add([from_input({"text": f"kubernetes upgrade kubernetes upgrade mine {i}"}, h.types,
                      default_project="testproj") for i in range(40)])
    rule = add(h, "Every kubernetes upgrade needs a rollback plan written down", type="rule",
               tags=["ops"])
    assert [r["id"] for r in search(h, "kubernetes upgrade", types=["rule"])] == [rule]
    assert [r["id"] for r in search(h, "kubernetes upgrade", tiers=["procedural"])] == [rule]
    assert [r["id"] for r in search(h, "kubernetes upgrade", tags=["OPS"])] == [rule]


def test_time_bounds_are_exact_to_the_millisecond(h: Hippo) -> None:
    early = add(h, "backup ran", created_at="2026-05-01T10:00:00.100Z")
    late = add(h, "backup ran again", created_at="2026-05-01T10:00:00.900Z")
    ids = lambda **kw: {r["id"] for r in search(h, "backup ran", now=NOW, **kw)}
    assert ids() == {early, late}
    assert ids(since="2026-05-01T10:00:00.500Z") == {late}
    assert ids(until="2026-05-01T10:00:00.500Z") == {early}
    assert ids(since=datetime(2026, 5, 1, 10, 0, 0, 900000, tzinfo=UTC)) == {late}
    assert ids(since="2026-05-02") == set()


def test_inactive_and_superseded_are_left_out_unless_asked(h: Hippo) -> None:
    from hippo.memory import brain

    old = add(h, "The API listens on port 8080")
    new = add(h, "The API listens on port 9090")
    done = add(h, "Port scan of the API finished", type="task")
    with h.db.transaction():
        brain.update(h.db, old, {"superseded_by": new}, actor="human", action="supersede")
        brain.update(h.db, done, {"status": "done"}, actor="human", action="done")
    assert [r["id"] for r in search(h, "API port")] == [new]
    res = by_id(search(h, "API port", include_superseded=True))
    assert set(res) == {old, new}
    assert res[old]["superseded_by"] == new and res[new]["superseded_by"] is None


def test_limit_no_match_and_blank_query(h: Hippo) -> None:
    for i in range(12):
        add(h, f"cache warming step {i}")
    assert len(search(h, "cache warming")) == 5
    assert len(search(h, "cache warming", limit=12)) == 12  # MMR selects max(10, limit)
    assert len(search(h, "cache warming", limit=1)) == 1
    assert search(h, "   ").results == [] and search(h, "").degraded == []
    with pytest.raises(UsageError, match="limit"):
        search(h, "x", limit=0)


def test_bad_filters_and_settings(h: Hippo, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="unknown type 'memo'"):
        search(h, "x", types=["memo"])
    with pytest.raises(UsageError, match="unknown tier"):
        search(h, "x", tiers=["deep"])
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[search]\nrrf_k = -1\n")
    monkeypatch.setenv("HIPPO_CONFIG", str(cfg))
    with pytest.raises(ConfigError, match="rrf_k") as err:
        search(hippo.open(h.settings.database, embedder="hash"), "x")
    assert err.value.exit_code == 78


def test_config_table_feeds_params(db_path: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[search]\nresult_limit = 2\nw_freshness = 0.0\nw_importance = 0.0\n"
                   "w_relevance = 1.0\n")
    monkeypatch.setenv("HIPPO_CONFIG", str(cfg))
    h = hippo.open(db_path, embedder="hash")
    for i in range(4):
        add(h, f"gpu quota note {i}", importance=1.0, created_at=ago(900))
    res = search(h, "gpu quota", explain=True, now=NOW)
    assert len(res) == 2
    assert all(r["score"] == r["explain"]["relevance"] for r in res)


def test_public_api_is_the_pipeline(h: Hippo) -> None:
    m = add(h, "hippo.search is exported")
    assert [r["id"] for r in hippo.search(h, "exported")] == [m]


def test_bm25_beside_the_vector_scan_changes_nothing(h: Hippo,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from hippo.retrieve import pipeline

    for i, text in enumerate(["Deploys go out from the deploy/ directory with make stage",
                              "The deploy key lives in the ops vault",
                              "Never force-push to main", "Caroline's laptop runs Fedora 41",
                              "Rotate the signing keys before the audit on 2026-03-02"]):
        add(h, text, importance=0.3 + 0.1 * i)
    queries = ["deploy key", "Caroline's laptop", "--force push", "audit 2 March 2026",
               "nothing matches zzzz", "🙂"]

    def run() -> list[Any]:
        out = []
        for q in queries:
            res = search(h, q, explain=True, now=datetime(2026, 3, 5, tzinfo=UTC))
            out.append((res.results, res.degraded))
        return out

    monkeypatch.setattr(pipeline, "PARALLEL_MIN_ROWS", 10**9)
    after = run()
    # SQLite reads beside the scan on a second connection; Postgres has none (`reader`).
    sqlite = BACKEND == "sqlite"
    assert not sqlite or h.db._reader is None  # a small store: no second connection
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_ROWS", 0)
    beside = run()
    assert not sqlite or h.db._reader is not None
    assert beside == after
    with h.db.transaction():  # a second connection would not see this transaction's writes
        assert h.db.reader() is None
    h.close()
    assert not sqlite or h.db._reader is None


def test_a_sparse_time_range_is_searched_by_point_lookups_with_the_same_answer(
        h: Hippo) -> None:
    """A time range holding fewer than 1/70 of the store (a date named in a query) goes
    along the created_at index; its answer is the vec0 scan's, filters included."""
    from hippo.embed.cache import to_blob
    from hippo.retrieve import vec
    from hippo.retrieve.pipeline import make_filters

    words = ["deploy", "cache", "billing", "retry", "schema", "queue", "backup"]
    mems = [from_input({"text": f"note {i} about the {words[i % 7]} of service {i % 11}",
                        "project": ("alpha", "beta", None)[i % 3],
                        "type": ("fact", "decision")[i % 2],
                        "created_at": ago(i / 2)}, h.types, default_project="alpha")
            for i in range(1400)]  # two a day for 700 days: at most 1400 // 70 = 20
    h.add(mems)
    h.db.execute("UPDATE memories SET superseded_by = 1 WHERE id % 13 = 0")  # left out
    query = to_blob(h.embed(["the deploy of service 3"])[0])
    def days_ago(n: float | None) -> datetime | None:
        return None if n is None else NOW - timedelta(days=n)

    base = make_filters(h, projects=["alpha", None])
    windows = [(3, 1), (100.5, 99.5), (600, 595), (None, 695), (2, None)]
    for since, until in windows:
        for types in ((), ("decision",)):
            f = make_filters(h, projects=["alpha", None], types=types,
                             since=days_ago(since), until=days_ago(until))
            # SQLite walks the created_at index (`_narrow`); Postgres's planner does.
            assert BACKEND != "sqlite" or h.db.vectors._narrow(f)
            got = vec.search(h.db, query, 5, f)
            reference = h.db.vectors._exact(query, 5, f)  # the plain exact scan
            assert got == reference and len(got) > 0
            knn = h.db.vectors._knn(query, 5, f) or []  # ties at the cut: any of them
            assert [x.distance for x in got] == pytest.approx([x.distance for x in knn])
    wide = make_filters(h, projects=["alpha", None], since=days_ago(400), until=days_ago(100))
    assert BACKEND != "sqlite" or (not h.db.vectors._narrow(wide)
                                   and not h.db.vectors._narrow(base))
