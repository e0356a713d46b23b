"""Shared LoCoMo loading and retrieval metrics for `bench/locomo.py` and `bench/locomo_echo.py`.

No hippo imports here: this module only reads the benchmark file and scores ranked lists,
so `tests/bench/test_locomo_metrics.py` can check it on a tiny hand-made sample.

Data (see ../shared/data/README.md): a list of samples, each with `conversation`
(`speaker_a`, `speaker_b`, `session_N` turn lists, `session_N_date_time`), `observation`
(`session_N_observation` -> {speaker: [[fact, dia_id(s)], ...]}) and `qa`
(`question`, `answer`, `evidence`, `category`; 5 = adversarial, left out of recall).

Metric: a question is a hit at k for recall_any when any of its evidence dia_ids is
among the dia_ids of the top-k retrieved items, for recall_all when all of them are.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import statistics
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CATEGORIES: Mapping[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS: tuple[int, ...] = (5, 10)
REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo10-dev.json"

_ID_SPLIT = re.compile(r"[;,\s]+")
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.IGNORECASE
)
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], start=1)}


@contextlib.contextmanager
def private_home(prefix: str) -> Iterator[Path]:
    """A temporary directory whose `home/` is HIPPO_HOME: no user config changes the figures."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        home = Path(tmp, "home")
        home.mkdir()
        os.environ["HIPPO_HOME"] = str(home)
        os.environ.setdefault("HIPPO_NO_PROGRESS", "1")
        yield Path(tmp)


def add_store_options(ap: Any, default_name: str) -> None:
    """--db (a SQLite file or a PostgreSQL URL) and --pg (a fresh schema on the tests' server)."""
    ap.add_argument("--db", default=None,
                    help="keep the store here: a SQLite file or a postgresql:// URL (reused "
                         "when it holds the data: no re-embedding)")
    ap.add_argument("--pg", action="store_true",
                    help="a fresh schema on the tests' PostgreSQL server (tests/pgtest.py: "
                         "HIPPO_TEST_PG_URL, else pgserver), dropped afterwards")
    ap.set_defaults(store_name=default_name)


@contextlib.contextmanager
def store_location(args: Any, tmp: Path) -> Iterator[Path | str]:
    """Where the bench's store is (see `add_store_options`); a new file in `tmp` by default.
    Imports hippo and tests only when asked for a server."""
    if args.pg:
        import sys

        sys.path.insert(0, str(REPO))
        from tests.pgtest import store_url

        with store_url("bench") as url:
            yield url
        return
    if args.db and args.db.startswith(("postgresql://", "postgres://")):
        yield args.db
        return
    yield Path(args.db) if args.db else tmp / args.store_name


def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime (LoCoMo's session stamp format)."""
    m = _DATE.match(text)
    if not m:
        raise ValueError(f"unrecognised LoCoMo date {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    mon = _MONTHS.get(month.lower())
    if mon is None:
        raise ValueError(f"unrecognised month in {text!r}")
    return datetime(int(year), mon, int(day), h, int(minute), tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def split_ids(raw: str | Sequence[str] | None) -> list[str]:
    """Every id token in a dia_id field: a string or a list, split on `;`, `,` and spaces."""
    if raw is None:
        return []
    items = [raw] if isinstance(raw, str) else list(raw)
    out: list[str] = []
    for item in items:
        out.extend(t for t in _ID_SPLIT.split(str(item)) if t)
    return out


def clean_ids(raw: str | Sequence[str] | None, valid: Iterable[str]) -> tuple[list[str], list[str]]:
    """(kept ids in order without repeats, dropped tokens): ids not in `valid` are dropped."""
    known = valid if isinstance(valid, set | frozenset) else set(valid)
    kept: list[str] = []
    dropped: list[str] = []
    for tok in split_ids(raw):
        if tok in known:
            if tok not in kept:
                kept.append(tok)
        else:
            dropped.append(tok)
    return kept, dropped


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    date: datetime
    seq: int  # position in the whole conversation, 0-based
    caption: str | None = None  # an image's caption when the turn shared one


@dataclass(frozen=True, slots=True)
class Observation:
    text: str
    speaker: str
    session: int
    date: datetime
    dia_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Question:
    qid: str  # locomo_<conversation index>_qa<qa index>, as the audit file names it
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]
    dropped: tuple[str, ...] = ()


@dataclass(slots=True)
class Conversation:
    index: int
    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    session_dates: dict[int, datetime] = field(default_factory=dict)
    dropped_observation_ids: list[str] = field(default_factory=list)

    @property
    def dia_ids(self) -> set[str]:
        return {t.dia_id for t in self.turns}

    @property
    def last_date(self) -> datetime:
        return max(self.session_dates.values())


def parse_sample(index: int, sample: Mapping) -> Conversation:
    conv = sample["conversation"]
    c = Conversation(index, str(sample.get("sample_id", f"conv-{index}")),
                     (conv["speaker_a"], conv["speaker_b"]))
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    seq = 0
    for s in sessions:
        turns = conv[f"session_{s}"]
        if not isinstance(turns, list):
            continue
        date = parse_session_date(conv[f"session_{s}_date_time"])
        c.session_dates[s] = date
        for t in turns:
            caption = t.get("blip_caption") or None
            c.turns.append(Turn(t["dia_id"], t["speaker"], t.get("text", ""), s, date, seq,
                                caption))
            seq += 1
    valid = c.dia_ids
    for key, per_speaker in (sample.get("observation") or {}).items():
        m = re.match(r"^session_(\d+)_observation$", key)
        if not m or int(m.group(1)) not in c.session_dates:
            continue
        s = int(m.group(1))
        for speaker, facts in per_speaker.items():
            for fact in facts:
                text, raw_ids = fact[0], fact[1] if len(fact) > 1 else None
                kept, dropped = clean_ids(raw_ids, valid)
                c.dropped_observation_ids.extend(dropped)
                c.observations.append(Observation(str(text), speaker, s, c.session_dates[s],
                                                  tuple(kept)))
    for qi, qa in enumerate(sample.get("qa") or []):
        cat = int(qa.get("category", 0))
        kept, dropped = clean_ids(qa.get("evidence"), valid)
        c.questions.append(Question(f"locomo_{index}_qa{qi}", str(qa.get("question", "")),
                                    str(qa.get("answer", qa.get("adversarial_answer", ""))),
                                    cat, tuple(kept), tuple(dropped)))
    return c


def load(path: str | Path) -> list[Conversation]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return [parse_sample(i, s) for i, s in enumerate(data)]


def load_audit(path: str | Path, convs: Sequence[Conversation]) -> dict[str, tuple[str, ...]]:
    """question_id -> corrected evidence (only entries with a usable `correct_evidence`)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    valid = {f"locomo_{c.index}_": c.dia_ids for c in convs}
    out: dict[str, tuple[str, ...]] = {}
    for entry in data:
        qid = entry.get("question_id", "")
        ev = entry.get("correct_evidence")
        if not ev or sorted(split_ids(ev)) == sorted(split_ids(entry.get("cited_evidence"))):
            continue  # no correction, or the same citation
        prefix = qid[: qid.index("qa")] if "qa" in qid else ""
        kept, _ = clean_ids(ev, valid.get(prefix, set()))
        if kept:
            out[qid] = tuple(kept)
    return out


def eval_questions(convs: Sequence[Conversation],
                   audit: Mapping[str, tuple[str, ...]] | None = None
                   ) -> list[tuple[Conversation, Question]]:
    """Category 1-4 questions that keep at least one evidence id (audit evidence if given)."""
    out = []
    for c in convs:
        for q in c.questions:
            if q.category not in CATEGORIES:
                continue
            if audit is not None and q.qid in audit:
                q = Question(q.qid, q.question, q.answer, q.category, audit[q.qid], q.dropped)
            if q.evidence:
                out.append((c, q))
    return out


def dropped_counts(convs: Sequence[Conversation]) -> dict[str, int]:
    """How many malformed/nonexistent evidence tokens were dropped, and what it cost."""
    qs = [q for c in convs for q in c.questions if q.category in CATEGORIES]
    return {
        "qa_ids_dropped": sum(len(q.dropped) for q in qs),
        "qa_questions_touched": sum(1 for q in qs if q.dropped),
        "qa_questions_without_evidence": sum(1 for q in qs if not q.evidence),
        "observation_ids_dropped": sum(len(c.dropped_observation_ids) for c in convs),
    }


# -- metrics -------------------------------------------------------------------------

def hit(retrieved: Sequence[Iterable[str]], evidence: Iterable[str], k: int) -> tuple[bool, bool]:
    """(any, all) evidence ids among the ids of the first k retrieved items."""
    ev = set(evidence)
    if not ev:
        raise ValueError("a question without evidence cannot be scored")
    seen: set[str] = set()
    for ids in retrieved[:k]:
        seen.update(ids)
    return bool(ev & seen), ev <= seen


@dataclass(slots=True)
class Tally:
    """Recall counters for one system over a set of questions."""

    n: int = 0
    any_: dict[int, int] = field(default_factory=lambda: {k: 0 for k in KS})
    all_: dict[int, int] = field(default_factory=lambda: {k: 0 for k in KS})
    # recall_any@5 of each question, in the order added: systems run over the same
    # questions in the same order, so two tallies compare question by question (`paired`).
    hits: list[bool] = field(default_factory=list)

    def add(self, retrieved: Sequence[Iterable[str]], evidence: Iterable[str]) -> None:
        self.n += 1
        for k in KS:
            a, b = hit(retrieved, evidence, k)
            self.any_[k] += a
            self.all_[k] += b
            if k == KS[0]:
                self.hits.append(a)

    def figures(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"n": self.n}
        for k in KS:
            out[f"recall_any@{k}"] = round(self.any_[k] / self.n, 4) if self.n else 0.0
        for k in KS:
            out[f"recall_all@{k}"] = round(self.all_[k] / self.n, 4) if self.n else 0.0
        return out


@dataclass(slots=True)
class Report:
    """Per-category and overall tallies for one system."""

    overall: Tally = field(default_factory=Tally)
    by_cat: dict[int, Tally] = field(default_factory=lambda: {c: Tally() for c in CATEGORIES})
    # Per conversation (its sample_id), in the order first seen.
    by_conv: dict[str, Tally] = field(default_factory=dict)
    # What each question retrieved, ranked, in the order added (`write_ranked`).
    ranked: list[list[list[str]]] = field(default_factory=list)

    def add(self, category: int, retrieved: Sequence[Iterable[str]],
            evidence: Iterable[str], conversation: str | None = None) -> None:
        self.ranked.append([sorted(r) for r in retrieved])
        self.overall.add(retrieved, evidence)
        self.by_cat[category].add(retrieved, evidence)
        if conversation is not None:
            self.by_conv.setdefault(conversation, Tally()).add(retrieved, evidence)


def write_ranked(reports: Mapping[str, Report], path: Path) -> None:
    """Every system's ranked results, question by question, as JSON: two runs (before and
    after a change that must not change behaviour) compare with `cmp`."""
    path.write_text(json.dumps({name: rep.ranked for name, rep in reports.items()}) + "\n")


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def format_table(reports: Mapping[str, Report], title: str) -> str:
    """A plain-text table: one row per system x (category, overall)."""
    cols = [f"any@{k}" for k in KS] + [f"all@{k}" for k in KS]
    lines = [title, f"{'system':<24} {'slice':<12} {'n':>5} " + " ".join(f"{c:>7}" for c in cols)]
    for name, rep in reports.items():
        rows = [(CATEGORIES[c], rep.by_cat[c]) for c in CATEGORIES] + [("overall", rep.overall)]
        for label, t in rows:
            f = t.figures()
            vals = [f[f"recall_any@{k}"] for k in KS] + [f[f"recall_all@{k}"] for k in KS]
            lines.append(f"{name:<24} {label:<12} {t.n:>5} " +
                         " ".join(f"{v:>7.3f}" for v in vals))
    return "\n".join(lines)


def standard_error(t: Tally) -> float:
    """One standard error of `t`'s recall_any@5 (binomial: sqrt(p(1-p)/n)); 0.0 when empty."""
    if not t.n:
        return 0.0
    p = t.any_[KS[0]] / t.n
    return math.sqrt(p * (1 - p) / t.n)


def paired(a: Tally, b: Tally) -> tuple[int, int, float]:
    """Questions `a` gets and `b` misses (won), the reverse (lost), and one standard error
    of the difference in recall_any@5 measured on the same questions: sqrt(won + lost) / n.

    Paired, so far tighter than two independent errors: two systems that differ on 8 of
    1,033 questions differ by at most 0.8 points, whatever each one's own error."""
    if a.n != b.n or len(a.hits) != len(b.hits):
        raise ValueError(f"paired tallies must cover the same questions ({a.n} vs {b.n})")
    won = sum(1 for x, y in zip(a.hits, b.hits) if x and not y)
    lost = sum(1 for x, y in zip(a.hits, b.hits) if y and not x)
    return won, lost, (math.sqrt(won + lost) / a.n if a.n else 0.0)


def format_paired(reports: Mapping[str, Report], base: str) -> str:
    """Every system against `base`, question by question (recall_any@5, overall): how many
    questions it wins and loses, the difference and its standard error. A difference
    under two standard errors is not one we can tell from chance."""
    ref = reports[base].overall
    se = standard_error(ref)
    p = ref.any_[KS[0]] / ref.n if ref.n else 0.0
    lines = [(f"recall_any@{KS[0]} question by question against {base!r} "
              f"({p:.3f}, one standard error {se:.3f}: {p - 2 * se:.3f}-{p + 2 * se:.3f} "
              f"at two)"),
             f"{'system':<24} {'won':>5} {'lost':>5} {'diff':>7} {'se':>6}  verdict"]
    for name, rep in reports.items():
        if name == base:
            continue
        won, lost, err = paired(rep.overall, ref)
        diff = (won - lost) / ref.n if ref.n else 0.0
        verdict = ("same" if not won + lost else "within noise" if abs(diff) < 2 * err
                   else "better" if diff > 0 else "worse")
        lines.append(f"{name:<24} {won:>5} {lost:>5} {diff:>+7.3f} {err:>6.3f}  {verdict}")
    return "\n".join(lines)


def format_conversations(reports: Mapping[str, Report], names: Sequence[str]) -> str:
    """recall_any@5 of `names` per conversation, and how far conversations spread.

    Acceptance is measured on conversations held out from tuning, so the spread between
    conversations says how far a few unseen ones may land from the dev figure: the
    questions of one conversation share its people and its habits of citation, which a
    per-question standard error ignores. Per system: the range, the standard deviation
    of the conversations' recalls, and that of a mean over 3 conversations (sd / sqrt 3).
    """
    k = KS[0]
    convs = list(reports[names[0]].by_conv)
    rates = {name: [_rate(reports[name].by_conv.get(c, Tally()), k) for c in convs]
             for name in names}
    width = max(12, *(len(n) for n in names))
    lines = [f"recall_any@{k} per conversation",
             f"{'conversation':<14} {'n':>5}  " + "  ".join(f"{n:>{width}}" for n in names)]
    for i, c in enumerate(convs):
        lines.append(f"{c:<14} {reports[names[0]].by_conv[c].n:>5}  " +
                     "  ".join(f"{rates[n][i]:>{width}.3f}" for n in names))
    for name in names:
        rs = rates[name]
        sd = statistics.stdev(rs) if len(rs) > 1 else 0.0
        lo, hi = (min(rs), max(rs)) if rs else (0.0, 0.0)
        lines.append(f"{name}: {lo:.3f}-{hi:.3f} over {len(rs)} conversations, sd {sd:.3f}; "
                     f"a mean of 3 conversations: sd {sd / math.sqrt(3):.3f}")
    return "\n".join(lines)


def _rate(t: Tally, k: int) -> float:
    return t.any_[k] / t.n if t.n else 0.0


def final_line(report: Report, latencies_ms: Sequence[float]) -> dict[str, float | int]:
    """The last-line JSON object both benches print (full pipeline figures)."""
    f = report.overall.figures()
    return {
        "n": f["n"],
        "recall_any@5": f["recall_any@5"],
        "recall_any@10": f["recall_any@10"],
        "recall_all@5": f["recall_all@5"],
        "recall_all@10": f["recall_all@10"],
        "p50_ms": round(percentile(latencies_ms, 50), 2),
        "p95_ms": round(percentile(latencies_ms, 95), 2),
    }
