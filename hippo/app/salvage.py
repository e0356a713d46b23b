"""`hippo export --salvage`: every readable record of a damaged SQLite file, each
unreadable row or field reported (`hippo.store.salvage_reader` reads past damaged pages).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hippo.errors import UsageError


def salvaged(settings: Any, store: str) -> tuple[Iterator[dict[str, Any]], Any]:
    """The records of `store` ("brain" or "echo") read past damage from the database of
    `settings`, and the report of what could not be read (complete once they are read)."""
    from hippo.config import is_server
    from hippo.store import salvage_reader

    if is_server(settings.database):
        raise UsageError("--salvage reads past damage in a SQLite file; a PostgreSQL "
                         "store is exported without it (the server checks its own pages)")
    reader = salvage_reader(settings.db_path)
    return _rows(settings.db_path, store, reader), reader.report


def _rows(path: Path, store: str, reader: Any) -> Iterator[dict[str, Any]]:
    """Records read past damage, as the plain export prints them."""
    from hippo.errors import NoDatabase

    if not path.exists():
        raise NoDatabase(f"no database at {path}: nothing to salvage")
    report = reader.report
    try:
        if store == "brain":
            from hippo.memory.records import FIELDS

            cols = list(FIELDS)
            for row in reader.read("memories", cols):
                yield _memory(row, report)
            return
        from hippo.store.chunks import to_export

        sessions = {r["id"]: r for r in reader.read("echo_sessions",
                                                 ["id", "session_key", "format"])}
        cols = ["id", "session_id", "project", "source_path", "roles", "line_start", "line_end",
                "message_ids", "started_at", "ended_at", "text"]
        for row in reader.read("echo_chunks", cols):
            session = sessions.get(row.pop("session_id"), {})
            rec = {"id": row["id"], "session": session.get("session_key"),
                   "format": session.get("format"), **{k: row[k] for k in cols[2:]}}
            try:
                yield to_export(rec)
            except ValueError:
                report.mended.append(f"echo_chunks: row {row['id']}: message_ids unreadable; "
                                     "exported as []")
                rec["message_ids"] = None
                yield to_export(rec)
    finally:
        reader.close()


def _memory(row: dict[str, Any], report: Any) -> dict[str, Any]:
    """A salvaged memory row as its record; an unreadable JSON field becomes empty, reported."""
    import orjson

    from hippo.memory.records import to_record

    for name in ("tags", "source"):
        try:
            orjson.loads(row[name] or "null")
        except orjson.JSONDecodeError:
            report.mended.append(f"memories: row {row['id']}: {name} unreadable; exported "
                                 f"as {'[]' if name == 'tags' else 'null'}")
            row[name] = None
    return to_record(row)
