"""What the context layers read: the floor's rules and guidance, recall, sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.lexical import Terms


class Scope(NamedTuple):
    """The memories a layer covers: `project`'s and the global ones (the global ones
    alone when `project` is None), or every project; with `topics`, only memories tagged
    with any of them (lower-cased). A NamedTuple: it is built at every session start."""

    project: str | None
    all_projects: bool = False
    topics: tuple[str, ...] = ()


class ContextRows(Protocol):
    """What the context layers read: the floor's rules and guidance, recall, sizes.

    A layer loads current memories (active, not superseded) only; a rule or preference a
    machine wrote waits until a person verified or pinned it. Rows of memories come in
    floor order: human-authored first, then importance, pinned, id."""

    def rules(self, scope: Scope) -> list[Row]:
        """The current admitted rules of the scope, in floor order."""
        ...

    def guidance(self, scope: Scope) -> list[Row]:
        """The current admitted procedural memories (not rules) of the scope, in floor order."""
        ...

    def rules_waiting(self, scope: Scope) -> list[int]:
        """Ids of the current rules held back until a person reviews them, in order."""
        ...

    def guidance_waiting(self, scope: Scope) -> list[int]:
        """Ids of the current guidance held back until a person reviews it, in order."""
        ...

    def lexical(self, terms: Terms, scope: Scope, limit: int) -> list[Row]:
        """Up to `limit` active memories of the scope matching `terms`, best first (BM25)."""
        ...

    def current_texts(self, scope: Scope) -> list[str]:
        """The texts of the scope's current memories."""
        ...

    def echo_texts(self, scope: Scope) -> list[str]:
        """The texts of the scope's Echo chunks."""
        ...
