"""What a session's new memories retire, in the extract run that writes them.

- **A task shown done** (`hippo.extract.closing`): a tracker close or a commit that names a
  task id retires the project's pending machine memories naming it: `status = done`,
  superseded by the memory that showed it.
- **A problem shown solved**: an open problem this session's memories stated ("CURRENT:
  …", "still fails", "needs to restructure …") is done once a later memory of the same
  session reports the fix (a close, "Fixed …", a failing command that then passed) and shares
  two of its salient words or one of its names.
- **A problem in a file, edited then committed**: an open problem this session stated that
  names a file is done once the session edits that file after it and then commits (the
  commit memory, when its message names a task, is the evidence).
- **A problem and its fix** (`hippo.extract.fixes`): the problem the agent stated right
  before an edit, or whose quoted code the edit removed, is done once the fix (the problem
  and the lines the edit changed, one memory) is written.
- **The newest state** (`hippo.extract.evidence`): a test suite's counts, a work tree, a push
  replace the project's older machine states of the same subject; a test suite's counts also
  replace what the same session said before them of how many tests pass (a state claim in
  prose).
- **A named thing given a new value** (`hippo.extract.values`: "switched from X to Y", "use
  Y instead of X", "S is now V"): the project's memories that state the old value of the same
  thing are superseded when a machine wrote them; a person's becomes a conflict instead
  (`hippo.memory.conflicts`: the new memory is tagged, `hippo list --conflicts` shows it).
- **The newest gate**: a session's pre-commit procedure ("Before committing, run: ...")
  holds the checks of the project's current gate too (`with_older_gates`: sessions run
  different subsets of one project's checks) and replaces the project's older machine-written
  gates: they stay `active`, superseded by the new one, so search and the layers return only
  the newest (`--as-of` the old).

Only machine memories change; a person's is never touched. Every change is audited under the
run id, so `hippo undo RUN` restores it. `valid_to` is when the evidence was said (the
replacing memory's `valid_from`), so `--as-of` a time before the close still answers the
task as open.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hippo.extract.base import Candidate, SessionChunks
from hippo.extract.closing import SOLVED, fixed, retired, solved
from hippo.extract.conversation import GATE_TAG, gate_checks, gate_text, merged_checks
from hippo.extract.evidence import STATE_TAG, count_claim, subject_of, whole_suite
from hippo.extract.values import change as stated_change
from hippo.extract.values import overturned
from hippo.extract.write import ACTOR
from hippo.memory import brain, validity
from hippo.memory.records import normalise_text

if TYPE_CHECKING:
    from hippo.core import Hippo

def _rows(h: Hippo, project: str | None) -> list[dict[str, Any]]:
    from hippo.memory.records import to_record
    from hippo.store.filters import MemoryFilter

    return [to_record(r) for r in h.db.memories.listing(
        MemoryFilter(statuses=("active",), projects=(project,), current=True))]


def retire(h: Hippo, session: SessionChunks, found: Sequence[Candidate],
           stored: Sequence[int | None], *, run_id: str | None) -> Iterator[dict[str, Any]]:
    """Change what the new memories retire; one event per change (`action` done or
    superseded)."""
    movers = [(c, m) for c, m in zip(found, stored)
              if m is not None and (c.closes or c.touches or c.replaces or GATE_TAG in c.tags
                                    or STATE_TAG in c.tags
                                       or SOLVED.search(c.text) or stated_change(c.text))]
    if not movers:
        return
    rows = _rows(h, session.project)
    by_id = {int(r["id"]): r for r in rows}

    def until(mid: int, by: int) -> str | None:
        """When `mid` stopped holding: when its evidence was said (not when extract ran)."""
        old, new = by_id.get(mid), by_id.get(by)
        if old is None or new is None or not new.get("valid_from"):
            return None
        return max(str(old.get("valid_from") or ""), str(new["valid_from"]))

    changed: set[int] = set()
    for cand, by in movers:
        assert by is not None
        # Only what was said before the evidence: re-extracting an old session does not
        # retire what a later session said (its gate, its tasks, its states).
        said = str((by_id.get(by) or {}).get("valid_from") or "")
        before = [r for r in rows if not said or str(r.get("valid_from") or "") <= said]
        if GATE_TAG in cand.tags and (newer := _newer_gate(rows, by, said)) is not None:
            changed.add(by)  # an old session extracted late: the newer gate holds
            if (taken := _absorb(h, by_id[newer], by_id.get(by), session.key, run_id)):
                yield taken
            brain.update(h.db, by, _change({"superseded_by": newer}, said), actor=ACTOR,
                         action="supersede", run_id=run_id)
            yield {"event": "memory", "action": "superseded", "id": by, "by": newer,
                   "session": session.key, "reason": f"the project's newer gate, memory {newer}"}
        for mid, action, reason in _what_it_retires(before, cand, by, session.key):
            if action == "conflict":
                yield _conflict(h, by, mid, reason, session.key, run_id)
                continue
            if mid in changed:
                continue
            changed.add(mid)
            change = {"status": "done"} if action == "done" else {}
            brain.update(h.db, mid, _change({**change, "superseded_by": by}, until(mid, by)),
                         actor=ACTOR, action="done" if action == "done" else "supersede",
                         run_id=run_id)
            yield {"event": "memory", "action": action, "id": mid, "by": by,
                   "session": session.key, "reason": reason}


def _what_it_retires(rows: Sequence[dict[str, Any]], cand: Candidate, by: int,
                     session: str) -> Iterator[tuple[int, str, str]]:
    """(memory id, done | superseded | conflict, why) for each memory the new memory `by`
    retires (or, for a person's, contradicts)."""
    yield from _shown_done(rows, cand, by, session)
    if GATE_TAG in cand.tags:
        for mid in older_gates(rows, by):
            yield mid, "superseded", f"the project's newer gate, memory {by}"
    for row in overturned(rows, cand.text, by):
        if row["author"] == "machine":
            yield int(row["id"]), "superseded", f"a new value of the same thing, memory {by}"
        else:  # a person's memory is never changed: a person decides
            yield int(row["id"]), "conflict", f"memory {by} contradicts a person's memory"
    if STATE_TAG in cand.tags:
        for mid in older_states(rows, cand.text, by, session):
            yield mid, "superseded", f"a newer state of the same thing, memory {by}"


def _shown_done(rows: Sequence[dict[str, Any]], cand: Candidate, by: int,
                session: str) -> Iterator[tuple[int, str, str]]:
    """Tasks shown done and problems shown solved by the new memory `by`."""
    if cand.closes:
        for mid in retired(rows, cand.closes, by):
            yield mid, "done", f"{', '.join(cand.closes)} shown done by memory {by}"
    if SOLVED.search(cand.text):
        for mid in solved(rows, cand.text, session, by):
            yield mid, "done", f"shown solved by memory {by}"
    if cand.touches:
        for mid in fixed(rows, cand.touches, session, by):
            yield mid, "done", f"its file edited, then committed: memory {by}"
    if cand.replaces:
        said = {normalise_text(t) for t in cand.replaces}
        for row in rows:
            text = normalise_text(row["text"])  # the statement, or a memory that holds it
            if (row["id"] != by and row["author"] == "machine" and _of_session(row, session)
                    and any(t in text for t in said)):
                yield int(row["id"]), "done", f"fixed by the edit memory {by} names"


def _conflict(h: Hippo, by: int, person: int, reason: str, session: str,
              run_id: str | None) -> dict[str, Any]:
    """Mark the new machine memory `by` as contradicting the person's memory `person`."""
    from hippo.memory import conflicts

    tags = brain.get(h.db, by)["tags"]
    brain.update(h.db, by, {"tags": conflicts.tags_for(tags, person)}, actor=ACTOR,
                 action="conflict", run_id=run_id)
    return {"event": "memory", "action": "conflict", "id": by, "with": person,
            "session": session, "reason": reason}


def _change(changes: dict[str, Any], valid_to: str | None) -> dict[str, Any]:
    return {**changes, "valid_to": valid_to} if valid_to else changes


def with_older_gates(h: Hippo, session: SessionChunks, found: list[Candidate]
                     ) -> tuple[list[Candidate], dict[int, dict[str, Any]]]:
    """`found` with its gate holding the checks of the project's current machine gate too
    (`merged_checks`), so the newest gate, which replaces it, keeps what an earlier session
    checked; and by the gate's index, the older gates' provenance it takes on (each check
    stays cited). A gate newer than this session's (an old session extracted late) is left
    alone: it holds, and replaces this one."""
    if not any(GATE_TAG in c.tags for c in found):
        return found, {}
    gates = sorted((r for r in _rows(h, session.project) if _current_gate(r)),
                   key=lambda r: str(r.get("valid_from") or ""), reverse=True)
    said = max((validity.canonical(c.started_at) or "" for c in session.chunks), default="")
    if not gates or any(str(r.get("valid_from") or "") > said for r in gates):
        return found, {}
    old = [check for r in gates for check in gate_checks(r["text"])]
    source: dict[str, Any] | None = None
    for r in gates:
        source = brain.merge_source(source, r.get("source"))
    out, sources = list(found), {}
    for i, c in enumerate(found):
        if GATE_TAG in c.tags and gate_checks(c.text):
            out[i] = replace(c, text=gate_text(merged_checks(gate_checks(c.text), old)))
            if out[i].text != c.text and source:
                sources[i] = source
    return out, sources


def _absorb(h: Hippo, newer: dict[str, Any], late: dict[str, Any] | None, session: str,
            run_id: str | None) -> dict[str, Any] | None:
    """The project's newer gate takes the checks of the gate `late` (an old session's,
    extracted after it) it lacks, and cites that gate's chunks: one event, or None."""
    if late is None:
        return None
    text = gate_text(merged_checks(gate_checks(newer["text"]), gate_checks(late["text"])))
    if text == newer["text"]:
        return None
    mid = int(newer["id"])
    brain.update(h.db, mid, {"text": text,
                             "source": brain.merge_source(newer["source"], late["source"])},
                 actor=ACTOR, action="merge", run_id=run_id, vector=h.embed([text])[0])
    brain.link(h.db, mid, brain.chunk_ids(h.db, int(late["id"])), actor=ACTOR, run_id=run_id)
    return {"event": "memory", "action": "merged", "id": mid, "by": int(late["id"]),
            "session": session, "text": text,
            "reason": f"the project's newer gate takes the checks of memory {late['id']}"}


def older_gates(rows: Sequence[dict[str, Any]], newest: int) -> list[int]:
    """The project's other current machine-written gates (`rows`: those said before it)."""
    return [int(r["id"]) for r in rows if r["id"] != newest and _current_gate(r)]


def _current_gate(row: dict[str, Any]) -> bool:
    """A machine-written gate that nothing replaced."""
    return (row["author"] == "machine" and row["type"] == "procedure"
            and GATE_TAG in (row.get("tags") or ()) and row["superseded_by"] is None)


def _newer_gate(rows: Sequence[dict[str, Any]], gate: int, said: str) -> int | None:
    """The project's current machine gate said after `said` (the newest), if any."""
    newer = [r for r in rows if r["id"] != gate and str(r.get("valid_from") or "") > said
             and _current_gate(r)]
    return int(max(newer, key=lambda r: str(r["valid_from"]))["id"]) if newer and said else None


def older_states(rows: Sequence[dict[str, Any]], text: str, newest: int, session: str
                 ) -> list[int]:
    """The project's machine states of the subject `text` is a state of, said before it;
    and for a whole suite's counts, what the same session said earlier of how many pass."""
    subject = subject_of(text)
    new = next((r for r in rows if r["id"] == newest), None)
    if subject is None or new is None:
        return []
    said = str(new.get("valid_from") or "")
    out = []
    for r in rows:
        if r["id"] == newest or r["author"] != "machine" or r["superseded_by"] is not None \
                or str(r.get("valid_from") or "") > said:
            continue
        if STATE_TAG in (r.get("tags") or ()):
            if subject_of(r["text"]) == subject:
                out.append(int(r["id"]))
        elif whole_suite(text) and count_claim(r["text"]) and _of_session(r, session):
            out.append(int(r["id"]))
    return out


def _of_session(row: dict[str, Any], session: str) -> bool:
    sessions = (row.get("source") or {}).get("session")
    return session in (sessions if isinstance(sessions, list) else [sessions])
