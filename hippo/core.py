"""`Hippo`: settings, the open database, the embedder and the current project, opened lazily."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo import config
from hippo.embed.cache import check_model, embed_texts, ensure_store
from hippo.memory import brain
from hippo.memory.memtypes import MemType, registry
from hippo.memory.records import NewMemory

if TYPE_CHECKING:
    from hippo.console.environment import Environment
    from hippo.embed import Embedder
    from hippo.project import Location
    from hippo.store import Store


def detect_project(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The project of a directory (default: the cwd): the name of its git repository's main
    working tree, so every worktree of one repository is one project; else its basename."""
    from hippo.project import locate

    return locate(cwd if cwd is not None else _cwd()).project


def _cwd() -> str:
    """The working directory; a deleted one (a removed worktree) by the shell's $PWD."""
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("PWD") or "."


def _make_home(directory: Path) -> None:
    """Create the data directory user-only; say why when that is not possible."""
    from hippo.errors import HippoError

    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise HippoError(f"cannot create the data directory {directory}: "
                         f"{exc.strerror or type(exc).__name__}; set HIPPO_HOME (or --db) to a "
                         "directory you can write") from None


class Hippo:
    """One invocation's view of hippo: resolve settings once, open things on first use."""

    def __init__(self, settings: config.Settings | None = None, *,
                 env: Environment | None = None, location: Location | None = None,
                 read: bool = False, busy_timeout_ms: int | None = None,
                 **flags: Any) -> None:
        from hippo.console.environment import current

        # What the call runs in: its variables, its directory, a long-lived process's warm
        # engine (`env.warm`: the loaded embedders, the in-memory vector indexes).
        self.env = current(env)
        self.settings = settings or config.load(flags, self.env.environ)
        # A read command (search, list, show, ...) never creates, migrates or converts the
        # file, and its cache writes never wait (`hippo.store.connect`, mode "read").
        self.read = read
        self.busy_timeout_ms = busy_timeout_ms  # a caller's own deadline (a hook)
        if location is not None:  # where the caller works (a hook: its agent's cwd)
            self.__dict__["location"] = location

    @classmethod
    def open(cls, db: str | os.PathLike[str] | None = None, *, env: Environment | None = None,
             **flags: Any) -> Hippo:
        """`env`: what the calls run in (`hippo.console.environment`; default this process's)."""
        environ = env.environ if env is not None else None
        return cls(config.load({"db": str(db) if db else None, **flags}, environ), env=env)

    @cached_property
    def db(self) -> Store:
        from hippo.store import check_private_dir, connect

        path = self.settings.database
        home = config.home_dir(self.settings.environ)
        if self.settings.origins.get("db") == "default" and not self.read:
            _make_home(home)
        check_private_dir(home)  # its config.toml is read, and it may hold the database
        wait = int(self.settings["busy_timeout_ms"])
        if self.busy_timeout_ms is not None:
            wait = min(wait, self.busy_timeout_ms)
        # A warm process: the store's Brain KNN from its vectors in memory (hippo.warm).
        index = self.env.warm.index(path) if self.env.warm is not None else None
        db = connect(path, busy_timeout_ms=wait, mode="read" if self.read else "write",
                     index=index)
        if self.location.linked:  # a worktree is usually gone when its sessions are ingested
            from hippo.project import remember

            remember(db, self.location)
        return db

    @cached_property
    def location(self) -> Location:
        """Where this call runs: the cwd's repository and project (`hippo.project`)."""
        from hippo.project import locate

        return locate(self.env.cwd)

    @cached_property
    def types(self) -> dict[str, MemType]:
        return registry(self.settings.table("types"))

    @cached_property
    def project(self) -> str | None:
        return self.settings["project"] or self.location.project

    def embedder(self, store: str = "brain") -> Embedder:
        """The store's embedder: the one it was built with, unless one was chosen explicitly."""
        cache = self.__dict__.setdefault("_embedders", {})
        if store not in cache:
            from hippo import embed

            name = self.settings["embedder"]
            if self.settings.origins.get("embedder") == "default":
                recorded = self.db.meta.get(f"{store}.embedder")
                name = recorded or name
            warm = self.env.warm
            emb = (warm.embedder(name, self.settings) if warm is not None
                   else embed.get(name, self.settings))
            for other in cache.values():  # share one loaded model between stores
                if other.name == emb.name and other.model_id == emb.model_id:
                    emb = other
            cache[store] = emb
        return cache[store]

    def embed(self, texts: Sequence[str], store: str = "brain") -> Any:
        """Vectors of `texts` for `store`, from the persistent cache where possible.

        Memories and transcript chunks are what a search will meet: with the local model
        and late interaction on, the same forward pass also caches their token matrices
        (ternary, ~100 bytes a token), so no search has to start the model for a
        candidate. Encoding them at search time instead cost a new `hippo echo` query
        1.6-11.9 s on the shared transcripts (docs/quality.md, Costs).
        """
        emb = self.embedder(store)
        if self.read:  # a read command never adds a table; a store without one has no vectors
            check_model(self.db, store, emb)
        else:
            ensure_store(self.db, store, emb)
        if texts:
            from hippo.retrieve.tokencache import warm_for_search
            from hippo.store import skippable

            try:
                warm_for_search(self.db, self.settings, emb, texts)
            except Exception as exc:
                if not (self.read and skippable(exc)):
                    raise  # a read command's cache is best effort: embed_texts goes on
        return embed_texts(self.db, emb, texts)

    # -- Brain writes --------------------------------------------------------------
    def add(self, mems: Sequence[NewMemory], *, actor: str = "human",
            run_id: str | None = None,
            screen: Callable[[Store, Sequence[NewMemory]], list[int]] | None = None
            ) -> list[brain.Change]:
        """Store or reinforce memories (one transaction); embeddings come from the cache.

        screen: the indexes of `mems` to store, decided under the write lock (`add -`
        refuses lines by what the store holds, which another writer may just have changed).
        """
        vectors = self.embed([m.text for m in mems])
        with self.db.transaction():
            # References to memories later in the same input (an export piped back in).
            self.db.memories.defer_references()
            # A reindex may have swapped the model since we embedded: never mix vector spaces.
            check_model(self.db, "brain", self.embedder("brain"))
            if screen is not None:
                keep = screen(self.db, mems)
                mems, vectors = [mems[i] for i in keep], vectors[keep]
            return brain.add_many(self.db, mems, vectors, actor=actor, run_id=run_id)

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()
            del self.__dict__["db"]
