"""The store as the faces see it, without importing `hippo.store`: why a directory cannot
be written, how long a hook waits for a read, and what sets up a team's store. (Where a
store lives, a file or a server, is a setting's meaning: `hippo.config.is_server`,
`display`.)
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from hippo.store import HOOK_WAIT_MS

__all__ = ["HOOK_WAIT_MS", "team", "unwritable"]


def unwritable(directory: Path) -> str | None:
    """Why files cannot be created in `directory` (None: they can), with the fix."""
    from hippo.store import unwritable as why

    return why(directory)


def team(url: str) -> ModuleType:
    """What `hippo team` sets up a team store with (`init`, `add_member`); only a
    PostgreSQL store is one (else exit 2)."""
    from hippo.store import team as team_store

    return team_store(url)
