"""LoCoMo turn-level recall of Echo transcript search (issue 4).

Usage:
    python bench/locomo_echo.py [--data FILE] [--audit FILE] [--db PATH | URL] [--pg] [--embedder local]

Each LoCoMo session becomes an Echo session (project = the conversation) through the
real store (`store.chunks.add_session` / `add`, vectors from `Hippo.embed(...,
store="echo")`): one chunk per turn, text "Speaker: text", the session date as the
chunk's time, the turn's dia_id as its message id. Every category 1-4 question is asked
against its own conversation; a question is a hit at k when any (recall_any) / all
(recall_all) of its evidence dia_ids are among the top-k chunks.

Systems, in the same run (vectors and token matrices reused):
  * late + dates + neighbours: Echo's own retrievers (`hippo.retrieve.echo_search.lexical` /
    `semantic`, 30 each, plus `semantic` inside the time windows the question names),
    RRF k=60, then the stages of `hippo.retrieve.late` with the Brain pipeline's
    defaults (`SearchParams`): late-interaction rerank of the pool and its session
    neighbours, neighbour support (a chunk gains 0.3 x the best relevance of the
    chunks just before/after it), date boost. This is the proposed `hippo echo`
    ranking and the system on the final JSON line.
  * hippo echo (RRF only): `hippo.retrieve.echo_search.search` as it is today.
  * BM25 only, vector only: Echo's retrievers alone.
  * no neighbours, no dates: one added stage left out (late interaction alone and the
    date stage alone are measured in docs/quality.md).

Last line: one JSON object (proposed system): n, recall_any@5, recall_any@10,
recall_all@5, recall_all@10, p50_ms, p95_ms (in-process; query embedding included).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import locomo_common as lc
from locomo import forget_questions

PROPOSED = "late + dates + neighbours"
# Neighbour support (`hippo.retrieve.late.neighbour_support`): a chunk gains this much of
# the best relevance of the chunks just before and after it in its session.
NEIGHBOUR_WEIGHT = 0.3


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def turn_text(t: lc.Turn, captions: bool = False) -> str:
    """"Speaker: text"; with `captions`, a shared photo's caption is appended, as a
    transcript would carry an attachment's description."""
    text = f"{t.speaker}: {t.text}"
    if captions and t.caption:
        text += f" [shares a photo: {t.caption}]"
    return text


def load_echo(h: Any, convs: Sequence[lc.Conversation], *, tokens: bool,
              captions: bool = False) -> int:
    """Every turn as one Echo chunk; token matrices cached up front when `tokens`."""
    from hippo.ingest.chunk import Chunk
    from hippo.retrieve import tokencache

    n = 0
    for c in convs:
        for s in sorted(c.session_dates):
            turns = [t for t in c.turns if t.session == s]
            if not turns:
                continue
            when = lc.iso(c.session_dates[s])
            texts = [turn_text(t, captions) for t in turns]
            chunks = [Chunk(text, [t.speaker], t.seq, t.seq, [t.dia_id], when, when,
                            f"{c.sample_id}/session_{s}") for t, text in zip(turns, texts)]
            if tokens:  # one forward pass fills the vector and token-matrix caches
                tokencache.warm_caches(h.db, h.embedder("echo"), texts)
            vectors = h.embed(texts, store="echo")
            with h.db.transaction():
                sid = h.db.chunks.add_session(f"{c.sample_id}/session_{s}", fmt="locomo",
                                      source_path=f"locomo/{c.sample_id}.json",
                                      project=c.sample_id, cwd=None, parent_key=None,
                                      agent=None, started_at=when)
                h.db.chunks.add(sid, chunks, texts, vectors,
                                source_path=f"locomo/{c.sample_id}.json", project=c.sample_id)
            n += len(chunks)
    return n


def systems(h: Any) -> dict[str, Callable[[str, str], list[list[str]]]]:
    """name -> f(question, project) -> dia_id lists of the top 10, best first."""
    import orjson

    from hippo.retrieve import echo_search as es
    from hippo.retrieve import tokencache
    from hippo.retrieve.dates import in_any, mentioned_dates
    from hippo.retrieve.fuse import fuse
    from hippo.retrieve.late import late_scores, neighbour_support, rescale
    from hippo.retrieve.params import DEFAULT_PARAMS as P
    from hippo.retrieve.score import parse_timestamp
    from hippo.timeutil import iso

    rows_cache: dict[int, dict[str, Any]] = {}

    def rows(ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        missing = [i for i in ids if i not in rows_cache]
        if missing:
            rows_cache.update(h.db.chunks.get(missing))
        return {i: rows_cache[i] for i in ids if i in rows_cache}

    def dia(ids: Sequence[int]) -> list[list[str]]:
        got = rows(ids)
        return [orjson.loads(got[i]["message_ids"]) for i in ids if i in got]

    def qvec(question: str) -> Any:
        return h.embed([question], store="echo")[0]

    adjacent: dict[int, list[int]] = {}

    def neighbours(ids: Sequence[int]) -> dict[int, list[int]]:
        """Chunk id -> the chunks just before and after it in its session."""
        missing = [i for i in ids if i not in adjacent]
        for i, row in rows(missing).items():
            adjacent[i] = [r["id"] for r in h.db.chunks.neighbours(row, 1)]
        return {i: adjacent.get(i, []) for i in ids}

    def ranked(question: str, project: str, *, late: bool, dates: bool,
               near: bool = False) -> list[int]:
        f = es.EchoFilters(projects=[project])
        rankings: dict[str, list[int]] = {}
        v = qvec(question)
        rankings["vector"] = [i for i, _ in es.semantic(h, v, f, P.candidates_per_retriever)]
        lex = es.lexical(h.db, question, f, P.candidates_per_retriever)
        if lex is not None:
            rankings["bm25"] = lex
        windows = [w.widened(P.date_slack_days) for w in mentioned_dates(question)] \
            if dates else []
        if windows:
            hits: dict[int, float] = {}
            for w in windows[:4]:
                wf = es.EchoFilters(projects=[project], since=iso(w.start), until=iso(w.end))
                for i, d in es.semantic(h, v, wf, P.candidates_per_retriever):
                    hits[i] = min(d, hits.get(i, d))
            rankings["dates"] = sorted(hits, key=lambda i: (hits[i], i))[
                : P.candidates_per_retriever]
        fused = fuse(rankings, P.rrf_k)
        got = rows([x.id for x in fused])
        fused = [x for x in fused if x.id in got]
        rel = {x.id: x.score for x in fused}
        if late and fused:
            pool = [x.id for x in fused[: P.late_pool]]
            if near:  # the pool's session neighbours are candidates too
                adj = neighbours(pool)
                pool = list(dict.fromkeys(pool + [n for i in pool for n in adj[i]]))
                got = rows(pool)
            mats = tokencache.token_matrices(h.db, h.embedder("echo"),
                                             [question] + [got[i]["text"] for i in pool])
            scaled = rescale(late_scores(mats[0], mats[1:]))
            rel = dict(zip(pool, scaled))
            floor = min(scaled, default=0.0)
            rel.update({x.id: floor * x.score for x in fused[P.late_pool:] if x.id not in rel})
            if near:
                rel = neighbour_support(rel, neighbours(list(rel)), NEIGHBOUR_WEIGHT)
        if windows:
            got = rows(list(rel))
            for i in rel:
                if in_any(parse_timestamp(got[i]["started_at"]), windows):
                    rel[i] += P.date_boost
        return sorted(rel, key=lambda i: (-rel[i], i))[:10]

    def proposed(late: bool, dates: bool,
                 near: bool = True) -> Callable[[str, str], list[list[str]]]:
        return lambda q, p: dia(ranked(q, p, late=late, dates=dates, near=near))

    def echo_search(question: str, project: str) -> list[list[str]]:
        res = es.search(h, question, filters=es.EchoFilters(projects=[project]), limit=10)
        return [r["message_ids"] for r in res.results]

    def rrf_only(question: str, project: str) -> list[list[str]]:
        from dataclasses import replace

        plain = replace(P, late_pool=0, date_boost=0.0)
        res = es.search(h, question, filters=es.EchoFilters(projects=[project]), limit=10,
                        params=plain)
        return [r["message_ids"] for r in res.results]

    def bm25_only(question: str, project: str) -> list[list[str]]:
        return dia((es.lexical(h.db, question, es.EchoFilters(projects=[project])) or [])[:10])

    def vector_only(question: str, project: str) -> list[list[str]]:
        hits = es.semantic(h, qvec(question), es.EchoFilters(projects=[project]), 10)
        return dia([i for i, _ in hits])

    return {
        PROPOSED: proposed(True, True),
        "hippo echo": echo_search,
        "hippo echo, RRF only": rrf_only,
        "BM25 only": bm25_only,
        "vector only": vector_only,
        "no neighbours": proposed(True, True, near=False),
        "no dates": proposed(True, False),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=lc.DEFAULT_DATA)
    ap.add_argument("--audit", type=Path, default=None,
                    help="locomo-audit-dev.json: add figures with corrected evidence")
    lc.add_store_options(ap, "locomo-echo.db")
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--ranked", type=Path, default=None,
                    help="write every question's ranked results here (JSON), to compare runs")
    ap.add_argument("--captions", action="store_true",
                    help="append a shared photo's caption to its turn's text")
    args = ap.parse_args(argv)

    convs = lc.load(args.data)
    audit = lc.load_audit(args.audit, convs) if args.audit else None
    qs = lc.eval_questions(convs)
    qs_audit = {q.qid: q for _, q in lc.eval_questions(convs, audit)} if audit else {}
    with lc.private_home("hippo-locomo-echo-") as tmp, lc.store_location(args, tmp) as where:
        from hippo.core import Hippo
        from hippo.retrieve import tokencache

        h = Hippo.open(where, embedder=args.embedder)
        fresh = h.db.lexical.extent("echo") == 0
        t0 = time.perf_counter()
        tokens = tokencache.can_encode_tokens(h.embedder("echo"))
        n_chunks = load_echo(h, convs, tokens=tokens, captions=args.captions) if fresh \
            else "reused"
        load_s = time.perf_counter() - t0
        _log(f"locomo_echo: {n_chunks} chunks in {load_s:.1f}s")
        reports = {}
        reports_audit = {}
        latencies: list[float] = []
        forget_questions(h, [q.question for _, q in qs])  # the first pass meets each as new
        t0 = time.perf_counter()
        for name, run in systems(h).items():
            rep, rep_a = lc.Report(), lc.Report()
            t1 = time.perf_counter()
            for c, q in qs:
                t = time.perf_counter()
                got = run(q.question, c.sample_id)
                if name == PROPOSED:
                    latencies.append((time.perf_counter() - t) * 1000)
                rep.add(q.category, got, q.evidence, c.sample_id)
                if q.qid in qs_audit:
                    rep_a.add(q.category, got, qs_audit[q.qid].evidence, c.sample_id)
            reports[name], reports_audit[name] = rep, rep_a
            _log(f"locomo_echo: {name}: {len(qs)} questions in {time.perf_counter() - t1:.1f}s")
        eval_s = time.perf_counter() - t0
        h.close()

    if args.ranked:
        lc.write_ranked(reports, args.ranked)
    drops = lc.dropped_counts(convs)
    print(f"LoCoMo turns as Echo chunks: {args.data.name}, {len(convs)} conversations, "
          f"embedder {args.embedder}{', photo captions in the text' if args.captions else ''}")
    print(f"chunks: {n_chunks}; load {load_s:.1f}s (embedding + token matrices), "
          f"questions {eval_s:.1f}s")
    print(f"evidence: dropped {drops['qa_ids_dropped']} malformed/nonexistent QA ids "
          f"({drops['qa_questions_touched']} questions touched, "
          f"{drops['qa_questions_without_evidence']} left without evidence and skipped)")
    print()
    print(lc.format_table(reports, "turn recall over dataset evidence"))
    if audit is not None:
        print()
        print(lc.format_table(reports_audit, f"turn recall over audit-corrected evidence "
                                             f"({len(audit)} QAs re-cited)"))
    print()
    print(lc.format_paired(reports, PROPOSED))
    print()
    print(lc.format_conversations(reports, [PROPOSED, "BM25 only"]))
    full = lc.final_line(reports[PROPOSED], latencies)
    bm25 = reports["BM25 only"].overall.figures()["recall_any@5"]
    print()
    print(f"{PROPOSED} vs BM25 only, recall_any@5: {full['recall_any@5']:.3f} vs {bm25:.3f}")
    print(json.dumps(full))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
