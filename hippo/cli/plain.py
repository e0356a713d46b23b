"""CLI helpers that do not import Typer, so the search fast path (`hippo.cli.fastpath`) can
use them too."""

from __future__ import annotations

from typing import Any


def hippo_for(root: dict[str, Any], *, db: str | None = None, project: str | None = None,
              embedder: str | None = None, location: Any = None, read: bool = False,
              busy_timeout_ms: int | None = None, env: Any = None) -> Any:
    """Build the Hippo for this call: command flags win over the root's, then env/config.

    `location`: where the call works when that is not the cwd (a hook's `cwd`). `read`: a
    read command, which never creates, migrates or converts the file (docs/usage.md).
    `env`: what the call runs in (`hippo.console.environment`; default this process's)."""
    from hippo.core import Hippo

    flags = dict(root)
    for key, value in (("db", db), ("project", project), ("embedder", embedder)):
        if value is not None:
            flags[key] = value
    return Hippo(None, env=env, location=location, read=read,
                 busy_timeout_ms=busy_timeout_ms, **flags)


def read_text_arg(value: str, env: Any = None) -> str:
    """`-` means stdin everywhere (the call's, `env`'s; default this process's).

    Read as bytes and decoded the way Python decodes argv, whatever the locale: a byte that
    is not UTF-8 becomes a lone surrogate, which each command then handles as it handles one
    in an argument (a search reads it as a space, `add` and `edit` refuse the text), instead
    of a UnicodeDecodeError under a UTF-8 locale's strict stdin."""
    if value == "-":
        import sys

        stdin = env.stdin if env is not None else sys.stdin
        text = stdin.buffer.read().decode("utf-8", "surrogateescape")
        return text.replace("\r\n", "\n").replace("\r", "\n")  # as text-mode stdin does
    return value
