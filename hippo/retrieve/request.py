"""One Brain search request: the query and every option of a search.

The Python API (`hippo.search`, `hippo.retrieve.pipeline.search`), `hippo search`
(`hippo.cli.search_run`) and the MCP search tool all build one; its fields are the
search's keyword arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.retrieve.params import SearchParams


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose memories a Brain search sees, the one spelling of it: a project and the
    global memories (`project` None: the caller's current project), or every project.

    The command line (`-p NAME`, `--all-projects`), the MCP search tool (`project`,
    `all_projects`) and the prompt hook's recall (`hippo.layers.recall`) all say it so."""

    project: str | None = None
    every: bool = False

    def projects(self, current: str | None) -> tuple[str | None, ...] | None:
        """The projects the filter admits (None in it: global memories), or None for
        every project; `current` is the project of the call."""
        if self.every:
            return None
        return tuple(dict.fromkeys((self.project or current, None)))


HERE = Scope()  # the current project and global memories


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """What to search the Brain for, and how.

    `limit`: at most this many results (None: the `result_limit` setting, 5). `projects`:
    a `Scope` (default `HERE`: the current project and global memories); None every
    project; or a list of names (None in it = global). `since`/`until`: ISO-8601 or a relative age
    (7d, 12h), inclusive. Superseded memories are left out unless `include_superseded`;
    `as_of` (the same forms) answers what was held then: the memories valid at that time.
    `rerank` None follows the `rerank` setting. `explain` adds each stage's rank and
    score to every result. `params` overrides the [search] settings; `now` the clock.
    """

    query: str
    limit: int | None = None
    types: Sequence[str] = ()
    tiers: Sequence[str] = ()
    tags: Sequence[str] = ()
    since: datetime | str | None = None
    until: datetime | str | None = None
    projects: Scope | Sequence[str | None] | None = HERE
    include_superseded: bool = False
    as_of: datetime | str | None = None
    explain: bool = False
    rerank: bool | None = None
    params: SearchParams | None = None
    now: datetime | None = None


# The options a search takes (every field but the query), in order.
OPTIONS: tuple[str, ...] = tuple(f.name for f in fields(SearchRequest))[1:]
