"""LoCoMo through `hippo extract`: how much of the evidence an extracted Brain can surface.

Each conversation's sessions are written to Echo as sessions of their own (project = the
sample id), one chunk per turn whose message id is the turn's dia_id. `extract` (the
`rules` extractor by default) turns them into Brain memories; every category 1-4 question
is then asked with `hippo.retrieve.pipeline.search` (limit 10, that conversation's project)
and scored by the dia_ids its results reach through provenance (memory -> memory_sources ->
chunk -> message ids). Next to it, the same search over the dataset's own observations
stored as memories (the observation-based figure), and the ceiling: the share of questions
with any evidence turn behind any extracted memory at all.

    python bench/locomo_extract.py [--data FILE] [--embedder local|hash] [--extractor rules]

The rules extractor is built for coding sessions (decisions, rules, todos, config facts);
in casual chat it finds little, and the figure says so. The last line of output is one JSON
object with the overall figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo_common as lc

LIMIT = 10


def open_hippo(path: Path, embedder: str) -> Any:
    from hippo.core import Hippo

    return Hippo.open(path, embedder=embedder, project="locomo")


def ingest(h: Any, conv: lc.Conversation) -> int:
    """One Echo session per LoCoMo session; one chunk per turn (message id = dia_id)."""
    from hippo.ingest.chunk import Chunk

    n = 0
    by_session: dict[int, list[lc.Turn]] = {}
    for t in conv.turns:
        by_session.setdefault(t.session, []).append(t)
    with h.db.transaction():
        for s, turns in sorted(by_session.items()):
            stamp = lc.iso(conv.session_dates[s])
            key = f"{conv.sample_id}/session_{s}"
            sid = h.db.chunks.add_session(key, fmt="locomo", source_path=f"locomo:{key}",
                                  project=conv.sample_id, cwd=None, parent_key=None,
                                  agent=None, started_at=stamp)
            chunks = []
            for i, t in enumerate(turns, start=1):
                text = t.text + (f" [shares a photo: {t.caption}]" if t.caption else "")
                chunks.append(Chunk(f"user: {t.speaker}: {text}", ["user"], i, i, [t.dia_id],
                                    stamp, stamp, key))
            h.db.chunks.add(sid, chunks, [c.text for c in chunks], None,
                            source_path=f"locomo:{key}", project=conv.sample_id)
            h.db.chunks.update_session(sid, messages=len(chunks), ended_at=stamp,
                               started_at=stamp, cwd=None, project=conv.sample_id, agent=None,
                               parent_key=None)
            n += len(chunks)
    return n


def extract(h: Any, extractor: str) -> dict[str, Any]:
    from hippo.extract import get
    from hippo.extract.run import Extraction
    from hippo.extract.settings import ExtractSettings

    conf = ExtractSettings.from_settings(h.settings, extractor=extractor)
    x = Extraction(h, get(conf.extractor, h, conf), conf, run_id="locomo-extract")
    events: list[dict[str, Any]] = []
    summary = x.run(x.plan(), events.append)
    summary["types"] = dict(Counter(e["type"] for e in events
                                    if e["event"] == "memory" and e["action"] == "add"))
    return summary


def dia_ids_of(h: Any) -> dict[int, set[str]]:
    """memory id -> dia_ids of the turns behind it (provenance through memory_sources)."""
    out: dict[int, set[str]] = {}
    for mid, ids in h.db.execute(
            "SELECT s.memory_id, c.message_ids FROM memory_sources s "
            "JOIN echo_chunks c ON c.id = s.chunk_id"):
        out.setdefault(mid, set()).update(json.loads(ids))
    return out


def covered_turns(h: Any) -> dict[str, set[str]]:
    """conversation -> dia_ids of the turns behind any extracted memory (dia_ids repeat
    across conversations, so they are kept apart)."""
    out: dict[str, set[str]] = {}
    for project, ids in h.db.execute(
            "SELECT c.project, c.message_ids FROM memory_sources s "
            "JOIN echo_chunks c ON c.id = s.chunk_id"):
        out.setdefault(project, set()).update(json.loads(ids))
    return out


def store_observations(h: Any, convs: list[lc.Conversation]) -> dict[int, set[str]]:
    """The dataset's observations as machine facts; memory id -> their dia_ids."""
    from hippo.memory.records import NewMemory

    mems = [NewMemory(text=f"{o.speaker}: {o.text}", type="fact", tier="semantic",
                      project=c.sample_id, author="machine", created_at=lc.iso(o.date),
                      source={"dia_ids": list(o.dia_ids)})
            for c in convs for o in c.observations if o.dia_ids]
    out: dict[int, set[str]] = {}
    for change in h.add(mems, actor="bench"):
        out.setdefault(change.record["id"], set()).update(change.record["source"]["dia_ids"])
    return out


def evaluate(h: Any, questions: list[tuple[lc.Conversation, lc.Question]],
             dia: dict[int, set[str]]) -> tuple[lc.Report, list[float]]:
    from hippo.retrieve.pipeline import search

    report = lc.Report()
    latencies: list[float] = []
    for conv, q in questions:
        t0 = time.perf_counter()
        res = search(h, q.question, limit=LIMIT, projects=[conv.sample_id], rerank=False)
        latencies.append((time.perf_counter() - t0) * 1000)
        report.add(q.category, [sorted(dia.get(r["id"], ())) for r in res.results], q.evidence)
    return report, latencies


def ceiling(questions: list[tuple[lc.Conversation, lc.Question]],
            covered: dict[str, set[str]]) -> float:
    """Share of questions with an evidence turn behind any extracted memory (recall bound)."""
    hit = sum(1 for c, q in questions if covered.get(c.sample_id, set()) & set(q.evidence))
    return round(hit / len(questions), 4) if questions else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=lc.DEFAULT_DATA)
    ap.add_argument("--embedder", default="local", help="local (default) or hash")
    ap.add_argument("--extractor", default="rules")
    ap.add_argument("--db-dir", type=Path, default=None, help="keep the databases here")
    args = ap.parse_args(argv)

    convs = lc.load(args.data)
    questions = lc.eval_questions(convs)
    work = args.db_dir or Path(tempfile.mkdtemp(prefix="locomo-extract-"))
    work.mkdir(parents=True, exist_ok=True)
    h = open_hippo(work / "extracted.db", args.embedder)
    t0 = time.perf_counter()
    turns = sum(ingest(h, c) for c in convs)
    summary = extract(h, args.extractor)
    extract_s = time.perf_counter() - t0
    dia = dia_ids_of(h)
    covered = covered_turns(h)
    rep_x, lat_x = evaluate(h, questions, dia)

    ho = open_hippo(work / "observations.db", args.embedder)
    obs = store_observations(ho, convs)
    rep_o, _ = evaluate(ho, questions, obs)

    print(f"LoCoMo {args.data.name}: {len(convs)} conversations, {turns} turns, "
          f"{len(questions)} questions (categories 1-4); dropped ids: {lc.dropped_counts(convs)}")
    print(f"extract ({args.extractor}): {summary['added']} memories added, "
          f"{summary['reinforced']} reinforced, {summary['linked']} linked, from "
          f"{summary['sessions']} sessions in {extract_s:.1f} s; types {summary['types']}")
    print(f"turns behind some extracted memory: {sum(len(v) for v in covered.values())} of "
          f"{turns}; questions with an evidence turn behind one (ceiling): "
          f"{ceiling(questions, covered)}")
    print(lc.format_table({f"extracted ({args.extractor})": rep_x,
                           "observations (dataset)": rep_o},
                          f"turn-level recall through provenance, search limit {LIMIT}, "
                          f"embedder {args.embedder}"))
    fx, fo = rep_x.overall.figures(), rep_o.overall.figures()
    line = {"n": fx["n"], "extractor": args.extractor, "memories": summary["added"],
            "recall_any@5": fx["recall_any@5"], "recall_any@10": fx["recall_any@10"],
            "recall_all@5": fx["recall_all@5"], "recall_all@10": fx["recall_all@10"],
            "ceiling": ceiling(questions, covered),
            "observations_recall_any@5": fo["recall_any@5"],
            "observations_recall_any@10": fo["recall_any@10"],
            "p50_ms": round(lc.percentile(lat_x, 50), 2), "embedder": args.embedder}
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
