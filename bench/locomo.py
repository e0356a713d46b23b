"""LoCoMo retrieval recall of the Brain search pipeline over observations (issue 3).

Usage:
    python bench/locomo.py [--data FILE] [--audit FILE] [--db PATH | URL] [--pg] [--embedder local]

Each conversation's `observation` facts become Brain memories through the real store
(`Hippo.add`: type fact, importance 0.5, created at the session date, source = the
evidence dia_ids, one project per conversation) in a temporary database. Every
category 1-4 question is asked against its own conversation through `hippo.search`,
and a question is a hit at k when any (recall_any) / all (recall_all) of its evidence
dia_ids are among the dia_ids of the top-k memories' sources.

Reported per category and overall, for the full pipeline and, in the same run (same
database, vectors and cached query embeddings reused): the BM25 retriever alone, the
vector retriever alone, fusion without MMR, fusion without freshness. With --audit,
the same figures again with the corrected evidence of locomo-audit-dev.json. Then each
system against the full pipeline question by question (recall_any@5: questions won and
lost, the difference and its paired standard error, 'within noise' under two), recall
per conversation, and the best late-interaction score (`explain.match.best_late`) of
questions asked in their own conversation, in another one and of off-topic questions
(where `match_floor` / `match_full` come from). The last
line of output is one JSON object (full pipeline): n, recall_any@5, recall_any@10,
recall_all@5, recall_all@10, p50_ms, p95_ms (in-process latency of `hippo.search`,
query embedding included: each question is new to the cache on the full-pipeline pass).

`now` for freshness is one day after the conversation's last session, as if the agent
asked right after the conversation ended.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo_common as lc

FULL = "full pipeline"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load_brain(h: Any, convs: Sequence[lc.Conversation]) -> dict[str, int]:
    """Observations -> Brain memories via `Hippo.add`; returns counts (added, reinforced)."""
    from hippo.memory.records import from_input
    from hippo.retrieve.tokencache import warm_caches

    counts = {"memories": 0, "reinforced": 0}
    # One forward pass per text fills both the sentence-vector and the token-matrix
    # caches (what a writer would do), so `Hippo.add` and every search find them cached.
    warm_caches(h.db, h.embedder("brain"), [o.text for c in convs for o in c.observations])
    for c in convs:
        mems = []
        for o in c.observations:
            mems.append(from_input({
                "text": o.text,
                "type": "fact",
                "importance": 0.5,
                "project": c.sample_id,
                "created_at": lc.iso(o.date),
                "source": {"dia_ids": list(o.dia_ids), "session": o.session,
                           "speaker": o.speaker},
            }, h.types, default_project=c.sample_id, default_author="machine"))
        for change in h.add(mems, actor="machine"):
            counts["memories" if change.action == "added" else "reinforced"] += 1
    return counts


def dia_ids(record: dict[str, Any]) -> list[str]:
    src = record.get("source") or {}
    ids = src.get("dia_ids") or []
    return [str(i) for i in (ids if isinstance(ids, list) else [ids])]


def systems(h: Any) -> dict[str, Callable[[str, str, Any], list[list[str]]]]:
    """name -> f(question, project, now) -> dia_id lists of the top 10, best first."""
    import hippo
    from hippo.retrieve import fts, vec
    from hippo.retrieve.params import load_params
    from hippo.retrieve.pipeline import make_filters, query_vector

    base = load_params(h.settings)

    def pipeline(params: Any) -> Callable[[str, str, Any], list[list[str]]]:
        def run(question: str, project: str, now: Any) -> list[list[str]]:
            res = hippo.search(h, question, limit=10, projects=[project], now=now, params=params)
            return [dia_ids(r) for r in res.results]
        return run

    def records(ids: Sequence[int]) -> list[list[str]]:
        from hippo.memory.brain import get

        return [dia_ids(get(h.db, i)) for i in ids]

    def bm25_only(question: str, project: str, now: Any) -> list[list[str]]:
        filters = make_filters(h, projects=[project])
        try:
            hits = fts.search(h.db, question, base.candidates_per_retriever, filters,
                              and_min_hits=base.fts_and_min_hits)
        except fts.FtsUnavailable:
            return []
        return records([x.id for x in hits[:10]])

    def vector_only(question: str, project: str, now: Any) -> list[list[str]]:
        filters = make_filters(h, projects=[project])
        blob = query_vector(h, question, [])
        if blob is None:
            return []
        return records([x.id for x in vec.search(h.db, blob, 10, filters)])

    return {
        FULL: pipeline(base),
        "BM25 only": bm25_only,
        "vector only": vector_only,
        "fusion, no MMR": pipeline(dataclasses.replace(base, mmr_lambda=1.0)),
        "fusion, no freshness": pipeline(dataclasses.replace(base, w_freshness=0.0)),
        "no late interaction": pipeline(dataclasses.replace(base, late_pool=0)),
        "no date windows": pipeline(dataclasses.replace(base, date_boost=0.0)),
        "SPEC defaults (neither)": pipeline(dataclasses.replace(base, late_pool=0,
                                                                date_boost=0.0)),
    }


def forget_questions(h: Any, questions: Sequence[str]) -> int:
    """Drop the questions' cached embeddings (vectors and token matrices), so the
    first pass embeds each one as a new query even on a reused database. A text that is
    also a memory's or a chunk's keeps its cache. Returns the rows deleted."""
    from hippo.embed.cache import content_hash

    hashes = {content_hash(q) for q in questions}
    mark = "%s" if type(h.db).__module__.startswith("hippo.store.postgres") else "?"
    for table in ("memories", "echo_chunks"):
        if h.db.has_table(table):
            hashes -= {r["content_hash"] for r in h.db.rows(f"SELECT content_hash FROM {table}")}
    before = h.db.scalar("SELECT count(*) FROM embed_cache")
    with h.db.transaction():
        for digest in hashes:
            h.db.execute(f"DELETE FROM embed_cache WHERE content_hash = {mark}", (digest,))
    return int(before) - int(h.db.scalar("SELECT count(*) FROM embed_cache"))


def evaluate(h: Any, convs: Sequence[lc.Conversation],
             audit: dict[str, tuple[str, ...]] | None) -> tuple[dict, dict | None, list[float]]:
    """Run every system over every question; reports on dataset (and audit) evidence."""
    qs = lc.eval_questions(convs)
    forget_questions(h, [q.question for _, q in qs])
    qs_audit = {q.qid: q for _, q in lc.eval_questions(convs, audit)} if audit else None
    reports = {name: lc.Report() for name in systems(h)}
    reports_audit = {name: lc.Report() for name in reports} if audit else None
    latencies: list[float] = []
    for name, run in systems(h).items():
        t0 = time.perf_counter()
        for c, q in qs:
            now = c.last_date + timedelta(days=1)
            t = time.perf_counter()
            got = run(q.question, c.sample_id, now)
            if name == FULL:
                latencies.append((time.perf_counter() - t) * 1000)
            reports[name].add(q.category, got, q.evidence, c.sample_id)
            if reports_audit is not None and qs_audit is not None and q.qid in qs_audit:
                aq = qs_audit[q.qid]
                reports_audit[name].add(aq.category, got, aq.evidence, c.sample_id)
        _log(f"locomo: {name}: {len(qs)} questions in {time.perf_counter() - t0:.1f}s")
    return reports, reports_audit, latencies


# Questions about nothing in any LoCoMo conversation (a coding agent's), for the match
# factor's floor: what the best late-interaction score reaches when nothing matches.
OFF_TOPIC = (
    "kubernetes helm chart values", "quantum chromodynamics lattice", "ERR_SSL_PROTOCOL_ERROR",
    "how do I rebase onto main", "segfault in libc malloc", "configure nginx reverse proxy",
    "src/app.py", "--no-verify", "fix the flaky integration test",
    "database migration rollback plan",
)


def match_levels(h: Any, convs: Sequence[lc.Conversation]) -> dict[str, list[float]]:
    """The best late-interaction score (`explain.match.best_late`) of each question asked
    in its own conversation, in another one (three further on), and of `OFF_TOPIC` in
    every conversation and over all of them."""
    import hippo

    def best(question: str, projects: list[str] | None) -> float | None:
        res = hippo.search(h, question, limit=1, projects=projects, explain=True)
        m = res.results[0]["explain"].get("match") if res.results else None
        return m["best_late"] if m else None

    ids = [c.sample_id for c in convs]
    levels: dict[str, list[float]] = {"own conversation": [], "another conversation": [],
                                      "off-topic, one conversation": [],
                                      "off-topic, all conversations": []}
    for c, q in lc.eval_questions(convs):
        other = ids[(ids.index(c.sample_id) + 3) % len(ids)]
        for key, proj in (("own conversation", c.sample_id), ("another conversation", other)):
            value = best(q.question, [proj])
            if value is not None:
                levels[key].append(value)
    for question in OFF_TOPIC:
        for cid in ids:
            value = best(question, [cid])
            if value is not None:
                levels["off-topic, one conversation"].append(value)
        value = best(question, None)
        if value is not None:
            levels["off-topic, all conversations"].append(value)
    return levels


def format_levels(levels: dict[str, list[float]]) -> str:
    cols = (5, 25, 50, 75, 95)
    lines = [("best late-interaction score per question (explain.match.best_late; the match "
              "factor is 0 at match_floor, 1 from match_full)"),
             f"{'questions':<30} {'n':>5} " + " ".join(f"{'p' + str(c):>6}" for c in cols)
             + f" {'max':>6}"]
    for name, values in levels.items():
        if values:
            lines.append(f"{name:<30} {len(values):>5} " +
                         " ".join(f"{lc.percentile(values, c):>6.3f}" for c in cols) +
                         f" {max(values):>6.3f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=lc.DEFAULT_DATA)
    ap.add_argument("--audit", type=Path, default=None,
                    help="locomo-audit-dev.json: add figures with corrected evidence")
    lc.add_store_options(ap, "locomo.db")
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--ranked", type=Path, default=None,
                    help="write every question's ranked results here (JSON), to compare runs")
    args = ap.parse_args(argv)

    convs = lc.load(args.data)
    audit = lc.load_audit(args.audit, convs) if args.audit else None
    with lc.private_home("hippo-locomo-") as tmp, lc.store_location(args, tmp) as where:
        from hippo.core import Hippo

        h = Hippo.open(where, embedder=args.embedder)
        fresh = h.db.lexical.extent("brain") == 0
        t0 = time.perf_counter()
        counts = load_brain(h, convs) if fresh else {"memories": "reused"}
        load_s = time.perf_counter() - t0
        _log(f"locomo: loaded {counts} in {load_s:.1f}s")
        t0 = time.perf_counter()
        reports, reports_audit, latencies = evaluate(h, convs, audit)
        eval_s = time.perf_counter() - t0
        levels = match_levels(h, convs)
        h.close()

    if args.ranked:
        lc.write_ranked(reports, args.ranked)
    drops = lc.dropped_counts(convs)
    print(f"LoCoMo observations as Brain memories: {args.data.name}, "
          f"{len(convs)} conversations, embedder {args.embedder}")
    print(f"memories: {counts}; load {load_s:.1f}s, questions {eval_s:.1f}s")
    print(f"evidence: dropped {drops['qa_ids_dropped']} malformed/nonexistent QA ids "
          f"({drops['qa_questions_touched']} questions touched, "
          f"{drops['qa_questions_without_evidence']} left without evidence and skipped); "
          f"dropped {drops['observation_ids_dropped']} observation ids")
    print()
    print(lc.format_table(reports, "recall over dataset evidence"))
    if reports_audit is not None:
        print()
        print(lc.format_table(reports_audit,
                              f"recall over audit-corrected evidence ({len(audit or {})} QAs "
                              "re-cited)"))
    print()
    print(lc.format_paired(reports, FULL))
    print()
    print(lc.format_conversations(reports, [FULL, "BM25 only"]))
    if any(levels.values()):
        print()
        print(format_levels(levels))
    full = lc.final_line(reports[FULL], latencies)
    bm25 = reports["BM25 only"].overall.figures()["recall_any@5"]
    print()
    print(f"full pipeline vs its BM25-only ablation, recall_any@5: "
          f"{full['recall_any@5']:.3f} vs {bm25:.3f}")
    print(json.dumps(full))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
