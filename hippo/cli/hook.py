"""`hippo hook AGENT [EVENT]`: answer an agent's lifecycle hook with hippo's layers.

Reads the hook's JSON from stdin and prints what the agent adds as context (session-start,
prompt), or starts the background job that learns from the session's transcript
(session-end; Codex `stop`, throttled: `hippo.maintain.session_job`). A hook must never
break the agent: on any error nothing goes to stdout, one line to stderr, exit 0.
"""

# No `from __future__ import annotations`: Typer would eval every string annotation
# (twice) at each start; real annotations cost nothing.
from typing import Annotated, Any

import typer

from hippo.app.stores import HOOK_WAIT_MS
from hippo.cli.common import DbOpt, JsonOpt, ProjectOpt, environment, open_hippo, root_flags
from hippo.cli.context import TopicOpt
from hippo.cli.hook_learn import (
    AGENT_EVENTS,
    AGENT_RUN,
    AGENTS,
    LEARN,
    HookInputError,
    learn,
    read_payload,
)
from hippo.errors import NoDatabase, scrub
from hippo.layers.recall import MIN_SCORE

# Our event names and the agent's, both accepted; the agent's is what we answer with.
EVENTS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
          "session-end": "SessionEnd", "stop": "Stop"}
ALIASES = {"sessionstart": "session-start", "session-start": "session-start",
           "userpromptsubmit": "prompt", "user-prompt-submit": "prompt", "prompt": "prompt",
           "sessionend": "session-end", "session-end": "session-end", "stop": "stop"}


def hook(
    ctx: typer.Context,
    agent: Annotated[str, typer.Argument(help="The agent calling: claude-code or codex.",
                                         autocompletion=lambda: list(AGENTS))],
    event: Annotated[str | None, typer.Argument(
        help="session-start, prompt, session-end, or stop (codex) (default: the stdin's "
        "hook_event_name).",
        autocompletion=lambda: list(EVENTS))] = None,
    budget: Annotated[int, typer.Option("--budget", "-b", help="Token budget of what is "
                                        "printed (rules, or prompt memories).")] = 800,
    route: Annotated[bool, typer.Option("--route", help="session-start: add the project's "
                                        "guidance (own budget, 1500).")] = False,
    topic: TopicOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-n",
                                       help="prompt: at most this many memories.")] = 5,
    min_score: Annotated[float, typer.Option(
        "--min-score", min=0.0, max=1.0,
        help="prompt: leave out memories whose search score is below this, and every "
        "memory when the prompt is about a thing never stored (0 keeps all).",
    )] = MIN_SCORE,
    plain: Annotated[bool, typer.Option("--plain", help="Print the context as plain text "
                                        "instead of the agent's JSON.")] = False,
    project: ProjectOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,  # the agent's JSON is the default output (--plain: the text)
) -> None:
    """Answer an agent hook: read its JSON on stdin, print the context it adds.

    session-start prints the rule floor (like `hippo context`); prompt prints the memories
    that match the prompt (like `hippo search --format markdown`). The project is
    --project, else the hook's `cwd`. Output is the hookSpecificOutput.additionalContext
    JSON that Claude Code and Codex read (--plain: the text). session-end (and Codex's
    stop, at most once per session every `stop_ingest_minutes`) prints nothing: it starts
    a background ingest + extract of the hook's transcript and returns at once (`hippo
    stats` shows how it went). Errors never fail the agent: nothing on stdout, one line on
    stderr, exit 0.
    """
    resolved: list[str] = []  # the event, once known (what an error line says was lost)
    env = environment(ctx)  # the call's streams and variables (`hippo.console.environment`)
    try:
        text, answer_as = _answer(ctx, agent, event, resolved, budget=budget, route=route,
                                  topics=tuple(topic or ()), limit=limit, min_score=min_score,
                                  project=project, db=db)
    except NoDatabase:  # nothing stored yet: no rules, only when to remember
        text, answer_as = _hint_alone(ctx, resolved), "SessionStart"
        if not text:
            return
    except Exception as exc:  # noqa: BLE001 - the agent must go on whatever happened here
        message = " ".join(str(exc).split()) or type(exc).__name__
        lost = "nothing learned" if set(resolved) & set(LEARN) else "no context added"
        env.stderr.write(scrub(f"hippo hook: {message} ({lost})\n", env.environ))
        return
    if not text:
        return
    if plain:
        env.stdout.write(text)
    else:
        from hippo.console.output import dumps

        env.stdout.buffer.write(dumps({"hookSpecificOutput": {
            "hookEventName": answer_as, "additionalContext": text}}))
    env.stdout.flush()


def _hint_alone(ctx: typer.Context, resolved: list[str]) -> str:
    """A session start before anything is stored: the remember hint alone (when on)."""
    env = environment(ctx)
    if resolved[-1:] != ["session-start"] or env.environ.get(AGENT_RUN):
        return ""
    from hippo.cli.context import hint_layer
    from hippo.config import load

    flags = {k: v for k, v in root_flags(ctx).items() if k in ("db", "embedder", "project")}
    try:
        return "".join(p.text for p in hint_layer(load(flags, env.environ)))
    except Exception as exc:  # noqa: BLE001 - a hook never breaks the agent
        env.stderr.write(scrub(f"hippo hook: {' '.join(str(exc).split())} (no context "
                               "added)\n", env.environ))
        return ""


def resolve_event(event: str | None, payload: dict[str, Any], agent: str = "claude-code"
                  ) -> str:
    """Our event name from the argument, else from the payload's hook_event_name."""
    given = event or str(payload.get("hook_event_name") or "")
    name = ALIASES.get(given.strip().lower())
    known = AGENT_EVENTS[agent]
    if name not in known:
        raise HookInputError(f"unknown hook event {given!r} for {agent}; known: "
                             f"{', '.join(known)}"
                             if given else "no event given and no hook_event_name on stdin")
    return name  # type: ignore[return-value]


def _answer(ctx: typer.Context, agent: str, event: str | None, resolved: list[str], *,
            budget: int, route: bool,
            topics: tuple[str, ...], limit: int, min_score: float, project: str | None,
            db: Any) -> tuple[str, str]:
    if agent not in AGENTS:
        raise HookInputError(f"unknown agent {agent!r}; known: {', '.join(AGENTS)}")
    if ALIASES.get(str(event).lower()) in AGENT_EVENTS[agent]:
        resolved.append(ALIASES[str(event).lower()])
    env = environment(ctx)
    payload = read_payload(env)
    name = resolve_event(event, payload, agent)
    resolved.append(name)
    answer_as = str(payload.get("hook_event_name") or EVENTS[name])
    if env.environ.get(AGENT_RUN) and name not in LEARN:
        return "", answer_as  # hippo's own headless agent run: nothing to add
    if name in LEARN:
        flags = root_flags(ctx)
        if db is not None:
            flags["db"] = str(db)
        env.stderr.write(f"hippo hook: {learn(flags, agent, name, payload)}\n")
        return "", answer_as
    chosen = project or root_flags(ctx).get("project")
    location = None
    if isinstance(payload.get("cwd"), str) and payload["cwd"]:
        from hippo.project import locate

        # recorded on open when it is a worktree; a relative one is the call's cwd's
        location = locate(payload["cwd"], env.cwd)
        chosen = chosen or location.project
    h = open_hippo(ctx, db=db, project=chosen, location=location, read=True,
                   busy_timeout_ms=HOOK_WAIT_MS)
    from hippo.layers import Route

    where = Route(h.project, topics, agent=agent)
    if name == "session-start":
        from hippo.cli.context import hint_layer, report
        from hippo.layers import guidance, rule_floor

        parts = [rule_floor(h.db, where, budget)]
        if route or topics:
            parts.append(guidance(h.db, where))
        from hippo.memory.conflicts import waiting_line

        hint = hint_layer(h.settings)
        waiting = waiting_line(h.db, h.project)
        text = "\n".join([*(p.text for p in parts if p.text),
                          *([f"{waiting}\n"] if waiting else []), *(p.text for p in hint)])
        env.stderr.write(report([*parts, *hint], text) + "\n")
        return text, answer_as  # the hint last: what to do with what the session learns
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return "", answer_as
    from hippo.layers import recall

    records, degraded = recall.recall(h, prompt, where, limit, min_score)
    for note in degraded:
        env.stderr.write(f"hippo: degraded: {note}\n")
    return recall.render(records, budget), answer_as

