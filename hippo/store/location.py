"""Where a store lives: a SQLite file's path or a PostgreSQL server's URL.

`--db`, `HIPPO_DB` and `db = ...` in the config file take either; a value that starts
with `postgresql://` (or `postgres://`) names a server, anything else a file. The URL's
password is never shown: `display` is what messages, JSON output and logs say.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

SCHEMES = ("postgresql://", "postgres://")


def is_server(value: str | Path) -> bool:
    """True when `value` names a PostgreSQL server, not a SQLite file."""
    return isinstance(value, str) and value.lower().startswith(SCHEMES)


def display(value: str | Path) -> str:
    """What to show a person: the path, or the URL without its password (and without
    a `password=` query parameter)."""
    if not is_server(value):
        return str(value)
    text = str(value)
    try:
        parts = urlsplit(text)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}@{host}" if ":" in userinfo else netloc
        query = "&".join(p if not p.lower().startswith("password=") else "password=***"
                         for p in parts.query.split("&")) if parts.query else ""
        return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
    except ValueError:
        return text.split("://", 1)[0] + "://…"
