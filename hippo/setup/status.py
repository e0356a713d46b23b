"""What `hippo doctor` says about agents: which are set up (user scope, and project scope
for the project of the current directory), and whether the commands their hooks and MCP
server run still resolve to an executable (a removed virtualenv leaves them dangling)."""

from __future__ import annotations

import os
import shutil
from collections.abc import MutableMapping
from typing import Any

from hippo.errors import ConfigError
from hippo.ops.doctor import Check
from hippo.setup import entries, files, project_root
from hippo.setup.clients import CLIENTS, SCOPES, SERVER
from hippo.setup.formats import of


def resolves(program: str) -> bool:
    """`program` is an executable file (a path) or found on PATH."""
    program = os.path.expanduser(program)
    if not program:
        return False
    if os.sep in program:
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program) is not None


def _found(agent: str, scope: str, cwd: str
           ) -> tuple[list[str], list[str], list[str], list[str]]:
    """(parts found, the programs they run, those that do not resolve, files that cannot
    be parsed)."""
    parts: list[str] = []
    runs: list[str] = []
    broken: list[str] = []
    bad: list[str] = []
    for target in CLIENTS[agent].targets(scope, project_root(cwd), ["hippo"]):
        fmt = of(target.fmt)
        try:
            data = files.read(target.path)
            doc: Any = fmt.load(data, str(target.path)) if data is not None else None
        except ConfigError:
            bad.append(str(target.path))
            continue
        if doc is None:
            continue
        programs = [(entries.tokens(c) or [""])[0] for _, c in entries.hook_commands(doc)]
        events = list(dict.fromkeys(event for event, _ in entries.hook_commands(doc)))
        if events:
            parts.append("hooks " + ", ".join(events))
        spec = entries.server(doc, target.server[0], SERVER) if target.server else None
        if isinstance(spec, MutableMapping):
            parts.append("MCP server")
            programs.append(str(spec.get("command", "")))
        runs += [p for p in dict.fromkeys(programs) if p not in runs]
        broken += [p for p in dict.fromkeys(programs) if not resolves(p) and p not in broken]
    return parts, runs, broken, bad


def checks(cwd: str) -> list[Check]:
    """One check per agent and scope that hippo is set up in (or one saying none is)."""
    out = []
    for agent in CLIENTS:
        for scope in SCOPES:
            parts, runs, broken, bad = _found(agent, scope, cwd)
            if bad:
                out.append(Check(f"agent:{agent}:{scope}", False,
                                 f"cannot parse {', '.join(bad)}"))
            elif parts:
                detail = "; ".join(parts)
                detail += (f"; does not resolve: {', '.join(broken)}" if broken
                           else f"; runs {', '.join(runs)}")
                out.append(Check(f"agent:{agent}:{scope}", not broken, detail))
    return out or [Check("agents", True, "no agent set up (`hippo setup AGENT`)")]
