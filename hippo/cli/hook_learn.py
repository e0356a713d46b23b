"""The hook's stdin, and its session-end / Codex stop events, without Typer.

A session-end hook runs while the agent shuts down (Claude Code gives all SessionEnd hooks
1.5 s together by default) and Codex's Stop after every turn: importing Typer would be
most of their cost. So `hippo [--db ...] hook AGENT session-end|stop` is run from here
(`hippo.cli.main` asks `parse`); `hippo.cli.hook` runs the same `learn` for every other
spelling of the call (event from stdin, --help, ...).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hippo.cli.hookstdin import HookInputError, read_stdin

AGENTS = ("claude-code", "codex")
# What each agent sends. Codex's Stop fires after every turn; only newer Codex versions
# send SessionEnd (docs/agents.md, "Codex CLI hooks").
AGENT_EVENTS = {"claude-code": ("session-start", "prompt", "session-end"),
                "codex": ("session-start", "prompt", "stop", "session-end")}
LEARN = ("session-end", "stop")  # answered by a background job, not by context
# Set by `hippo extract --extractor agent` in the agent CLI it runs (`hippo.extract.agent`):
# hippo's hooks in that headless session add nothing and learn nothing.
AGENT_RUN = "HIPPO_AGENT_RUN"


def read_payload(env: Any = None) -> dict[str, Any]:
    """The hook's JSON object from the call's stdin (`env`'s; default this process's)."""
    import json  # not orjson: importing it (datetime, uuid, dataclasses) costs a hook ~10 ms

    raw = read_stdin(json.loads, env.stdin if env is not None else None)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # bad JSON or bad UTF-8
        raise HookInputError("stdin is not the hook's JSON") from None
    if not isinstance(data, dict):
        raise HookInputError("stdin is not a JSON object")
    return data


def learn(flags: dict[str, Any], agent: str, name: str, payload: dict[str, Any]) -> str:
    """Queue the background job for the hook's transcript; what happened, in a line."""
    if os.environ.get(AGENT_RUN):
        return "inside hippo's own agent run (--extractor agent): nothing to learn"
    from hippo.config import load
    from hippo.maintain import session_job

    session = payload.get("session_id")
    if not isinstance(session, str) or not session.strip():
        raise HookInputError("no session_id on stdin")
    raw = payload.get("transcript_path")
    path: Path | None
    if isinstance(raw, str) and raw.strip():
        path = Path(raw).expanduser()
    elif agent == "codex":  # null in some Codex versions: its rollout file, by session id
        path = session_job.codex_rollout(session)
        if path is None:
            raise HookInputError(f"no transcript_path on stdin and no rollout of session "
                                 f"{session} under {session_job.codex_sessions()}")
    else:
        raise HookInputError("no transcript_path on stdin")
    if not path.is_file():
        raise HookInputError(f"transcript {path} is not a file")
    settings = load({k: v for k, v in flags.items() if k in ("db", "embedder", "project")})
    every = None
    if name == "stop":
        every = float(settings["stop_ingest_minutes"])
        if not every >= 0:
            raise HookInputError(f"stop_ingest_minutes must be 0 or more, got {every}")
    cwd = payload.get("cwd")
    return session_job.start(agent, name, session, Path(os.path.abspath(path)),
                             db=_absolute(settings.database), flags=flags,
                             every_minutes=every,
                             cwd=cwd if isinstance(cwd, str) and cwd.strip() else None)


def parse(argv: list[str]) -> tuple[dict[str, Any], str, str] | None:
    """(root flags, agent, event) of a plain `hippo [root options] hook AGENT EVENT` whose
    event is learned in the background; None for anything else (the Typer app runs it)."""
    from hippo.cli.fastpath import ROOT, _Defer, _option

    root: dict[str, Any] = {}
    i = 0
    try:
        while i < len(argv) and argv[i] != "hook":
            i = _option(ROOT, argv, i, root)
    except _Defer:
        return None
    rest = argv[i + 1:]
    if len(rest) != 2 or rest[0] not in AGENT_EVENTS or rest[1] not in LEARN \
            or rest[1] not in AGENT_EVENTS[rest[0]]:
        return None
    return root, rest[0], rest[1]


def run(root: dict[str, Any], agent: str, event: str, env: Any) -> None:
    """The hook, never failing the agent: nothing on stdout, one line on stderr, exit 0.
    `env`: the call's streams and variables (`hippo.console.environment`)."""
    if root.get("debug"):
        env.set_debug()
    try:
        message = learn(root, agent, event, read_payload(env))
    except Exception as exc:  # noqa: BLE001 - the agent must go on whatever happened here
        from hippo.errors import scrub

        message = " ".join(str(exc).split()) or type(exc).__name__
        env.stderr.write(scrub(f"hippo hook: {message} (nothing learned)\n", env.environ))
        return
    env.stderr.write(f"hippo hook: {message}\n")


def _absolute(db: Path | str) -> Path | str:
    """The database as a background job must name it: a file by its absolute path."""
    return db if isinstance(db, str) else Path(os.path.abspath(db))
