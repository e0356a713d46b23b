"""`hippo list`: memories by type, tier, project, status and age."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, JsonOpt, ProjectOpt, WideOpt, open_hippo

# At a terminal the text gets the width: the day it was made, no status unless asked for.
COLUMNS = ("id", "type", "project", "date", "text")
WITH_STATUS = ("id", "type", "project", "status", "date", "text")
WIDE = ("id", "type", "tier", "project", "status", "importance", "tags", "pinned",
        "author", "created_at", "updated_at", "text")


def list_(
    ctx: typer.Context,
    type_: Annotated[list[str] | None, typer.Option("--type", "-t", help="Repeatable.")] = None,
    tier: Annotated[list[str] | None, typer.Option(help="Repeatable.")] = None,
    status: Annotated[list[str] | None, typer.Option(help="active (default), done, "
                                                     "consolidated, retired, deleted, all.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Repeatable; all must match.")] = None,
    since: Annotated[str | None, typer.Option(help="Created since: ISO date or 7d, 12h.")] = None,
    as_of: Annotated[str | None, typer.Option(
        "--as-of", help="What was held then: memories valid at this time (ISO date or 7d, "
        "12h), replaced since or not.")] = None,
    all_projects: Annotated[bool, typer.Option("--all-projects", help="Every project.")] = False,
    limit: Annotated[int, typer.Option(min=0, help="At most this many (0: no limit).")] = 50,
    unverified: Annotated[bool, typer.Option(
        "--unverified", help="Only machine-written rules and preferences no person has "
        "verified or pinned: what the rule floor holds back until `hippo verify ID`.")] = False,
    conflicts: Annotated[bool, typer.Option(
        "--conflicts", help="Only machine-written memories that contradict a person's, each "
        "with `conflicts_with` (the person's memories): what waits for a person to settle "
        "with `hippo supersede` or `forget`.")] = False,
    project: ProjectOpt = None,
    db: DbOpt = None,
    json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """List memories, newest first (current project and global ones by default).

    \b
    Examples:
      hippo list --type rule
      hippo list --status all --since 7d --wide
      hippo list --as-of 2025-03-01
      hippo list --conflicts
      hippo list --all-projects --limit 0 --json > all.jsonl
    """
    from hippo.console.output import emit
    from hippo.memory import brain
    from hippo.memory.records import STATUSES
    from hippo.timeutil import iso, option_time, parse_since

    if conflicts:
        _conflicts_alone(as_of=as_of, since=since, status=status, tag=tag, type=type_,
                         tier=tier, unverified=unverified)
    h = open_hippo(ctx, db=db, project=project, read=True)
    statuses = list(STATUSES) if status and "all" in status else (status or ["active"])
    projects = None if all_projects else [h.project, None]
    for t in type_ or []:
        from hippo.memory.memtypes import resolve

        resolve(t, h.types)
    if conflicts:
        from hippo.memory.conflicts import open_conflicts

        found = open_conflicts(h.db, projects)
        emit(found[:limit] if limit else found, json_flag=json,
             columns=WIDE if wide else COLUMNS, wide=wide, shown=lambda r: _contradicts(r, wide))
        return
    rows = brain.listing(
        h.db, types=type_ or [], tiers=tier or [], projects=projects, statuses=statuses,
        since=iso(parse_since(since)) if since else None, tags=tag or [], limit=limit,
        unverified=unverified, as_of=option_time(as_of, "--as-of") if as_of else None,
    )
    columns = WIDE if wide else WITH_STATUS if status else COLUMNS
    emit(rows, json_flag=json, columns=columns, wide=wide,
         shown=lambda r: _shown(r, wide))


def _shown(rec: dict[str, Any], wide: bool) -> dict[str, Any]:
    from hippo.console.output import day

    return {**rec, "project": rec["project"] or "global", "date": day(rec["created_at"]),
            "created_at": day(rec["created_at"], wide=True),
            "updated_at": day(rec["updated_at"], wide=True)}


def _conflicts_alone(**given: Any) -> None:
    """`--conflicts` lists what waits for a person now: a filter it would not apply is
    refused (exit 2), not silently dropped."""
    from hippo.errors import UsageError

    used = [name for name, value in given.items() if value]
    if used:
        flag = "--" + used[0].replace("_", "-")
        raise UsageError(f"--conflicts lists the conflicts open now, in this project (or "
                         f"--all-projects); it does not take {flag}")


def _contradicts(rec: dict[str, Any], wide: bool) -> dict[str, Any]:
    """A conflict at a terminal: the machine memory, then what of the person's it contradicts."""
    said = "; ".join(f"#{o['id']} {o['text']}" for o in rec["conflicts_with"])
    return {**_shown(rec, wide), "text": f"{rec['text']}  — contradicts {said}"}
