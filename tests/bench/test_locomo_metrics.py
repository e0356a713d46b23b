"""LoCoMo bench plumbing: evidence parsing, loading and recall metrics on a hand-made sample.

No LoCoMo file is needed; the one test that reads the real dev file skips when it is absent.
Also checks the pure parts of `hippo.retrieve.late` (dates, MaxSim, the token cache blob).
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import locomo_common as lc

SAMPLE = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I painted a lake sunrise."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely!", "blip_caption": "a lake"},
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [
            {"speaker": "Bob", "dia_id": "D2:1", "text": "I adopted a dog."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "What is its name?"},
            {"speaker": "Bob", "dia_id": "D2:3", "text": "Scout."},
        ],
    },
    "observation": {
        "session_1_observation": {"Ann": [["Ann painted a lake sunrise.", "D1:1"]]},
        "session_2_observation": {"Bob": [["Bob adopted a dog named Scout.",
                                           "D2:1, D2:3"]],
                                  "Ann": [["Ann asked a question.", ["D2:2", "D9:9"]]]},
    },
    "qa": [
        {"question": "What did Ann paint?", "answer": "a sunrise", "evidence": ["D1:1"],
         "category": 4},
        {"question": "What is Bob's dog called?", "answer": "Scout",
         "evidence": ["D2:1; D2:3"], "category": 1},
        {"question": "When?", "answer": "x", "evidence": ["D:1:1", "D"], "category": 2},
        {"question": "Adversarial?", "adversarial_answer": "n/a", "evidence": ["D1:2"],
         "category": 5},
    ],
}]


@pytest.fixture
def convs(tmp_path: Path) -> list[lc.Conversation]:
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(SAMPLE))
    return lc.load(path)


def test_session_dates_parse() -> None:
    assert lc.parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56,
                                                                       tzinfo=UTC)
    assert lc.parse_session_date("12:04 am on 1 January, 2024").hour == 0
    assert lc.parse_session_date("12:30 pm on 1 January, 2024").hour == 12
    with pytest.raises(ValueError):
        lc.parse_session_date("yesterday")


def test_malformed_evidence_is_split_and_unknown_ids_dropped() -> None:
    valid = {"D8:6", "D9:17", "D26:14", "D26:34"}
    assert lc.clean_ids(["D8:6; D9:17"], valid) == (["D8:6", "D9:17"], [])
    assert lc.clean_ids("D26:14, D26:34, D26:42", valid) == (["D26:14", "D26:34"], ["D26:42"])
    assert lc.clean_ids(["D:11:26", "D", "D8:6", "D8:6"], valid) == (["D8:6"], ["D:11:26", "D"])
    assert lc.clean_ids(None, valid) == ([], [])


def test_load_turns_observations_and_questions(convs: list[lc.Conversation]) -> None:
    (c,) = convs
    assert c.speakers == ("Ann", "Bob")
    assert [t.dia_id for t in c.turns] == ["D1:1", "D1:2", "D2:1", "D2:2", "D2:3"]
    assert [t.seq for t in c.turns] == [0, 1, 2, 3, 4]
    assert c.turns[1].caption == "a lake" and c.turns[2].session == 2
    assert {o.dia_ids for o in c.observations} == {("D1:1",), ("D2:1", "D2:3"), ("D2:2",)}
    assert c.dropped_observation_ids == ["D9:9"]
    assert c.observations[0].date == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [q.qid for q in c.questions] == [f"locomo_0_qa{i}" for i in range(4)]
    assert c.questions[1].evidence == ("D2:1", "D2:3")
    assert c.questions[2].evidence == () and c.questions[2].dropped == ("D:1:1", "D")
    assert c.questions[3].answer == "n/a"


def test_eval_questions_skip_category_5_and_empty_evidence(convs: list[lc.Conversation]) -> None:
    qs = lc.eval_questions(convs)
    assert [q.qid for _, q in qs] == ["locomo_0_qa0", "locomo_0_qa1"]
    assert lc.dropped_counts(convs) == {"qa_ids_dropped": 2, "qa_questions_touched": 1,
                                        "qa_questions_without_evidence": 1,
                                        "observation_ids_dropped": 1}


def test_audit_replaces_only_corrected_citations(tmp_path: Path,
                                                 convs: list[lc.Conversation]) -> None:
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps([
        {"question_id": "locomo_0_qa0", "cited_evidence": ["D1:1"], "correct_evidence": ["D1:2"]},
        {"question_id": "locomo_0_qa1", "cited_evidence": ["D2:1; D2:3"],
         "correct_evidence": ["D2:3", "D2:1"]},  # the same citation: no change
        {"question_id": "locomo_0_qa2", "correct_evidence": None},
        {"question_id": "locomo_0_qa3", "cited_evidence": [], "correct_evidence": ["D7:7"]},
    ]))
    fixes = lc.load_audit(audit, convs)
    assert fixes == {"locomo_0_qa0": ("D1:2",)}
    qs = {q.qid: q.evidence for _, q in lc.eval_questions(convs, fixes)}
    assert qs == {"locomo_0_qa0": ("D1:2",), "locomo_0_qa1": ("D2:1", "D2:3")}


def test_hit_any_and_all_at_k() -> None:
    retrieved = [["D1:1"], ["D2:1", "D2:3"], [], ["D3:3"]]
    assert lc.hit(retrieved, ["D2:3"], 1) == (False, False)
    assert lc.hit(retrieved, ["D2:3"], 2) == (True, True)
    assert lc.hit(retrieved, ["D1:1", "D3:3"], 2) == (True, False)
    assert lc.hit(retrieved, ["D1:1", "D3:3"], 4) == (True, True)
    assert lc.hit([], ["D1:1"], 5) == (False, False)
    with pytest.raises(ValueError):
        lc.hit(retrieved, [], 5)


def test_report_figures_per_category_and_overall() -> None:
    rep = lc.Report()
    rep.add(4, [["a"]] + [["x"]] * 9, ["a"])            # hit @5 and @10
    rep.add(4, [["x"]] * 7 + [["b"]] + [["x"]] * 2, ["b", "c"])  # any only @10, never all
    rep.add(1, [["x"]] * 10, ["z"])                     # miss
    rep.add(2, [["p"], ["q"]], ["p", "q"])              # all @5
    f = rep.overall.figures()
    assert f == {"n": 4, "recall_any@5": 0.5, "recall_any@10": 0.75,
                 "recall_all@5": 0.5, "recall_all@10": 0.5}
    assert rep.by_cat[4].figures()["recall_any@10"] == 1.0
    assert rep.by_cat[3].figures() == {"n": 0, "recall_any@5": 0.0, "recall_any@10": 0.0,
                                       "recall_all@5": 0.0, "recall_all@10": 0.0}
    line = lc.final_line(rep, [10.0, 20.0, 30.0, 40.0])
    assert list(line) == ["n", "recall_any@5", "recall_any@10", "recall_all@5",
                          "recall_all@10", "p50_ms", "p95_ms"]
    assert line["p50_ms"] == 20.0 and line["p95_ms"] == 40.0
    table = lc.format_table({"sys": rep}, "title")
    assert "overall" in table and "multi-hop" in table


def _tally(hits: str) -> lc.Tally:
    """A tally from a string of 1 (evidence first) and 0 (missed) per question."""
    t = lc.Tally()
    for h in hits:
        t.add([["e"] if h == "1" else ["x"]], ["e"])
    return t


def test_paired_counts_questions_won_and_lost_with_their_error() -> None:
    a, b = _tally("1101100"), _tally("1011000")
    assert a.hits == [True, True, False, True, True, False, False]
    won, lost, err = lc.paired(a, b)
    assert (won, lost) == (2, 1)  # a wins questions 2 and 5, loses question 3
    assert err == pytest.approx(math.sqrt(3) / 7)
    assert lc.paired(a, a) == (0, 0, 0.0)
    assert lc.standard_error(a) == pytest.approx(math.sqrt(4 / 7 * 3 / 7 / 7))
    assert lc.standard_error(lc.Tally()) == 0.0
    with pytest.raises(ValueError, match="same questions"):
        lc.paired(a, _tally("11"))


def test_format_paired_calls_a_difference_only_past_two_standard_errors() -> None:
    n = 400
    base = lc.Report()
    better, same = lc.Report(), lc.Report()
    for i in range(n):
        hit = i % 2 == 0
        base.add(4, [["e"] if hit else ["x"]], ["e"])
        # `better` also gets 20 of the misses; `same` trades 3 hits for 3 misses.
        better.add(4, [["e"] if hit or i < 40 else ["x"]], ["e"])
        same.add(4, [["e"] if (hit and i >= 6) or (not hit and i < 6) else ["x"]], ["e"])
    twin = lc.Report()
    for t in base.overall.hits:
        twin.add(4, [["e"] if t else ["x"]], ["e"])
    text = lc.format_paired({"full": base, "more": better, "swap": same, "twin": twin}, "full")
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:]}
    assert rows["more"][1:4] == ["20", "0", "+0.050"] and rows["more"][-1] == "better"
    assert rows["swap"][1:4] == ["3", "3", "+0.000"] and rows["swap"][-1] == "noise"
    assert rows["twin"][1:4] == ["0", "0", "+0.000"] and rows["twin"][-1] == "same"
    assert "'full' (0.500, one standard error 0.025: 0.450-0.550 at two)" in text


def test_conversations_table_gives_each_conversation_and_the_spread() -> None:
    full, bm25 = lc.Report(), lc.Report()
    # conv-a: 3 of 4 found (bm25 1 of 4); conv-b: 1 of 4 (bm25 1 of 4); conv-c: 2 of 4 (0).
    for conv, hits, lexical in (("conv-a", "1110", "1000"), ("conv-b", "0001", "0100"),
                                ("conv-c", "1100", "0000")):
        for h, b in zip(hits, lexical):
            full.add(4, [["e"] if h == "1" else ["x"]], ["e"], conv)
            bm25.add(4, [["e"] if b == "1" else ["x"]], ["e"], conv)
    assert list(full.by_conv) == ["conv-a", "conv-b", "conv-c"]
    assert full.by_conv["conv-b"].figures()["recall_any@5"] == 0.25
    assert full.overall.n == 12 and sum(t.n for t in full.by_conv.values()) == 12
    text = lc.format_conversations({"full": full, "bm25": bm25}, ["full", "bm25"])
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:5]}
    assert rows["conv-a"] == ["conv-a", "4", "0.750", "0.250"]
    assert rows["conv-c"] == ["conv-c", "4", "0.500", "0.000"]
    sd = statistics.stdev([0.75, 0.25, 0.5])  # 0.25
    assert f"full: 0.250-0.750 over 3 conversations, sd {sd:.3f}; " \
           f"a mean of 3 conversations: sd {sd / math.sqrt(3):.3f}" in text
    # Without conversations (the older call) the report still adds up.
    plain = lc.Report()
    plain.add(1, [["e"]], ["e"])
    assert plain.by_conv == {} and plain.overall.n == 1


def test_percentile_nearest_rank() -> None:
    assert lc.percentile([], 50) == 0.0
    assert lc.percentile([5.0], 95) == 5.0
    assert lc.percentile(list(map(float, range(1, 101))), 95) == 95.0


def test_real_dev_file_counts() -> None:
    if not lc.DEFAULT_DATA.exists():
        pytest.skip("LoCoMo dev file not present")
    convs = lc.load(lc.DEFAULT_DATA)
    assert len(convs) == 7
    assert len(lc.eval_questions(convs)) == 1033
    assert lc.dropped_counts(convs)["qa_ids_dropped"] == 4


# -- hippo.retrieve.dates, late, tokenmatrix: the pure parts -------------------------

def test_mentioned_dates() -> None:
    from hippo.retrieve.dates import mentioned_dates

    def days(text: str) -> list[tuple[str, str]]:
        return [(w.start.date().isoformat(), w.end.date().isoformat())
                for w in mentioned_dates(text)]

    assert days("What did she plan on the evening of 7 July, 2023?") == [
        ("2023-07-07", "2023-07-08")]
    assert days("the photo shared on December 1,2023") == [("2023-12-01", "2023-12-02")]
    assert days("the 3rd of Sept. 2024 release") == [("2024-09-03", "2024-09-04")]
    assert days("during March 2023") == [("2023-03-01", "2023-04-01")]
    assert days("deploy of 2025-03-03, then 2024-12") == [("2025-03-03", "2025-03-04"),
                                                         ("2024-12-01", "2025-01-01")]
    assert days("Mark 2023 plans, last week, version 1.2023") == []
    assert days("") == []


def _unit_rows(rng: Any, n: int, d: int) -> Any:
    import numpy as np

    v = rng.standard_normal((n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_late_scores_prefer_the_doc_matching_every_query_token() -> None:
    import numpy as np

    from hippo.retrieve.late import late_scores, rescale
    from hippo.retrieve.tokenmatrix import TokenMatrix

    e = np.eye(6, dtype=np.float32)
    q = TokenMatrix.from_vectors((1, 2), e[[0, 1]], share=1 / 6)
    both = TokenMatrix.from_vectors((1, 2, 3), e[[0, 1, 2]], share=1 / 6)
    one = TokenMatrix.from_vectors((1, 3), e[[0, 2]], share=1 / 6)
    empty = TokenMatrix.from_vectors((), np.zeros((0, 6), dtype=np.float32))
    s = late_scores(q, [both, one, empty])
    with_mark = TokenMatrix.from_vectors((1, 2, 5), e[[0, 1, 5]], [True, True, False],
                                         share=1 / 6)
    assert late_scores(with_mark, [both, one, empty]) == s  # "?" is not matched
    # `both` matches each query token exactly: cosine 1 for both. `one` matches token 1
    # only; token 2 meets orthogonal tokens (cosine 0). Weights: pool IDF of 3 docs,
    # log(4/2.5) for token 1 (in 2 docs) and log(4/1.5) for token 2 (in 1 doc).
    w1, w2 = math.log(4 / 2.5), math.log(4 / 1.5)
    assert s[0] == pytest.approx(1.0)
    assert s[1] == pytest.approx(w1 / (w1 + w2))
    assert s[2] == 0.0
    assert rescale(s) == [1.0, pytest.approx(s[1]), 0.0]
    assert rescale([0.3, 0.3]) == [1.0, 1.0] and rescale([]) == []


def test_ternary_cosine_follows_the_true_cosine() -> None:
    import numpy as np

    from hippo.retrieve.late import late_scores
    from hippo.retrieve.tokenmatrix import TokenMatrix

    rng = np.random.default_rng(7)
    base = _unit_rows(rng, 1, 384)[0]
    noise = _unit_rows(rng, 8, 384)
    # Token vectors at decreasing true cosine to `base`.
    mixes = [base * (1 - t) + noise[i] * t for i, t in enumerate(np.linspace(0, 0.9, 8))]
    docs = [TokenMatrix.from_vectors((i,), (m / np.linalg.norm(m))[None, :])
            for i, m in enumerate(mixes)]
    q = TokenMatrix.from_vectors((100,), base[None, :])
    s = late_scores(q, docs)
    assert s[0] == pytest.approx(1.0)
    assert all(a > b for a, b in itertools.pairwise(s))  # the order of the true cosines
    true = [float(base @ (m / np.linalg.norm(m))) for m in mixes]
    # Ternary cosines run low in the middle of the range (0.71 -> 0.56 here), never high.
    assert all(-0.2 < a - b <= 1e-6 for a, b in zip(s, true))


def test_a_repeated_token_is_stored_only_where_its_vector_differs() -> None:
    import numpy as np

    from hippo.retrieve.tokenmatrix import DISTINCT_COSINE, TokenMatrix

    rng = np.random.default_rng(3)
    a, b, c = _unit_rows(rng, 3, 384)
    near = a + 0.2 * b  # same meaning, another context: ternary cosine well above 0.7
    near /= np.linalg.norm(near)
    rows = np.stack([a, near, b, a, c, b])
    ids = (7, 7, 7, 8, 9, 9)
    words = [True, False, True, True, False, True]
    m = TokenMatrix.from_vectors(ids, rows, words)
    # id 7: `near` repeats `a` and goes; `b` is another context of the word and stays.
    # id 8 is another token with the same vector: kept. id 9: `b` differs from `c`: kept.
    assert m.ids == (7, 7, 8, 9, 9)
    assert m.words == (True, True, True, False, True)
    every = TokenMatrix.from_vectors(ids, rows, words, distinct=2.0)  # nothing is a repeat
    assert len(every.ids) == 6
    step = 2 * m.width
    kept = [0, 2, 3, 4, 5]
    assert m.planes == b"".join(every.planes[k * step : (k + 1) * step] for k in kept)
    assert 0.0 < DISTINCT_COSINE < 1.0


def test_dropping_exact_repeats_leaves_late_scores_unchanged() -> None:
    """MaxSim takes each query token's best match, so a copy of a document token that is
    already there cannot change a score."""
    import numpy as np

    from hippo.retrieve.late import late_scores
    from hippo.retrieve.tokenmatrix import TokenMatrix

    rng = np.random.default_rng(11)
    base = _unit_rows(rng, 12, 64)
    q = TokenMatrix.from_vectors(range(5), _unit_rows(rng, 5, 64))
    docs_full, docs_distinct = [], []
    for k in range(6):
        pick = rng.integers(0, 12, size=20)  # repeats of the same rows: exact copies
        ids, rows = [int(i) for i in pick], base[pick]
        docs_full.append(TokenMatrix.from_vectors(ids, rows, distinct=2.0))
        docs_distinct.append(TokenMatrix.from_vectors(ids, rows))
        assert len(docs_distinct[-1].ids) == len(set(ids)) < len(ids)
    assert late_scores(q, docs_distinct) == late_scores(q, docs_full)


def test_token_matrix_blob_round_trip() -> None:
    import numpy as np

    from hippo.retrieve.tokenmatrix import TokenMatrix

    rng = np.random.default_rng(1)
    v = _unit_rows(rng, 5, 12)
    m = TokenMatrix.from_vectors((101, 7, 30000, 3, 4), v, [True, False, True, True, False])
    back = TokenMatrix.from_blob(m.to_blob())
    assert back == m
    # head, ids, a flag byte and two 12-bit planes per token
    assert len(m.to_blob()) == 8 + 4 * 5 + 5 + 5 * 2 * 2
    assert m.content().ids == (101, 30000, 3)
    assert m.content().pos == (m.pos[0], m.pos[2], m.pos[3])
    only_punct = TokenMatrix.from_vectors((9, 8), v[:2], [False, False])
    assert only_punct.content() == only_punct
    # Four components of 12 kept per token (a third), with the signs of the originals.
    for t in range(5):
        kept = [i for i in range(12) if (m.pos[t] | m.neg[t]) >> i & 1]
        assert len(kept) == 4
        assert sorted(kept) == sorted(np.argsort(-np.abs(v[t]))[:4].tolist())
        assert all((v[t, i] > 0) == bool(m.pos[t] >> i & 1) for i in kept)
    with pytest.raises(ValueError, match="expected"):
        TokenMatrix.from_blob(m.to_blob()[:-1])


def test_neighbour_support_adds_the_best_neighbour_share() -> None:
    from hippo.retrieve.late import neighbour_support

    rel = {1: 0.2, 2: 1.0, 3: 0.0, 9: 0.5}
    adj = {1: [2], 2: [1, 3], 3: [2, 4], 9: []}
    out = neighbour_support(rel, adj, 0.3)
    assert out == {1: pytest.approx(0.5), 2: pytest.approx(1.06), 3: pytest.approx(0.3),
                   9: 0.5}
    assert neighbour_support(rel, adj, 0.0) == rel


@pytest.mark.parametrize("script", ["locomo", "locomo_echo"])
def test_bench_scripts_run_end_to_end_on_the_sample(script: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Both LoCoMo benches, every system they compare, on the hand-made conversation with
    the local model: a call that drifted from the code it measures fails here, not in a
    six-minute run."""
    import importlib

    path = tmp_path / "sample.json"
    path.write_text(json.dumps(SAMPLE))
    bench = importlib.import_module(script)
    assert bench.main(["--data", str(path), "--db", str(tmp_path / "bench.db")]) in (0, None)
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["n"] == 2  # "When?" has no usable evidence; category 5 is not asked
    assert 0.0 <= last["recall_any@5"] <= 1.0 and last["p50_ms"] > 0


def test_forget_questions_drops_only_the_questions_caches(tmp_path: Path) -> None:
    """So a reused database still meets every question as new on the first pass (what
    the latency figures claim); a memory's own cache stays."""
    from locomo import forget_questions

    import hippo
    from hippo.memory.records import from_input

    h = hippo.open(tmp_path / "f.db", embedder="hash")
    try:
        text = "Ann paints on Sundays."
        h.add([from_input({"text": text}, h.types, default_project="p")])
        hippo.search(h, "When does Ann paint?", projects=["p"])
        hippo.search(h, text, projects=["p"])  # a question that is also a memory's text
        cached = h.db.scalar("SELECT count(*) FROM embed_cache")
        assert forget_questions(h, ["When does Ann paint?", text, "never asked"]) == 1
        assert h.db.scalar("SELECT count(*) FROM embed_cache") == cached - 1
        calls = h.db.scalar("SELECT value FROM counters WHERE name = 'embed.model_calls'")
        hippo.search(h, "When does Ann paint?", projects=["p"])
        assert h.db.scalar("SELECT value FROM counters "
                           "WHERE name = 'embed.model_calls'") == calls + 1  # new again
    finally:
        h.close()


def test_leave_one_out_chooses_each_setting_on_the_other_conversations() -> None:
    import locomo_loco as loco

    grid = loco.settings({"a": (1, 2), "b": (0.5, 0.0, 0.9)})
    assert len(grid) == 6 and grid[0] == {"a": 1, "b": 0.5}  # the defaults come first
    assert grid[-1] == {"a": 2, "b": 0.9}
    # Questions found per conversation by three settings.
    table = [{"x": 10, "y": 10, "z": 10},   # defaults
             {"x": 14, "y": 9, "z": 9},     # good on x only
             {"x": 9, "y": 12, "z": 12}]    # good on y and z
    assert loco.choose(table, ["x", "y", "z"]) == 2
    assert loco.choose(table, ["x"]) == 1
    assert loco.choose([{"x": 3}, {"x": 3}], ["x"]) == 0  # a tie goes to the earlier one
    chosen = loco.leave_one_out(table, ["x", "y", "z"])
    # Without x, setting 2 wins (24 vs 20 vs 18); without y: 1 gives 23, 2 gives 21.
    assert chosen == {"x": 2, "y": 1, "z": 1}
    held_out = sum(table[chosen[c]][c] for c in ("x", "y", "z"))
    assert held_out == 9 + 9 + 9  # each choice loses on the conversation it did not see


def test_leave_one_out_bench_runs_end_to_end_on_the_sample(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import locomo_loco as loco

    path = tmp_path / "sample.json"
    path.write_text(json.dumps(SAMPLE))
    assert loco.main(["--data", str(path), "--db", str(tmp_path / "b.db"), "--quick"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    last = json.loads(lines[-1])
    assert list(last) == ["n", "defaults", "leave_one_out", "best_on_dev", "best"]
    assert last["n"] == 2 and 0.0 <= last["leave_one_out"] <= last["best_on_dev"] <= 1.0
    assert set(last["best"]) == set(loco.QUICK)
    assert any(line.startswith("conv-x") for line in lines)


def test_echo_match_bench_runs_on_a_small_transcript(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import echo_match

    folder = tmp_path / "t"
    folder.mkdir()
    lines = [{"role": "user", "content": "how are hooks resolved at runtime?"},
             {"role": "assistant", "content": "Hooks are looked up in settings.json first."}]
    (folder / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert echo_match.main(["--transcripts", str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    on = [line for line in out if line.startswith("on-topic ")]
    assert len(on) == len(echo_match.QUERIES)
    assert all(0.0 < float(line.split()[1]) <= 1.0 for line in on)
    assert out[-2].startswith("on-topic: ") and out[-1].startswith("off-topic: ")


def _both(query: Any, docs: list[Any]) -> tuple[list[float], list[float]]:
    """MaxSim of `query` over `docs` by the pure-Python and by the numpy implementation."""
    from hippo.retrieve import late

    content = query.content()
    w = late.pool_idf(content, docs)
    total = sum(w) or 1.0
    return (late._late_scores_python(content, docs, w, total),
            late._late_scores_numpy(content, docs, w, total))


def test_numpy_maxsim_gives_the_pure_python_scores() -> None:
    import numpy as np

    from hippo.retrieve.tokenmatrix import TokenMatrix

    rng = np.random.default_rng(3)
    for trial in range(30):
        d = int(rng.choice([6, 12, 64, 384]))  # planes of 1, 2 bytes; 1, 6 words
        query = TokenMatrix.from_vectors(
            tuple(int(i) for i in rng.integers(0, 50, 7)), _unit_rows(rng, 7, d),
            [bool(x) for x in rng.integers(0, 4, 7)])  # some punctuation, left out
        docs = []
        for _ in range(int(rng.integers(1, 12))):
            n = int(rng.integers(0, 30))  # empty documents too
            vecs = _unit_rows(rng, n, d) if n else np.zeros((0, d), dtype=np.float32)
            if n > 1 and trial % 3 == 0:
                vecs[1] = 0.0  # a zero vector: fewer nonzeros, so per-token scaling
            docs.append(TokenMatrix.from_vectors(tuple(int(i) for i in rng.integers(0, 50, n)),
                                                 vecs))
        slow, fast = _both(query, docs)
        assert fast == slow  # the same floats, not only close ones


def test_numpy_maxsim_matches_on_real_model_tokens() -> None:
    from hippo import embed
    from hippo.retrieve.tokencache import encode_tokens
    from hippo.retrieve.tokenmatrix import TokenMatrix

    texts = ["when do the database backups run?",
             "Postgres backups run nightly at 02:00 UTC and are kept for 30 days.",
             "assistant: exec_command: git diff -- src/agents/plugins/codemie-code.plugin.ts",
             "The staging cluster rotates its credentials every ninety days."]
    mats = [TokenMatrix.from_blob(m.to_blob()) for m in encode_tokens(embed.get("local"), texts)]
    slow, fast = _both(mats[0], mats[1:])
    assert fast == slow
    assert max(range(3), key=lambda i: fast[i]) == 0


def test_late_scores_uses_numpy_for_big_pools_or_once_it_is_loaded(monkeypatch) -> None:
    import numpy as np

    from hippo.retrieve import late, tokenmatrix

    rng = np.random.default_rng(5)
    query = tokenmatrix.TokenMatrix.from_vectors((1, 2, 3), _unit_rows(rng, 3, 12))
    small = [tokenmatrix.TokenMatrix.from_vectors((4, 5), _unit_rows(rng, 2, 12))]
    used: list[str] = []
    for name in ("_late_scores_python", "_late_scores_numpy"):
        real = getattr(late, name)
        monkeypatch.setattr(late, name, lambda *a, _r=real, _n=name: used.append(_n) or _r(*a))
    late.late_scores(query, small)  # numpy is loaded in this process
    assert used == ["_late_scores_numpy"]
    monkeypatch.setattr(late, "sys", SimpleNamespace(modules={}))  # as in a process without it
    used.clear()
    late.late_scores(query, small)
    assert used == ["_late_scores_python"]
    monkeypatch.setattr(late, "NUMPY_MIN_PAIRS", 6)  # 3 query tokens x 2 document tokens
    used.clear()
    late.late_scores(query, small)
    assert used == ["_late_scores_numpy"]
