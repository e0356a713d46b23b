"""The MCP tools (`Tools`), warm (`hippo.warm`, which `hippo serve` runs too): one open
database and one loaded embedder for the life of the server, and every tool as a
plain method that returns a JSON-ready dict or raises a `HippoError` (the MCP layer,
`hippo.mcp.server`, turns that into a tool error).

Nothing here imports the MCP SDK, so the tools are tested in-process as well as through it.
Calls are serialised by one lock (the SDK runs each sync tool on a worker thread; one
SQLite connection serves them in turn). A write that meets a busy database is retried
until `[mcp] busy_retry_seconds`, then fails with the CLI's busy message.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hippo.errors import BusyError, UsageError
from hippo.mcp.params import McpParams, check_limit
from hippo.mcp.shape import compact, provenance, snip

if TYPE_CHECKING:
    from hippo.core import Hippo

T = TypeVar("T")
ACTOR = "mcp"  # the audit log's actor for every change made through the server


class Tools:
    """One server's hippo: settings, database and embedder opened once, warmed in the
    background, and the count of writes this client session has made."""

    def __init__(self, h: Hippo, params: McpParams | None = None) -> None:
        from hippo.warm import Warm

        # The warm engine `hippo serve` runs too (hippo.warm), handed to `h` through its
        # environment (its own when it has one) before its store or embedder opens.
        if h.env.warm is None:
            h.env = h.env.with_warm(Warm())
        self.h = h
        self.params = params or McpParams.from_table(h.settings.table("mcp"))
        self.writes = 0  # writes made (counted under `_lock`, where they run)
        self._lock = threading.Lock()
        self._warm: Any = None
        self._runs = contextlib.ExitStack()
        self._run: Any = None

    # -- life cycle ----------------------------------------------------------------
    def warm(self) -> None:
        """Open the database and load the embedding model in a background thread, so the
        server answers `initialize` at once and the first search does not pay for both."""
        from hippo.retrieve.background import Pending

        self._warm = Pending(self._load, "hippo-mcp-warm")

    def _load(self) -> None:
        from hippo.app.warmup import preload

        with self._lock:
            preload(self.h)  # the model, the search modules, the Brain's vectors

    def ready(self) -> None:
        """Wait for the warm-up (a failure there is met again, and reported, by the call)."""
        if self._warm is not None:
            with contextlib.suppress(Exception):  # the tool's own call meets it and reports it
                self._warm.result()

    @property
    def warming(self) -> bool:
        """Whether the background warm-up is still running."""
        if self._warm is None:
            return False
        try:
            self._warm.result(timeout=0)
        except TimeoutError:
            return True
        except Exception:  # noqa: BLE001 - finished, with an error the next call reports
            return False
        return False

    def close(self) -> None:
        """Close the database, after the warm-up: a process that exits while onnxruntime
        is still building its session aborts (SIGABRT) instead of exiting 0."""
        self.ready()
        with self._lock:
            if self._run is not None:
                self._run.summary["writes"] = self.writes
                self._runs.close()  # records the run's end and outcome
                self._run = None
            self.h.close()

    def call(self, fn: Callable[[], T], *, embeds: bool = False, write: bool = False) -> T:
        """Run one tool body under the lock; retry it while the database is busy. A `write`
        takes its place in the session's budget under that lock, as it starts (no other
        write is in flight then), and counts once it succeeded: concurrent calls cannot
        pass the budget, and a write that fails leaves its place to the next."""
        if write:
            self._budget()  # at once, without waiting for the warm-up; again under the lock
        if embeds:
            self.ready()
        deadline = time.monotonic() + self.params.busy_retry_seconds
        pause, tries = 0.05, 0
        while True:
            tries += 1
            try:
                with self._lock:
                    if write:
                        self._budget()
                    value = fn()
                    if write:
                        self.writes += 1
                    return value
            except BusyError as exc:
                if time.monotonic() + pause > deadline:
                    raise BusyError(f"{exc} (gave up after {tries} tries in "
                                    f"{self.params.busy_retry_seconds:g} s)") from None
                time.sleep(pause)
                pause = min(pause * 2, 1.0)

    def run_id(self) -> str:
        """The run this session's writes belong to, recorded on the first write (job
        `mcp`, no lock: several sessions may write at once): `hippo undo RUN` reverts
        everything the agent changed in the session."""
        if self._run is None:
            from hippo.ops.jobs import job

            self._run = self._runs.enter_context(job(self.h.db, "mcp", lock=False))
        return str(self._run.id)

    def _budget(self) -> None:
        """Refuse a write past the session's budget (a write counts once it succeeded)."""
        cap = self.params.max_writes
        if self.writes >= cap:
            raise UsageError(f"this session made its {cap} writes, the limit ([mcp] "
                             "max_writes in the config file); ask the user before storing "
                             "more, or start a new session")

    # -- tools ---------------------------------------------------------------------
    def search(self, query: str, *, limit: int = 5, type_: Sequence[str] = (),
               project: str | None = None, min_score: float = 0.0,
               all_projects: bool = False) -> dict[str, Any]:
        from hippo.app import search as app

        check_limit(limit)
        if not 0.0 <= min_score <= 1.0:
            raise UsageError(f"min_score must be between 0 and 1, got {min_score}")

        def run() -> dict[str, Any]:
            found = app.search(self.h, query, where=app.scope(project, every=all_projects),
                               min_score=min_score, limit=limit, types=type_)
            out: dict[str, Any] = {"results": [compact(r) for r in found.results]}
            if found.degraded:
                out["degraded"] = found.degraded
            # The CLI's "Echo holds chunks" note has no MCP wording: an agent calls `echo`.
            for note in found.notes:
                if note.kind == app.ELSEWHERE:
                    out["note"] = (f"no match in this project or global memories; {note.count} "
                                   "active memories are in other projects (all_projects=true)")
                elif note.kind == app.UNDER_FLOOR:
                    out["note"] = (f"no result scored {note.floor:g} or more "
                                   f"(best {note.best:.2f})")
            return out

        return self.call(run, embeds=True)

    def remember(self, text: str, type_: str, *, importance: float | None = None,
                 tags: Sequence[str] = (), project: str | None = None,
                 global_: bool = False) -> dict[str, Any]:
        from hippo.app.remember import remember

        if global_ and project:
            raise UsageError("give project or global_memory, not both")

        def run() -> dict[str, Any]:
            done = remember(self.h, text, type_=type_, tags=list(tags), importance=importance,
                            author="machine", project=project, global_=global_,
                            source={"via": "mcp"}, actor=ACTOR, run=self.run_id)
            rec = done.change.record
            out: dict[str, Any] = {"action": done.change.action, "id": rec["id"],
                                   "type": rec["type"], "project": rec["project"] or "global",
                                   "run": done.run}
            if done.redacted:
                out["redacted"] = done.redacted
            if done.unreviewed:
                out["note"] = (f"search finds it now; it loads with the rule floor once a "
                               f"person runs `hippo verify {rec['id']}`")
            return out

        return self.call(run, embeds=True, write=True)

    def get(self, memory_id: int) -> dict[str, Any]:
        from hippo.app.memory import get

        def run() -> dict[str, Any]:
            shown = get(self.h, memory_id, chain=False)
            rec = shown.record
            rec["provenance"] = provenance(rec)
            rec["sources"] = [{**src, "text": snip(src.get("text"))} for src in shown.sources]
            rec["history"] = [{"at": e["at"], "action": e["action"], "actor": e["actor"]}
                              for e in shown.history or ()]
            return rec

        return self.call(run)

    def echo(self, query: str, *, session: str | None = None, limit: int = 5,
             context: int = 0) -> dict[str, Any]:
        from hippo.app import echo as app

        check_limit(limit)
        if not 0 <= context <= 5:
            raise UsageError(f"context must be between 0 and 5, got {context}")

        def run() -> dict[str, Any]:
            res = app.search(self.h, query, sessions=[session] if session else [],
                             limit=limit, context=context)
            results = []
            for r in res.results:
                item = {k: r[k] for k in ("id", "score", "session", "project", "roles",
                                          "started_at", "text")}
                item["where"] = (f"{r['source_path']} lines {r['line_start']}-{r['line_end']}"
                                 if r.get("line_start") is not None else r["source_path"])
                if r.get("context"):
                    item["context"] = [{"id": c["id"], "roles": c["roles"], "text": c["text"]}
                                       for c in r["context"]]
                results.append(item)
            out: dict[str, Any] = {"results": results}
            if res.degraded:
                out["degraded"] = res.degraded
            return out

        return self.call(run, embeds=True)

    def context(self, *, route: bool = False, topic: Sequence[str] = (),
                budget: int = 800) -> dict[str, Any]:
        from hippo.app.context import context as layers
        from hippo.embed import tokens
        from hippo.layers import render

        if not 0 <= budget <= 20_000:
            raise UsageError(f"budget must be between 0 and 20000 tokens, got {budget}")

        def run() -> dict[str, Any]:
            parts = layers(self.h, budget=budget, route=route, topics=topic)
            text = render(parts)
            return {"text": text, "tokens": tokens.count(text),
                    "layers": {p.layer: p.summary() for p in parts}}

        return self.call(run)

    def forget(self, memory_id: int) -> dict[str, Any]:
        from hippo.app.memory import forget

        def run() -> dict[str, Any]:
            (rec,) = forget(self.h, [memory_id], actor=ACTOR, run=self.run_id)
            return {"id": rec["id"], "status": rec["status"], "run": self.run_id()}

        return self.call(run, write=True)

    def done(self, memory_id: int) -> dict[str, Any]:
        from hippo.app.memory import done

        def run() -> dict[str, Any]:
            (rec,) = done(self.h, [memory_id], actor=ACTOR, run=self.run_id)
            return {"id": rec["id"], "status": rec["status"], "run": self.run_id()}

        return self.call(run, write=True)

    def supersede(self, old_id: int, text: str) -> dict[str, Any]:
        from hippo.app.remember import replace

        def run() -> dict[str, Any]:
            done = replace(self.h, old_id, text, actor=ACTOR, run=self.run_id,
                           source={"via": "mcp"})
            out: dict[str, Any] = {"old": done.old, "new": done.new, "action": done.action,
                                   "run": done.run}
            if done.action == "conflict":
                out["note"] = (
                    f"memory {done.old} was written by a person and stays as it is; what you "
                    "said is stored beside it as a conflict for them to settle (`hippo list "
                    "--conflicts`): tell the user")
            if done.redacted:
                out["redacted"] = done.redacted
            return out

        return self.call(run, embeds=True, write=True)

    def verify(self, memory_id: int) -> dict[str, Any]:
        from hippo.app.memory import verify

        if not self.params.allow_verify:
            raise UsageError(
                "verify is a person's review: a machine-written rule or preference loads in "
                "the rule floor only once a person confirms it. Ask the user to run "
                f"`hippo verify {memory_id}` (or to set allow_verify = true under [mcp] in "
                "the config file)")

        def run() -> dict[str, Any]:
            (rec,) = verify(self.h, [memory_id], actor=ACTOR, run=self.run_id)
            return {"id": rec["id"], "verified_at": rec["verified_at"], "run": self.run_id()}

        return self.call(run, write=True)
