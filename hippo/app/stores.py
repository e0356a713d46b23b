"""The store as the faces see it, without importing `hippo.store`: where it lives (a file
or a server, `display` without the password), why a directory cannot be written, how long
a hook waits for a read, and what sets up a team's store.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from hippo.store import HOOK_WAIT_MS

__all__ = ["HOOK_WAIT_MS", "display", "is_server", "team", "unwritable"]


def is_server(location: str | Path) -> bool:
    """True when `location` names a PostgreSQL server, not a SQLite file."""
    from hippo.config import is_server as server

    return server(location)


def display(location: str | Path) -> str:
    """What to show a person of `location`: the path, or the URL without its password."""
    from hippo.config import display as shown

    return shown(location)


def unwritable(directory: Path) -> str | None:
    """Why files cannot be created in `directory` (None: they can), with the fix."""
    from hippo.store import unwritable as why

    return why(directory)


def team(url: str) -> ModuleType:
    """What `hippo team` sets up a team store with (`init`, `add_member`); only a
    PostgreSQL store is one (else exit 2)."""
    from hippo.store import team as team_store

    return team_store(url)
