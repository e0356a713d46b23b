"""The `Store`: one open connection and its repositories, and the types they speak.
Callers depend on these, never on a backend (`hippo.store.sqlite`, `hippo.store.postgres`).

A store is one open connection: `transaction()` is the unit of work; the repositories
(`store.memories`, `store.chunks`, ...) are its domain methods, each written once in its
own module under `hippo/store/`, over the query helpers its backend gives (`_sql()`,
`hippo.store.sql`). A backend subclasses `Store` with its connection, its transactions
and the parts it does its own way (`PARTS`: the vector index, full text, ...).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

if TYPE_CHECKING:
    from pathlib import Path

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
    from hippo.store.sql import Sql
    from hippo.store.stats import Stats
    from hippo.store.vectors import Vectors
    from hippo.store.watermarks import Watermarks

Row = dict[str, Any]
Mode = Literal["write", "read"]


class Store:
    """One open store. Writes happen inside `transaction()`; a read command's store
    (mode "read") makes only cache writes, through `cache_write`, which never wait."""

    mode: Mode
    busy_timeout_ms: int
    label: str  # what a person is shown: the path, or the server's URL without its password
    path: Path | None  # the SQLite file; None for a server
    # The backend's own class of each part it does its own way: "module:Class".
    PARTS: ClassVar[dict[str, str]]

    def _sql(self) -> Sql:
        """New query helpers over this connection, for a repository to hold (not the store:
        a store nobody holds any more is closed at once, no reference cycle keeps it)."""
        raise NotImplementedError

    def _part(self, name: str) -> Any:
        """A repository over new query helpers: `name` is "module:Class", or a part the
        backend names in `PARTS`. Imported on first use: a command imports only the
        repositories it needs."""
        module, _, cls = self.PARTS.get(name, name).partition(":")
        return getattr(importlib.import_module(module), cls)(self._sql())


    @staticmethod
    def _skippable(exc: BaseException) -> bool:
        """A cache write's error a read command may skip (busy, read-only)."""
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[Store]:
        """The unit of work: all or nothing; nested, a savepoint."""
        raise NotImplementedError

    def cache_write(self, write: Callable[[Store], Any]) -> bool:
        """Run `write` in a transaction; for a read command, best effort: skipped when the
        store is busy or may not be written here (a cache is worth no wait). True when it
        was written."""
        try:
            with self.transaction():
                write(self)
        except Exception as exc:
            if self.mode != "read" or not self._skippable(exc):
                raise
            return False
        return True

    def waiting(self, ms: int) -> AbstractContextManager[None]:
        """Inside: wait at most `ms` for the write lock (a best-effort write)."""
        raise NotImplementedError

    def checkpoint(self) -> bool:
        """Move logged pages into the main file (a purge leaves no old page behind)."""
        raise NotImplementedError

    def reader(self) -> Store | None:
        """A second connection for a read in another thread, or None when there is none."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- repositories: each speaks one part of the domain ------------------------------
    @functools.cached_property
    def meta(self) -> Meta:
        return cast("Meta", self._part("hippo.store.meta:Meta"))

    @functools.cached_property
    def memories(self) -> Memories:
        return cast("Memories", self._part("hippo.store.memories:Memories"))

    @functools.cached_property
    def audit(self) -> Audit:
        return cast("Audit", self._part("hippo.store.audit:Audit"))

    @functools.cached_property
    def context(self) -> ContextRows:
        return cast("ContextRows", self._part("hippo.store.context:ContextRows"))

    @functools.cached_property
    def projects(self) -> Projects:
        return cast("Projects", self._part("hippo.store.projects:Projects"))

    @functools.cached_property
    def chunks(self) -> Chunks:
        return cast("Chunks", self._part("hippo.store.chunks:Chunks"))

    @functools.cached_property
    def watermarks(self) -> Watermarks:
        return cast("Watermarks", self._part("hippo.store.watermarks:Watermarks"))

    @functools.cached_property
    def embed_cache(self) -> EmbedCache:
        return cast("EmbedCache", self._part("hippo.store.embed_cache:EmbedCache"))

    @functools.cached_property
    def spend(self) -> Spend:
        return cast("Spend", self._part("hippo.store.spend:Spend"))

    @functools.cached_property
    def consolidation(self) -> Consolidation:
        return cast("Consolidation", self._part("hippo.store.consolidation:Consolidation"))

    @functools.cached_property
    def stats(self) -> Stats:
        return cast("Stats", self._part("hippo.store.stats:Stats"))

    # -- the backend's own parts (a repository's subclass, or an index) ----------------
    @functools.cached_property
    def vectors(self) -> Vectors:
        return cast("Vectors", self._part("vectors"))

    @functools.cached_property
    def lexical(self) -> Lexical:
        return cast("Lexical", self._part("lexical"))

    @functools.cached_property
    def jobs(self) -> Jobs:
        return cast("Jobs", self._part("jobs"))

    @functools.cached_property
    def reindex(self) -> Reindex:
        return cast("Reindex", self._part("reindex"))

    @functools.cached_property
    def health(self) -> Health:
        return cast("Health", self._part("health"))
