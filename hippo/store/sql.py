"""The seam between the store's logic, written once, and its two backends.

A repository (`hippo.store.memories`, ...) holds a `Sql`: one connection's query helpers,
given by the backend (`hippo.store.sqlite.database.Sql`, `hippo.store.postgres.database.
PgSql`). Its queries are written once, in SQLite's parameters (`?`, `:name`), which
PostgreSQL's helpers read in psycopg's; where the two backends spell a query differently,
the query is a template whose `{fields}` its backend's `Dialect` fills (`render`).
What really differs stays in the backends: the vector index, full text, transactions and
locking, schema and migrations, file handling and salvage, row-level security.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.clauses import Dialect


class Sql(Protocol):
    """One connection's query helpers (`?` / `:name` parameters); rows come as dicts."""

    dialect: Dialect
    team: bool  # a PostgreSQL team store: row-level security, each member's own rows

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ...) -> Any:
        """Run one statement; the cursor iterates its rows as tuples."""
        ...

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ...) -> list[Row]: ...
    def stream(self, sql: str, params: Sequence[Any] | dict[str, Any] = ...
               ) -> Iterator[Row]: ...
    def row(self, sql: str, params: Sequence[Any] | dict[str, Any] = ...) -> Row | None: ...
    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ...) -> Any: ...

    def changes(self) -> int:
        """Rows the last statement changed."""
        ...

    def has_table(self, name: str) -> bool: ...


@functools.lru_cache(maxsize=512)
def render(dialect: Dialect, template: str) -> str:
    """`template` with its `{fields}` in `dialect`'s spelling (`Dialect.fragments`)."""
    return template.format_map(dialect.fragments)


class Repository:
    """A repository: its part of the domain over one connection's query helpers."""

    def __init__(self, db: Sql) -> None:
        self.db = db

    def _sql(self, template: str) -> str:
        """`template` in this store's spelling (`render`)."""
        return render(self.db.dialect, template)
