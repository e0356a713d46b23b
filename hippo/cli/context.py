"""`hippo context`: the rule floor for a session start, optionally with a route's guidance."""

# No `from __future__ import annotations`: Typer would eval every string annotation
# (twice) at each start; real annotations cost nothing.
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hippo.cli.common import DbOpt, JsonOpt, ProjectOpt, open_hippo

if TYPE_CHECKING:
    from hippo.layers import Packed

BudgetOpt = Annotated[int, typer.Option("--budget", "-b", min=0,
                                        help="Token budget (shipped tokenizer).")]
TopicOpt = Annotated[list[str] | None, typer.Option(
    "--topic", help="A route topic (a tag); repeatable; any one matches.")]
MAX_IDS = 20  # ids named on the stderr report line; --json lists them all
AllProjectsOpt = Annotated[bool, typer.Option("--all-projects",
                                              help="Every project, not just the current one.")]
AgentOpt = Annotated[str | None, typer.Option(
    "--agent", help="The agent this context feeds (claude-code, codex, gemini, or another "
    "name): leaves out what that agent loads from its own files, and ends with when to "
    "`remember` ([agents] remember_hint).", show_default=False)]


def context(
    ctx: typer.Context,
    budget: BudgetOpt = 800,
    route: Annotated[bool, typer.Option("--route", help="Append the domain guidance of the "
                                        "project (and --topic tags).")] = False,
    topic: TopicOpt = None,
    guidance_budget: Annotated[int, typer.Option(
        "--guidance-budget", min=0, help="Separate token budget for the guidance of --route.")
    ] = 1500,
    all_projects: AllProjectsOpt = False,
    agent: AgentOpt = None,
    project: ProjectOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Print the rule floor: active rules of the project and global ones, within a budget.

    Human-authored first, then by importance, pinned first among equals, then id. Markdown
    on stdout (JSON lines with --json); the token count and what was left out go to stderr.
    --route (or --topic) appends the route's guidance under its own budget, so guidance
    never crowds rules out. A rule or preference a machine wrote (extraction, an agent)
    loads only once a person verified (`hippo verify ID`) or pinned it; until then stderr
    counts it as awaiting review (`hippo list --unverified`) and search still finds it.
    --agent NAME: what that agent loads from its own files (CLAUDE.md, AGENTS.md, its
    notes) is left out, and the Markdown ends with when to store a memory.
    """
    from hippo.app.context import context as layers

    h = open_hippo(ctx, db=db, project=project, read=True)
    parts = layers(h, budget=budget, route=route, topics=topic or (),
                   guidance_budget=guidance_budget, every=all_projects, agent=agent,
                   hint=bool(agent) and not json)
    emit_layers(parts, json_flag=json, env=h.env)


def hint_layer(settings: object) -> "list[Packed]":
    """The remember hint as a layer, unless `[agents] remember_hint = false`."""
    from hippo.app.context import remember_hint

    return remember_hint(settings)  # type: ignore[arg-type]


def emit_layers(parts: "Sequence[Packed]", *, json_flag: bool, env: Any = None) -> None:
    """Markdown (report on stderr) or JSON lines: one record per memory, then a summary.
    `env`: the call's streams (`hippo.console.environment`; default this process's)."""
    from hippo.console.environment import current
    from hippo.console.output import write_json_lines
    from hippo.layers import render

    env = current(env)
    if json_flag:
        write_json_lines([*(r for p in parts for r in p.included), summary(parts)], env)
        return
    text = render(parts)
    if text:
        out = env.stdout.buffer
        out.write(text.encode("utf-8"))
        out.flush()
    env.stderr.write(report(parts, text) + "\n")


def summary(parts: "Sequence[Packed]") -> dict[str, object]:
    """The final JSON line: totals over the layers (and each layer when there are several)."""
    from hippo.embed import tokens
    from hippo.layers import render

    out: dict[str, object] = {
        "event": "summary",
        "tokens": tokens.count(render(parts)),
        "budget": sum(p.budget for p in parts),
        "included": sum(len(p.included) for p in parts),
        "omitted": sum(len(p.omitted) for p in parts),
        "omitted_ids": [r["id"] for p in parts for r in p.omitted],
        # Machine-written rules/preferences held back until a person verifies or pins them.
        "unverified": sum(len(p.unverified) for p in parts),
        "unverified_ids": [i for p in parts for i in p.unverified],
    }
    if len(parts) > 1:
        out["layers"] = {p.layer: p.summary() for p in parts}
    return out


def report(parts: "Sequence[Packed]", text: str) -> str:
    """One stderr line: tokens printed, per layer what loaded, the ids left out and those
    waiting for a person's review."""
    from hippo.embed import tokens

    names = {"rule_floor": "rules", "guidance": "guidance"}
    bits = []
    for p in parts:
        if p.layer == "remember":
            bits.append(f"remember hint ({p.tokens} tokens)")
            continue
        left = (f", left out {len(p.omitted)}: {_ids([r['id'] for r in p.omitted])}"
                if p.omitted else "")
        held = (f", {len(p.unverified)} machine-written awaiting review: "
                f"{_ids(p.unverified)}" if p.unverified else "")
        bits.append(f"{names.get(p.layer, p.layer)} {len(p.included)} "
                    f"({p.tokens}/{p.budget} tokens{left}{held})")
    if any(p.unverified for p in parts):
        bits.append("review: hippo list --unverified, then hippo verify ID")
    return f"hippo: {tokens.count(text)} tokens printed; " + "; ".join(bits)


def _ids(ids: "Sequence[int]") -> str:
    more = f" +{len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else ""
    return " ".join(f"#{i}" for i in ids[:MAX_IDS]) + more
