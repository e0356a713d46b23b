"""Options shared by every command and the one way a command opens hippo."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from hippo.cli.plain import hippo_for
from hippo.errors import UsageError

if TYPE_CHECKING:
    from hippo.console.environment import Environment

JsonOpt = Annotated[
    bool, typer.Option("--json", help="JSON lines on stdout even at a terminal.")
]
WideOpt = Annotated[
    bool, typer.Option("--wide", "-w", help="Every column in the table, full ids and times "
                       "(JSON lines always carry every field).")
]
DbOpt = Annotated[
    str | None,
    typer.Option("--db", help="Database file, or a postgresql:// URL (env HIPPO_DB).",
                 show_default=False),
]
ProjectOpt = Annotated[
    str | None,
    typer.Option("--project", "-p", help="Project name (env HIPPO_PROJECT; default: the git "
                 "repository's main working tree name, for every worktree, or the directory "
                 "name).", show_default=False),
]
EmbedderOpt = Annotated[
    str | None,
    typer.Option("--embedder", help="Embedding provider: local, openai, hash "
                 "(env HIPPO_EMBEDDER).", show_default=False),
]


def root_flags(ctx: typer.Context) -> dict[str, Any]:
    """The flags given before the command name (--db, --project, --embedder)."""
    root = ctx.find_root()
    return {k: v for k, v in (root.obj or {}).items() if k not in ("env", "face")}


def environment(ctx: typer.Context | None) -> Environment:
    """What the call runs in (`hippo.console.environment`): the one `hippo.cli.main` gave the
    root context as `obj`, else (a test's CliRunner) this process's at the call."""
    from hippo.console.environment import Environment

    obj = ctx.find_root().obj if ctx is not None else None
    env = obj.get("env") if isinstance(obj, dict) else None
    if env is None:
        env = Environment.process()
        if ctx is not None:
            root = ctx.find_root()
            root.obj = {**(root.obj if isinstance(root.obj, dict) else {}), "env": env}
    return env  # type: ignore[no-any-return]


def open_hippo(ctx: typer.Context, *, db: str | None = None, project: str | None = None,
               embedder: str | None = None, location: Any = None, read: bool = False,
               busy_timeout_ms: int | None = None) -> Any:
    """Build the Hippo for this call: command flags win over the root's, then env/config.

    `read=True` for a read command: a missing or empty database is said on stderr and
    exits 0, an older schema is refused, nothing is created or converted, and its cache
    writes never wait for another process's write lock."""
    return hippo_for(root_flags(ctx), db=str(db) if db else None, project=project,
                     embedder=embedder, location=location, read=read,
                     busy_timeout_ms=busy_timeout_ms, env=environment(ctx))


def parse_ids(values: list[str]) -> list[int]:
    from hippo.memory.records import MAX_ID

    out = []
    for v in values:
        digits = v.strip()
        # ASCII only: str.isdigit() also accepts digits such as '٣' or '²'.
        if not (digits.isascii() and digits.isdigit()) or int(digits) > MAX_ID:
            raise UsageError(f"not a memory id: {v!r} (ids are positive integers)")
        out.append(int(digits))
    return out


def handled(fn: Any) -> Any:
    """Wrap a command: a HippoError becomes one stderr line (the call's) and its exit code."""
    import functools

    from hippo.errors import HippoError, scrub

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HippoError as exc:
            ctx = next((a for a in (*args, *kwargs.values()) if isinstance(a, typer.Context)),
                       None)
            env = environment(ctx)
            if env.debug:
                raise
            env.stderr.write(scrub(f"hippo: {exc}\n", env.environ))
            raise typer.Exit(int(exc.exit_code)) from None

    return wrapper


def purge_left(label: str, server: bool, what: str = "the old text") -> str:
    """The warning when a purge's last step (`Store.checkpoint`) could not run: what still
    holds the erased text, and what to do."""
    if server:
        return (f"hippo: warning: could not rewrite the tables of {label} (another connection "
                f"is using them, or this role does not own them); {what} stays in their "
                "free space until they are rewritten: repeat the command once that "
                "connection ends (or have their owner run VACUUM FULL)\n")
    return (f"hippo: warning: another process is reading {label}; {what} stays in its -wal "
            "file until the last process using it exits; repeat the command then to be sure\n")
