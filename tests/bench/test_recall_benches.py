"""The recall benches' plumbing: DevMemBench sessions as transcripts, what the agent sees
(the prompt hook and the markdown recipe, on a small store with the hash embedder),
memories per session, prose words, and currency's scoring. No model is loaded."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import currency
import devmem
import recall_common as rc

SESSIONS = [
    {"sessionId": "S1", "metadata": {"date": "2025-02-05", "project": "dash"},
     "messages": [{"role": "user", "content": "Set up the dashboard with Next.js and bun."},
                  {"role": "assistant", "content": "Done: Next.js 15, bun install ran."}]},
    {"sessionId": "S2", "metadata": {"date": "2025-02-09", "project": "both"},
     "messages": [{"role": "user", "content": "I prefer named exports."}]},
]


def test_sessions_become_transcripts_hippo_reads_with_date_and_project(tmp_path: Path) -> None:
    from hippo.ingest.readers import detect, read_head
    from hippo.project import locate

    paths = devmem.write_transcripts(SESSIONS, tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == [
        "transcripts/dash/S1.jsonl", "transcripts/both/S2.jsonl"]
    res = detect(paths[0], read_head(paths[0])).read(paths[0])
    assert res.session.session_id == "S1"
    assert [(m.role, m.text, m.timestamp) for m in res.messages] == [
        ("user", "Set up the dashboard with Next.js and bun.", "2025-02-05T00:00:00Z"),
        ("assistant", "Done: Next.js 15, bun install ran.", "2025-02-05T00:00:00Z")]
    assert locate(res.session.cwd or "").project == "dash"
    assert rc.prose_words(paths) == Counter({"S1": 14, "S2": 4})


def test_writing_again_leaves_the_files_alone(tmp_path: Path) -> None:
    """A reused database has read them: rewriting them would make ingest look again."""
    paths = devmem.write_transcripts(SESSIONS, tmp_path)
    for p in paths:  # an old mtime, so any rewrite shows
        os.utime(p, ns=(1, 1))
    devmem.write_transcripts(SESSIONS, tmp_path)
    assert [p.stat().st_mtime_ns for p in paths] == [1, 1]
    changed = [{**SESSIONS[0], "messages": SESSIONS[0]["messages"][:1]}]
    devmem.write_transcripts(changed, tmp_path)
    assert paths[0].stat().st_mtime_ns != 1


def test_a_question_is_asked_in_its_last_sessions_project() -> None:
    projects = {"S1": "dash", "S2": "both"}
    assert devmem.question_project({"sessions": ["S1", "S2"]}, projects) == "both"
    assert devmem.question_project({"sessions": ["S1"]}, projects) == "dash"
    assert devmem.question_project({"sessions": []}, projects) == devmem.DEFAULT_PROJECT


def test_memories_count_for_the_session_that_started_them() -> None:
    known = {"main": {"parent_key": None}, "agent-1": {"parent_key": "main"},
             "other": {"parent_key": None}}
    mems = [{"source": {"session": "main"}}, {"source": {"session": ["agent-1", "x"]}},
            {"source": {"session": "other"}}, {"source": {}}, {"source": None}]
    assert rc.per_session(mems, known) == Counter({"main": 2, "other": 1})


def test_items_are_the_bullets_of_a_context() -> None:
    ctx = ("## Relevant memories\n- Use SWR (fact, dash, 2025-02-07, #3)\n"
           "- dedupingInterval: 30000 (config, dash, 2025-02-07, #4)\n")
    assert rc.items(ctx) == ["Use SWR (fact, dash, 2025-02-07, #3)",
                             "dedupingInterval: 30000 (config, dash, 2025-02-07, #4)"]
    assert rc.items("") == []


def test_hook_and_recipe_answer_in_the_projects_of_their_cwd(cli, tmp_path: Path) -> None:
    db = tmp_path / "bench.db"
    facts = [{"text": "Staging deploys go through `make deploy-staging`", "type": "procedure",
              "project": "A"},
             {"text": "Staging deploys of project B use helm", "type": "fact", "project": "B"}]
    r = cli("add", "-", db=db, input="\n".join(orjson.dumps(f).decode() for f in facts))
    assert r.exit_code == 0, r.stderr
    prompt = "How do staging deploys work here?"
    ctx = rc.hook(db, prompt, rc.project_dir(tmp_path, "A"))
    assert [i.split(" (")[0] for i in rc.items(ctx)] == [
        "Staging deploys go through `make deploy-staging`"]
    assert rc.markdown(db, prompt, rc.project_dir(tmp_path, "A")) == ctx
    # A project with nothing stored: the hook and the recipe are quiet.
    assert rc.hook(db, prompt, rc.project_dir(tmp_path, "C")) == ""
    assert rc.markdown(db, prompt, rc.project_dir(tmp_path, "C")) == ""


def test_currency_scores_current_truth_and_stale_top_per_kind() -> None:
    cases = [{"kind": "done", "keys": [["gqc.6"], ["05fd186"]], "stale": [["in progress"]]},
             {"kind": "done", "keys": [["gqc.7"], ["a230dbf"]], "stale": [["blocked"]]},
             {"kind": "state", "keys": [["87 tests"]], "stale": [["65 tests"]]}]
    brain = [["gqc.6 in progress", "gqc.6 committed as 05fd186"],
             ["gqc.7 blocked by gqc.5"],
             ["87 tests, 0 failures"]]
    echo = [["gqc.6 committed as 05fd186"], ["gqc.7: a230dbf"], ["65 tests"]]
    got = currency.score(cases, brain, echo)
    assert got["done"] == Counter(n=2, current=1, stale=2, echo_current=2, echo_stale=0)
    assert got["state"] == Counter(n=1, current=1, stale=0, echo_current=0, echo_stale=1)
    assert got["all"]["n"] == 3 and got["all"]["current"] == 2 and got["all"]["stale"] == 2


def test_knowledge_updates_become_currency_cases() -> None:
    questions = [{"id": "Q1", "type": "knowledge-update", "question": "q", "keys": [["a"]],
                  "stale": [["b"]], "sessions": ["S1", "S2"]},
                 {"id": "Q2", "type": "preference", "question": "q", "keys": [["a"]],
                  "stale": [], "sessions": []}]
    (case,) = currency.cases_of(questions)
    assert case["kind"] == "knowledge-update" and case["session"] == "S1,S2"
    assert json.dumps(case)  # printable as is


def test_drop_summaries_leaves_a_session_that_never_compacted(tmp_path: Path) -> None:
    import session_recall

    data = tmp_path / "data"
    (data / "s1" / "subagents").mkdir(parents=True)
    lines = [{"type": "user", "message": {"role": "user", "content": "Fix the login."}},
             {"type": "user", "isCompactSummary": True,
              "message": {"role": "user", "content": "This session is being continued ..."}},
             {"type": "assistant", "message": {"role": "assistant", "content": "Fixed."}}]
    (data / "s1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    for name in ("agent-a1.jsonl", "agent-acompact-f0.jsonl"):
        (data / "s1" / "subagents" / name).write_text(json.dumps(lines[0]) + "\n")
    (tmp_path / "out").mkdir()
    paths = session_recall.without_summaries(session_recall.transcripts(data), tmp_path / "out")
    assert [p.name for p in paths] == ["s1.jsonl", "s1"]
    kept = [json.loads(x) for x in paths[0].read_text().splitlines()]
    assert kept == [lines[0], lines[2]]
    assert sorted(p.name for p in (paths[1] / "subagents").iterdir()) == ["agent-a1.jsonl"]
