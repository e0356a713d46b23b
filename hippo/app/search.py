"""Search the Brain, with what a face says beside the results: the notes.

`search` runs the pipeline (`hippo.retrieve.pipeline`) in a `Scope` and returns the
results at or above the score floor and the notes as data (a kind and its numbers): every
result under the floor, nothing stored answering a prompt, an empty Brain beside an Echo
that holds this project's sessions, memories in other projects when none is in scope.
Each face words them its own way (`hippo search`'s stderr lines, the MCP tool's `note`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.retrieve.request import HERE, Scope

if TYPE_CHECKING:
    from hippo.core import Hippo

__all__ = ["ECHOED", "ELSEWHERE", "HERE", "UNANSWERED", "UNDER_FLOOR", "Found", "Note",
           "Scope", "scope", "search"]

# The kinds of note.
UNDER_FLOOR = "under-floor"  # results, every one under the floor: `best`, `floor`
UNANSWERED = "unanswered"  # a prompt nothing stored answers: `reason` (results withheld)
ECHOED = "echoed"  # no memory in scope, Echo holds `count` chunks (`every`: of every project)
ELSEWHERE = "elsewhere"  # nothing in scope; `count` active memories in other projects


class Note:
    """Something a face says beside the results, as data. (Plain classes here, not
    dataclasses: this module is on the search fast path, and making a dataclass costs
    more than the search's own work at start-up.)"""

    __slots__ = ("best", "count", "every", "floor", "kind", "project", "reason")

    def __init__(self, kind: str, *, count: int = 0, best: float = 0.0, floor: float = 0.0,
                 reason: str = "", every: bool = False, project: str | None = None) -> None:
        self.kind, self.count, self.best, self.floor = kind, count, best, floor
        self.reason, self.every = reason, every
        self.project = project  # the project searched besides global memories

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Note) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self) -> str:
        return f"Note({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


class Found:
    """A search's results at or above the floor, best first, and its notes.

    `query` is the query as searched (empty: nothing to search for); `degraded` names
    every fallback the pipeline took."""

    __slots__ = ("degraded", "floor", "notes", "query", "results")

    def __init__(self, query: str, results: list[dict[str, Any]] | None = None,
                 degraded: list[str] | None = None, notes: list[Note] | None = None,
                 floor: float = 0.0) -> None:
        self.query = query
        self.results: list[dict[str, Any]] = results if results is not None else []
        self.degraded: list[str] = degraded if degraded is not None else []
        self.notes: list[Note] = notes if notes is not None else []
        self.floor = floor

    def note(self, kind: str) -> Note | None:
        """The note of this kind, if any."""
        return next((n for n in self.notes if n.kind == kind), None)


def scope(project: str | None = None, *, every: bool = False) -> Scope:
    """The scope of a search: `project` (default: the call's current one) and global
    memories, or every project."""
    return Scope(project or None, every) if project or every else HERE


def search(h: Hippo, query: str, *, where: Scope = HERE, min_score: float | None = None,
           prompt: bool = False, **options: Any) -> Found:
    """Search the Brain for `query` in `where`; `options` are the pipeline's
    (`hippo.retrieve.request.SearchRequest`: limit, types, tiers, tags, since, ...).

    `min_score` None: 0 (keep all), but for a `prompt` (text an agent's prompt gets) the
    prompt hook's floor. A prompt nothing stored answers returns no result
    (`hippo.retrieve.answerable`) and an `UNANSWERED` note."""
    from hippo.retrieve.pipeline import search as pipeline

    floor = _floor(prompt) if min_score is None else min_score
    found = pipeline(h, query, projects=where, **options)
    out = Found(found.query, [r for r in found.results if r["score"] >= floor],
                list(found.degraded), floor=floor)
    if not found.query:
        return out
    if not found.results:
        out.notes += _empty(h, where)
    elif not out.results:
        out.notes.append(Note(UNDER_FLOOR, floor=floor,
                              best=max(r["score"] for r in found.results)))
    elif prompt and floor > 0:
        why = _unanswered(h, query, where, [r["text"] for r in out.results])
        if why:
            out.results = []
            out.notes.append(Note(UNANSWERED, reason=why))
    return out


def _floor(prompt: bool) -> float:
    """The default score floor: the prompt hook's for a prompt, else 0 (keep all)."""
    if not prompt:
        return 0.0
    from hippo.layers.recall import MIN_SCORE  # only then: the layers cost an import

    return MIN_SCORE


def _empty(h: Hippo, where: Scope) -> list[Note]:
    """The notes of a search that found nothing: an empty Brain beside an Echo full of
    the scope's sessions (hippo has read them but learnt nothing yet, which silence would
    pass off as "nothing known"), and memories in other projects (a search from the wrong
    directory is not mistaken for an empty memory)."""
    from hippo.memory.brain import active_elsewhere

    project = where.project or h.project
    notes = []
    echoed = _echoed(h, project, where.every)
    if echoed:
        notes.append(Note(ECHOED, count=echoed, every=where.every, project=project))
    if not where.every:
        elsewhere = active_elsewhere(h.db, project)
        if elsewhere:
            notes.append(Note(ELSEWHERE, count=elsewhere, project=project))
    return notes


def _echoed(h: Hippo, project: str | None, every: bool) -> int:
    """Echo chunks of `project` (`every`: of every project) when no memory is in scope
    (else 0)."""
    db = h.db
    if db.memories.active_in_scope(project) or (every and db.memories.active_elsewhere(project)):
        return 0
    return db.chunks.count(project, every_project=every or project is None)


def _unanswered(h: Hippo, text: str, where: Scope, printed: list[str]) -> str:
    """Why nothing stored answers `text` in the scope ("" when something may), the
    memories found being `printed` (their texts)."""
    from hippo.layers.recall import unanswered

    return unanswered(h, text, where.projects(h.project), printed)
