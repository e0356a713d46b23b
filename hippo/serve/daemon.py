"""What `hippo serve` runs: a server for one database, warmed, until it stops."""


from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from hippo.config import display
from hippo.serve.spawn import ServeParams, files_for

if TYPE_CHECKING:
    from hippo.serve.execute import Face


def run(flag: str | None, *, face: Face, idle_minutes: float | None = None) -> str:
    """Serve the database `flag` (or the default one) until a reason to stop; the reason.
    AlreadyRunning when another server has it; Unsafe when the runtime directory is not
    the user's own. `face`: the command line the calls run (`hippo.cli.main`'s)."""
    from hippo import config
    from hippo.serve.server import Server, identity
    from hippo.warm import Warm

    settings = config.load({"db": flag})
    params = ServeParams.from_table(settings.table("serve"))
    idle = (idle_minutes if idle_minutes is not None else params.idle_minutes) * 60
    from hippo.config import is_server
    from hippo.serve.spawn import AUTO_ENV

    auto = os.environ.pop(AUTO_ENV, "") == "1"
    # The warm engine every call is handed (its environment's `warm`): nothing global.
    warm = Warm(max_bytes=int(params.vector_memory_mb * (1 << 20)))
    server = Server(identity=identity(settings.database), shown=display(str(settings.database)),
                    files=files_for(flag), idle_s=idle, auto=auto,
                    db_file=None if is_server(settings.database) else _file(settings.database),
                    warm=warm, face=face)
    server.start()
    try:
        sys.stderr.write(f"hippo: serving {server.shown} on {server.files['sock']} "
                         f"(pid {os.getpid()}); exits after {idle / 60:g} min idle\n")
        sys.stderr.flush()
        _preload(server, settings)
        os.chdir("/")  # hold no working directory (a worktree) busy
        return server.serve()
    finally:
        server.close()


def _file(database: Any) -> str | None:
    """The database file the server watches (it exits once the file is gone); None when
    there is none yet (a server started by hand before the first write)."""
    from pathlib import Path

    path = Path(database).expanduser().resolve()
    return str(path) if path.is_file() else None


def _preload(server: Any, settings: Any) -> None:
    """Load the model and the vectors in the background; calls wait for it (or run
    themselves, past their start deadline)."""
    import threading

    def load() -> None:
        from hippo.app.warmup import preload
        from hippo.console.environment import Environment
        from hippo.core import Hippo

        with server._run_lock:
            h = Hippo(settings, env=Environment.process(warm=server.warm), read=True)
            try:
                preload(h)
            except Exception as exc:  # noqa: BLE001 - no store yet, say; the calls will say
                sys.stderr.write(f"hippo serve: nothing preloaded: {exc}\n")
            finally:
                h.close()
            server.face.command(server.warm)  # the Click command, built now rather than by the first call
            import gc

            # What is loaded now stays loaded: out of the collector's sight, its full
            # collections no longer walk the libraries' objects at every call's expense.
            gc.collect()
            gc.freeze()

    threading.Thread(target=load, name="hippo-serve-preload", daemon=True).start()


__all__ = ["ServeParams", "run"]
