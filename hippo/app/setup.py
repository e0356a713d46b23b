"""Set an agent up (`hippo setup AGENT`): hippo's hooks and MCP server merged into its own
config files (`hippo.setup`: planned whole before any write, a backup first), or taken
out again; a dry run only says what would change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SetUp:
    """What `setup` did: nothing to remove (`absent`), the dry run's unified diff
    (`diff`), or the files written (`records`: agent, scope, action, file, backup), and
    whether any file changed (`changed`)."""

    absent: bool = False
    diff: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    changed: bool = False


def setup(agent: str, scope: str, cwd: str, *, db: str | None = None, dry_run: bool = False,
          remove: bool = False) -> SetUp:
    """Write hippo's entries for `agent` at `scope` (`user`, or `project`: the repository
    of `cwd`), its commands naming this hippo (and `db`, when given); `remove` takes them
    out again (the bytes from before, when nothing else changed the file since)."""
    import hippo.setup as st
    from hippo.setup.clients import hippo_argv
    from hippo.setup.files import State

    state = State()
    if remove:
        changes = st.plan_remove(agent, scope, cwd, state)
    else:
        changes = st.plan(agent, scope, cwd, hippo_argv(db))
    if remove and all(ch.action == "absent" for ch in changes):
        if not dry_run:
            st.apply(changes, agent, scope, state, removing=True)  # forget stale records
        return SetUp(absent=True)
    if dry_run:
        return SetUp(diff=st.dry_run(changes))
    records = st.apply(changes, agent, scope, state, removing=remove)
    return SetUp(records=[r for r in records if r["action"] != "absent"],
                 changed=any(ch.differs for ch in changes))
