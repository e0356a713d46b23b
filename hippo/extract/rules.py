"""The `rules` extractor, hippo's default: offline and deterministic, it learns the durable
statements of a session, whatever their wording.

It reads, in order: the statements of compaction summaries (an LLM's own choice of what
mattered, `hippo.extract.summary`); every prose message of the person and the agent, cut
into units and selected by structure (`hippo.extract.units`, `hippo.extract.statements`),
typed and weighted by the cue table where a cue fires (`hippo.extract.cues`); and the
session's tool calls as evidence (`hippo.extract.conversation`: the pre-commit gate, a
command that failed then passed, a task closed with its reason). Never a tool's output or
text a harness injected. A session's repeats collapse into one candidate with all their
chunks; one message gives at most `MAX_PER_MESSAGE` statements, its strongest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hippo.extract.base import PENDING_TAG, Candidate, Extractor, SessionChunks
from hippo.extract.blocks import _INLINE_TAGS, Message, messages
from hippo.extract.conversation import GATE_TAG, calls, gate
from hippo.extract.cues import ANSWER, EMPHATIC, IMPERATIVE, MAX_CHARS, Cue, fit, scan
from hippo.extract.evidence import STATE_TAG, closes, states
from hippo.extract.failures import error_fixes, retries
from hippo.extract.fixes import FIX_TAG, PROBLEM, fixes
from hippo.extract.statements import (
    THRESHOLD,
    Where,
    content_words,
    features,
    repeats,
    score,
    text_of,
    typed,
)
from hippo.extract.subjects import Read, carry, reads_before
from hippo.extract.summary import statements
from hippo.extract.units import Unit, units
from hippo.extract.written import constants, doc_comments
from hippo.memory.records import normalise_text

# Tags of what a compaction summary said (a pending task also carries PENDING_TAG).
SUMMARY_TAGS = ("summary",)
PENDING_TAGS = ("summary", PENDING_TAG)
#: The most statements one message gives (its strongest): a long report is not a flood.
MAX_PER_MESSAGE = 12
#: A state (a test run's counts, a work tree, a push) matters while it is current and when
#: asked for, not beside what the session established: it ranks below a statement.
STATE_IMPORTANCE = 0.3
#: A subagent's statements are its report to the agent that started it (what it read, when
#: asked), not what the conversation concluded: they rank below the session's own.
SUBAGENT_LOWER = 0.2
SUBAGENT_FLOOR = 0.3
_I = re.IGNORECASE


class _Found:
    """Candidates by (type, normalised text), in the order first found; a repeat raises
    the importance to the highest seen and adds its evidence."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str], Candidate] = {}

    def add(self, mtype: str, text: str, importance: float, evidence: Sequence[int],
            tags: Sequence[str] = (), confidence: float = 0.4,
            closes: tuple[str, ...] = (), touches: tuple[tuple[str, int], ...] = (),
            replaces: tuple[str, ...] = ()) -> None:
        key = (mtype, normalise_text(text))
        prev = self.found.get(key)
        if prev is None:
            self.found[key] = Candidate(mtype, text, round(importance, 2), list(evidence),
                                        list(tags), confidence, closes, touches, replaces)
        else:
            prev.importance = max(prev.importance, round(importance, 2))
            prev.evidence += [c for c in evidence if c not in prev.evidence]

    def collapsed(self) -> list[Candidate]:
        """The candidates, a statement repeated in other words folded into the fuller one
        (its evidence added, importance up): within a session, one memory per statement."""
        out: list[tuple[Candidate, frozenset[str]] | None] = []
        for cand in self.found.values():
            words = content_words(cand.text)
            absorbed = False
            took: int | None = None  # where the first statement it says it all of stood
            for i, entry in enumerate(out):
                if entry is None:
                    continue
                kept, kept_words = entry
                if {PENDING_TAG, STATE_TAG} & {*kept.tags, *cand.tags} or kept.closes \
                        or cand.closes:
                    continue  # a pending task, a state, or what closes a task stays itself
                short, long = sorted(((cand, words), (kept, kept_words)),
                                     key=lambda cw: len(cw[1]))
                if repeats(short[1], long[1]) or normalise_text(short[0].text).rstrip(".") in \
                        normalise_text(long[0].text):
                    long[0].evidence += [c for c in short[0].evidence
                                         if c not in long[0].evidence]
                    long[0].importance = round(min(0.95, max(kept.importance,
                                                             cand.importance) + 0.05), 2)
                    if long[0] is kept:
                        absorbed = True
                        break
                    out[i] = None  # the new one says it all: it takes the place of each
                    took = i if took is None else took
            if took is not None:
                out[took] = (cand, words)
            elif not absorbed:
                out.append((cand, words))
        return [e[0] for e in out if e is not None]


def _summaries(msgs: Sequence[Message], texts: dict[int, str], found: _Found) -> None:
    """The statements of compaction summaries (pending tasks from the newest one only)."""
    summaries = [m for m in msgs if m.role == "summary"]
    for msg in summaries:
        latest = msg is summaries[-1]
        for stmt in statements(msg.text):
            if stmt.pending and not latest:
                continue  # only the newest summary says what is still pending
            where = [c for p in stmt.probes for c in msg.chunk_ids if p and p in texts[c]]
            found.add(stmt.type, stmt.text, stmt.importance,
                      list(dict.fromkeys(where)) or msg.chunk_ids,
                      PENDING_TAGS if stmt.pending else SUMMARY_TAGS, 0.5)


_FIX = re.compile(r"^(?:(?:the )?(?:fix|solution)\s*(?::|is\b|was\b)|to fix (?:it|this)\b)", _I)
_ACCEPT = re.compile(r"^(?:good|great|perfect|nice|excellent|thanks|thank you|yes|yep|ok(?:ay)?"
                     r"|lgtm|works|that (?:fixed|worked|works|did it|solved)|it works|fixed)\b", _I)


def turns(msgs: Sequence[Message], *, subagent: bool = False) -> list[tuple[Message, Where]]:
    """The prose messages of a session, each with where it stands in its turn: the agent's
    prose followed by a tool call of the same turn is mid-turn; the agent's last prose of a
    turn is accepted when the person's next words accept it. In a subagent's session the
    "user" turns are the parent agent's instructions, not a person's words: left out."""
    out: list[tuple[Message, Where]] = []
    prose = [i for i, m in enumerate(msgs) if m.is_prose]
    for n, i in enumerate(prose):
        msg = msgs[i]
        nxt = prose[n + 1] if n + 1 < len(prose) else len(msgs)
        if msg.role == "user":
            if not subagent:
                out.append((msg, Where("user")))
            continue
        midturn = any(m.tool_call for m in msgs[i + 1:nxt])
        reply = msgs[nxt] if nxt < len(msgs) else None
        accepted = (not midturn and reply is not None and reply.role == "user"
                    and bool(_ACCEPT.match(reply.text.strip())))
        out.append((msg, Where("assistant", midturn, accepted)))
    return out


def _selected(msg: Message, where: Where) -> list[tuple[Unit, float, tuple[Cue, str] | None]]:
    """The units of one message that are statements, with their score and cue."""
    out: list[tuple[Unit, float, tuple[Cue, str] | None]] = []
    for unit in units(_INLINE_TAGS.sub("", msg.text)):
        if out and _FIX.match(unit.text) and not unit.fix:
            # "Fix: use X" after the cause: the problem and its fix are one statement.
            kept = out.pop()[0]
            unit = Unit(f"{kept.text} {unit.text}", unit.kind, unit.heading, unit.index,
                        kept.joined + 1, True)
        hit = scan(unit.text, msg.role)
        feats = features(unit, where, IMPERATIVE, hit is not None)
        if feats is not None and score(feats) >= THRESHOLD:
            out.append((unit, score(feats), hit))
    if len(out) > MAX_PER_MESSAGE:
        keep = sorted(range(len(out)), key=lambda i: -out[i][1])[:MAX_PER_MESSAGE]
        out = [out[i] for i in sorted(keep)]
    return out


_SYMPTOM = re.compile(r"\b(?:wrong|incorrect|crash(?:es|ed)?|hangs?|stuck|blank|broke)\b", _I)
MAX_REPORT = 240
# The questions that end a report: each sentence from the last one that ends with a period.
_ASKED = re.compile(r"(?:(?<=[.!])|^)\s+[^.!?]*\?(?:\s+[^.!?]*\?)*\s*$")


def report(msg: Message | None) -> Message | None:
    """The person's report of a problem the agent answers next ("The chart shows events on
    the previous day"): a short statement that names a problem, the question that may
    follow it left out ("… on inserts. What happened?": the part before the question)."""
    if msg is None or msg.role != "user" or not msg.is_prose or msg.text.startswith("Answer to \""):
        return None
    text = _ASKED.sub("", " ".join(msg.text.split()))
    if (not text or len(text) > MAX_REPORT or text.endswith("?")
            or not (PROBLEM.search(text) or _SYMPTOM.search(text))):
        return None
    return Message(msg.role, text, msg.chunk_ids)


def _prose(msg: Message, where: Where, found: _Found, lower: float = 0.0,
           reads: Sequence[Read] = (), reported: Message | None = None) -> None:
    """The durable statements of one message (`hippo.extract.statements`), their importance
    `lower` less (a subagent's report), each carrying the file it is about when the agent
    read it just before (`reads`, `hippo.extract.subjects`); the agent's first cause-and-fix
    after the person's report of a problem (`reported`) says the problem first."""
    if msg.role == "user" and msg.text.startswith('Answer to "'):
        # The person's answer to a question the agent asked: a decision, whole.
        for line in msg.text.splitlines():
            if ANSWER.match(line):
                found.add("decision", line, 0.75, msg.chunk_ids, (), 0.5)
        return
    for mtype, text, importance, tags in _statements(msg, where):
        importance = max(SUBAGENT_FLOOR, importance - lower) if lower else importance
        evidence: Sequence[int] = msg.chunk_ids
        if reads and (carried := carry(text, reads)) is not None and len(carried[0]) <= MAX_CHARS:
            text, evidence = carried[0], [*msg.chunk_ids, *carried[1]]
        if reported is not None and mtype == "insight":
            said = " ".join(reported.text.split())
            if len(said) + len(text) < MAX_CHARS:
                text, evidence = f"{said.rstrip('.')}: {text}", [*reported.chunk_ids, *evidence]
            reported = None
        found.add(mtype, text, importance, evidence, tags,
                  0.5 if importance >= 0.7 else 0.4)


def _said(msg: Message) -> list[str]:
    """The statements kept of the agent's prose right before a call (mid-turn)."""
    return [text for _, text, _, _ in _statements(msg, Where("assistant", True, False))]


def _statements(msg: Message, where: Where) -> list[tuple[str, str, float, Sequence[str]]]:
    """(type, text, importance, tags) of each statement of one prose message."""
    out: list[tuple[str, str, float, Sequence[str]]] = []
    for unit, points, hit in _selected(msg, where):
        # A cue's own statement where it has one (a clause cut at the cue, a template).
        text = fit(hit[1] if hit is not None and unit.kind == "sentence" and unit.joined == 1
                    else text_of(unit))
        mtype = hit[0].type if hit is not None and not unit.fix else typed(unit, where, IMPERATIVE)
        importance = hit[0].importance if hit else min(0.8, points - 0.2)
        if EMPHATIC.search(unit.text) and where.role == "user":
            importance = min(0.95, importance + 0.05)
        out.append((mtype, text, importance, hit[0].tags if hit else ()))
    return out


class RulesExtractor(Extractor):
    """Compaction summaries, the statements of the person and the agent, and what the
    session's tool calls show (the gate, failures and their fixes, closed tasks)."""

    name = "rules"

    def extract(self, session: SessionChunks) -> list[Candidate]:
        found = _Found()
        msgs = messages(session.chunks)
        _summaries(msgs, {c.id: c.text for c in session.chunks}, found)
        read = reads_before(msgs)
        before: Message | None = None
        for msg, where in turns(msgs, subagent=session.parent is not None):
            _prose(msg, where, found, SUBAGENT_LOWER if session.parent is not None else 0.0,
                   read.get(id(msg), ()), report(before))
            before = msg
        seq = calls(msgs)
        said = [(c.text, c.evidence) for c in found.found.values()]
        new = set(session.chunk_ids)
        everything = messages([*session.before, *session.chunks]) if session.before else msgs
        every_call = calls(everything) if session.before else seq
        for stmt, replaces, held in fixes(everything, every_call, _said, said):
            if not new.issuperset(held):
                continue  # the run before saw it hold: it wrote this fix then
            found.add(stmt.type, stmt.text, stmt.importance, stmt.evidence, (FIX_TAG,),
                      replaces=replaces)
        procedure = gate(seq)
        if procedure is not None:
            found.add(procedure.type, procedure.text, procedure.importance,
                      procedure.evidence, (GATE_TAG,), 0.5)
        for stmt in (*error_fixes(seq), *retries(seq), *doc_comments(seq), *constants(seq)):
            found.add(stmt.type, stmt.text, stmt.importance, stmt.evidence)
        for stmt, ids, touched in closes(seq):
            found.add(stmt.type, stmt.text, stmt.importance, stmt.evidence, closes=ids,
                      touches=touched)
        for state in states(seq):
            found.add("observability", state.text, STATE_IMPORTANCE, state.evidence, (STATE_TAG,))
        return found.collapsed()
