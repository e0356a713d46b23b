"""What every backend of the store provides: the `Store` protocol and the types its methods
speak. Callers depend on these, never on a backend (`hippo.store.sqlite`).

A store is one open connection: `transaction()` is the unit of work; the repositories
(`store.memories`, `store.chunks`, ...) are its domain methods, each in its own module
under `hippo/store/` (the protocol) and `hippo/store/sqlite/` (SQLite's implementation).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from hippo.store.audit import Audit
    from hippo.store.chunks import Chunks
    from hippo.store.consolidation import Consolidation
    from hippo.store.context import ContextRows
    from hippo.store.embed_cache import EmbedCache
    from hippo.store.health import Health
    from hippo.store.jobs import Jobs
    from hippo.store.lexical import Lexical
    from hippo.store.memories import Memories
    from hippo.store.meta import Meta
    from hippo.store.projects import Projects
    from hippo.store.reindex import Reindex
    from hippo.store.spend import Spend
    from hippo.store.stats import Stats
    from hippo.store.vectors import Vectors
    from hippo.store.watermarks import Watermarks

Row = dict[str, Any]
Mode = Literal["write", "read"]


class Store(Protocol):
    """One open store. Writes happen inside `transaction()`; a read command's store
    (mode "read") makes only cache writes, through `cache_write`, which never wait."""

    mode: Mode
    busy_timeout_ms: int

    @property
    def path(self) -> Path | None:
        """The SQLite file; None for a server (`hippo.store.postgres`)."""
        ...

    @property
    def label(self) -> str:
        """What a person is shown: the path, or the server's URL without its password."""
        ...

    def transaction(self) -> AbstractContextManager[Store]:
        """The unit of work: all or nothing; nested, a savepoint."""
        ...

    def cache_write(self, write: Callable[[Store], Any]) -> bool:
        """Run `write` in a transaction; for a read command, skipped when busy (False)."""
        ...

    def waiting(self, ms: int) -> AbstractContextManager[None]:
        """Inside: wait at most `ms` for the write lock (a best-effort write)."""
        ...

    def checkpoint(self) -> bool:
        """Move logged pages into the main file (a purge leaves no old page behind)."""
        ...

    def reader(self) -> Store | None:
        """A second connection for a read in another thread, or None when there is none."""
        ...

    def close(self) -> None: ...

    # -- repositories: each speaks one part of the domain --------------------------
    @property
    def meta(self) -> Meta: ...
    @property
    def memories(self) -> Memories: ...
    @property
    def audit(self) -> Audit: ...
    @property
    def context(self) -> ContextRows: ...
    @property
    def projects(self) -> Projects: ...
    @property
    def chunks(self) -> Chunks: ...
    @property
    def watermarks(self) -> Watermarks: ...
    @property
    def vectors(self) -> Vectors: ...
    @property
    def lexical(self) -> Lexical: ...
    @property
    def embed_cache(self) -> EmbedCache: ...
    @property
    def jobs(self) -> Jobs: ...
    @property
    def spend(self) -> Spend: ...
    @property
    def consolidation(self) -> Consolidation: ...
    @property
    def reindex(self) -> Reindex: ...
    @property
    def health(self) -> Health: ...
    @property
    def stats(self) -> Stats: ...
