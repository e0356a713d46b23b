"""Echo chunks as JSON records (for `hippo export --store echo`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Database

EXPORT = (
    "SELECT c.id, e.session_key AS session, e.format, c.project, c.source_path, c.roles, "
    "c.line_start, c.line_end, c.message_ids, c.started_at, c.ended_at, c.text "
    "FROM echo_chunks c JOIN echo_sessions e ON e.id = c.session_id ORDER BY c.id"
)


def rows(db: Database) -> Iterator[dict[str, Any]]:
    for row in db.rows(EXPORT):
        yield to_record(row)


def to_record(row: dict[str, Any]) -> dict[str, Any]:
    """An EXPORT row as the exported record (roles as a list, message ids parsed)."""
    import orjson

    row["roles"] = row["roles"].split(",") if row["roles"] else []
    row["message_ids"] = orjson.loads(row["message_ids"]) if row["message_ids"] else []
    return row
