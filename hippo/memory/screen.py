"""Which lines of an `add -` or `import` batch the store must refuse, decided under the
write lock (inside the batch's transaction), so the outcome is the same whatever other
writers do meanwhile: each refused line is one error naming it, the rest are stored.

Refused: an id repeated in the input; an id held by a different memory (the same statement
under its own id is a reinforcement); an id this store once used but no longer holds (an
undone or removed memory: ids are never reused, or the new memory would inherit the old
one's history and provenance); a supersede/consolidate chain that leads back to where it
began (`hippo supersede` refuses those); a reference to a memory that is neither stored nor
in the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.memory.records import NewMemory
    from hippo.store import Store

REFS = ("consolidated_into", "superseded_by")

Lines = list[tuple[int, "NewMemory"]]


def screen(db: Store, items: Sequence[tuple[int, NewMemory]], errors: list[str], *,
           taken_is_error: bool = True) -> Lines:
    """The (line number, memory) pairs to store; an error line for each refused one.

    taken_is_error: an id held by a different memory is a per-line error (`add -`); False
    leaves it to the caller (`import` restores into an empty store and refuses the batch).
    """
    wanted = {m.id for _, m in items if m.id} | {
        getattr(m, f) for _, m in items for f in REFS if getattr(m, f)}
    held: dict[int, str] = db.memories.held(wanted) if wanted else {}
    own = {m.id for _, m in items if m.id and m.id not in held}
    once = db.audit.once_used(own) if own else set()
    kept: Lines = []
    seen: set[int | None] = set()
    for lineno, m in items:
        if m.id is not None and m.id in seen:
            errors.append(f"line {lineno}: id {m.id} appears twice in the input")
        elif taken_is_error and m.id is not None and held.get(m.id, m.dedup_key) != m.dedup_key:
            errors.append(f"line {lineno}: id {m.id} is taken by another memory")
        elif m.id is not None and m.id in once:
            errors.append(f"line {lineno}: id {m.id} belonged to a memory this store no "
                          "longer holds (undone or removed); ids are never reused: drop "
                          "\"id\" to store it as a new memory")
        else:
            seen.add(m.id)
            kept.append((lineno, m))
    kept = _without_cycles(db, kept, held, errors)
    while True:  # dropping a line may leave another one pointing at nothing
        ids = set(held) | {m.id for _, m in kept if m.id}
        bad = {lineno: f for lineno, m in kept for f in REFS
               if getattr(m, f) and getattr(m, f) not in ids}
        if not bad:
            break
        for lineno, m in kept:
            if lineno in bad:
                errors.append(f"line {lineno}: {bad[lineno]} {getattr(m, bad[lineno])} is not "
                              "a memory in the database or in this input")
        kept = [(lineno, m) for lineno, m in kept if lineno not in bad]
    errors.sort(key=lambda e: int(e.split(":", 1)[0].removeprefix("line ")))
    return kept


def _without_cycles(db: Store, kept: Lines, held: dict[int, str],
                    errors: list[str]) -> Lines:
    """Drop the input lines on a superseded_by or consolidated_into cycle, counting the
    stored memories' references and the new ones' (a held id is reinforced, not replaced)."""
    new = [(lineno, m) for lineno, m in kept if m.id is not None and m.id not in held]
    if not any(getattr(m, f) for _, m in new for f in REFS):
        return kept
    stored = db.memories.references()
    line_of = {m.id: lineno for lineno, m in new}
    refused: dict[int, str] = {}
    for column in REFS:
        edges = {r["id"]: r[column] for r in stored if r[column] is not None}
        edges.update({m.id: getattr(m, column) for _, m in new if getattr(m, column)})
        for loop in cycles(edges):
            path = " -> ".join(map(str, [*loop, loop[0]]))
            for mid in loop:
                if mid in line_of and line_of[mid] not in refused:
                    refused[line_of[mid]] = (f"line {line_of[mid]}: {column} makes a cycle "
                                             f"({path}); a memory cannot lead back to itself")
    errors.extend(refused.values())
    return [(lineno, m) for lineno, m in kept if lineno not in refused]


def cycles(edges: dict[int, int]) -> list[list[int]]:
    """Every cycle of a graph where each node points at most at one other, smallest id
    first in each, sorted."""
    found: list[list[int]] = []
    state: dict[int, int] = {}  # 1: on the current path, 2: done
    for start in sorted(edges):
        path: list[int] = []
        node: int | None = start
        while node is not None and node not in state:
            state[node] = 1
            path.append(node)
            node = edges.get(node)
        if node is not None and state.get(node) == 1:
            loop = path[path.index(node):]
            i = loop.index(min(loop))
            found.append(loop[i:] + loop[:i])
        for n in path:
            state[n] = 2
    return sorted(found)
