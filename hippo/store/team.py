"""A team store (PostgreSQL only), through the store's seam: what `hippo team init` and
`hippo team add-member` ask of `hippo.store.postgres.team`."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from hippo.errors import UsageError
from hippo.store.location import is_server


def _backend(url: str) -> ModuleType:
    if not is_server(url):
        raise UsageError("`hippo team` sets up a PostgreSQL store: give --db postgresql://... "
                         "(an administrator's URL)")
    from hippo.store import postgres_module

    return postgres_module("team")


def init(url: str, team: str, schema: str | None = None) -> dict[str, Any]:
    """Set up (or bring up to date) the team store `team` at `url`; what was made."""
    result: dict[str, Any] = _backend(url).init(url, team, schema)
    return result


def add_member(url: str, team: str, name: str, *, password: bool = True) -> dict[str, Any]:
    """Make `name` a member of `team`; what the member needs to connect."""
    result: dict[str, Any] = _backend(url).add_member(url, team, name, password=password)
    return result
