"""The SPEC memory record: validation of input and the one canonical JSON form on output."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from hippo import timeutil
from hippo.errors import UsageError
from hippo.memory.memtypes import TIERS, MemType, resolve
from hippo.store.memories import FIELDS  # the record's fields are the table's columns

STATUSES = ("active", "done", "consolidated", "retired", "deleted")
AUTHORS = ("human", "machine")
MAX_TEXT_CHARS = 20_000
MAX_TAGS = 64
MAX_ID = 2**63 - 1  # SQLite's largest INTEGER
# Types a machine may not put in front of every session on its own (SPEC: authorship;
# `hippo.store.clauses.UNVERIFIED` is the same test in SQL).
REVIEWED_TYPES = ("rule", "preference")
# A record's times say when something happened: a clock a little ahead (another machine's
# export) is tolerated, a far-future time is refused, or a todo dated 9999 would stay
# fresh and never retire (freshness counts age from it, clamped at zero).
MAX_FUTURE_DAYS = 1
# `source` is provenance (chunk ids, session, file, lines), written by hippo or copied from
# an export: nested a few levels at most. A hostile one (300 deep, 30 MB) is refused.
MAX_SOURCE_DEPTH = 32
MAX_SOURCE_BYTES = 1 << 20

_SPACE = re.compile(r"\s+")
_TRAIL = re.compile(r"[\s.!;,]+$")


def unreviewed(rec: dict[str, Any]) -> bool:
    """A rule or preference a machine wrote that no person has verified or pinned yet: what
    shows it to an agent says so, not as a person's rule."""
    return (rec.get("author") == "machine" and rec.get("type") in REVIEWED_TYPES
            and not rec.get("verified_at") and not rec.get("pinned"))


def masked(value: Any) -> Any:
    """`value` with the secrets in every string of it masked (`hippo.redact`): a text, a
    project, tags, a source's keys and values. Anything else is returned as it is."""
    from hippo.redact import redact_text

    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, dict):
        return {masked(k): masked(v) for k, v in value.items()}
    return value


def normalise_text(text: str) -> str:
    """Form used to recognise the same statement: NFKC, case-folded, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _TRAIL.sub("", _SPACE.sub(" ", text).strip())


def dedup_key(mtype: str, project: str | None, text: str) -> str:
    raw = f"{mtype}\x00{project or ''}\x00{normalise_text(text)}"
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def clean_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [t for t in re.split(r"[,\s]+", tags) if t]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise UsageError("tags must be a list of strings")
    from hippo.redact import redact_text

    # Masked before lower case: the shape of a token (ghp_, AKIA...) is in its case.
    out = sorted({redact_text(t.strip()).lower() for t in tags if t.strip()})
    if len(out) > MAX_TAGS:
        raise UsageError(f"at most {MAX_TAGS} tags")
    return out


def _unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise UsageError(f"{name} must be a number between 0 and 1, got {value!r}") from None
    if not 0.0 <= float(value) <= 1.0:
        raise UsageError(f"{name} must be between 0 and 1, got {value}")
    return float(value)


@dataclass(slots=True)
class NewMemory:
    """A validated memory ready to store (ids and timestamps optional, kept when given).

    The redaction choke point for new memories: every Brain insert (`add`, `add -`,
    `import`, the extractor, undo, an MCP `remember`) builds one of these, so its text is
    masked here (`hippo.redact`), before it is embedded, hashed or stored; so are its
    project, tags and every string of its source.
    """

    text: str
    type: str
    tier: str
    project: str | None
    tags: list[str] = field(default_factory=list)
    importance: float = 0.5
    author: str = "human"
    status: str = "active"
    pinned: bool = False
    canonical: bool = False
    confidence: float = 0.5
    id: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    confirmed_at: str | None = None
    verified_at: str | None = None
    consolidated_into: int | None = None
    superseded_by: int | None = None
    source: dict[str, Any] | None = None
    valid_from: str | None = None  # None: its source chunk's time, else created_at
    valid_to: str | None = None

    def __post_init__(self) -> None:
        self.text = masked(self.text)
        self.project = masked(self.project)
        self.tags = masked(self.tags)
        self.source = masked(self.source)

    @property
    def dedup_key(self) -> str:
        return dedup_key(self.type, self.project, self.text)


def _opt_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ID:
        raise UsageError(f"{name} must be a positive integer id up to {MAX_ID}, got {value!r}")
    return value


def _flag(value: Any, name: str) -> bool:
    """true/false (or 1/0): a string such as "no" must not quietly mean True."""
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise UsageError(f"{name} must be true or false, got {value!r}")


def check_text(text: str) -> str:
    """A memory's text as a writer must take it: within MAX_TEXT_CHARS, and UTF-8."""
    if len(text) > MAX_TEXT_CHARS:
        raise UsageError(f"text is {len(text)} characters; the limit is {MAX_TEXT_CHARS}")
    return require_utf8(text, "text")


def require_utf8(value: str, name: str) -> str:
    """Text that SQLite can store: a command-line byte that was not UTF-8 is refused here."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{name} is not valid UTF-8 (an undecodable byte at character "
                         f"{exc.start}); pass UTF-8 text") from None
    return value


def _opt_time(value: Any, name: str, *, future: bool = False) -> str | None:
    """An ISO-8601 time in the canonical form; `future`: a time ahead is meant (a validity
    that ends later), not a clock error."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{name} must be an ISO-8601 string")
    try:
        dt = timeutil.parse(value)
    except UsageError as exc:
        raise UsageError(f"{name}: {exc}") from None
    from datetime import timedelta

    if not future and dt - timeutil.now() > timedelta(days=MAX_FUTURE_DAYS):
        raise UsageError(f"{name} {value!r} is in the future (more than {MAX_FUTURE_DAYS} day "
                         "ahead of this clock); give the time it happened")
    return timeutil.iso(dt)


def check_source(source: Any) -> dict[str, Any] | None:
    """A provenance object within MAX_SOURCE_DEPTH levels and MAX_SOURCE_BYTES as JSON."""
    if source is None:
        return None
    if not isinstance(source, dict):
        raise UsageError("source must be a JSON object or null")
    stack: list[tuple[Any, int]] = [(source, 1)]  # iterative: no RecursionError however deep
    while stack:
        value, depth = stack.pop()
        if depth > MAX_SOURCE_DEPTH:
            raise UsageError(f"source is nested more than {MAX_SOURCE_DEPTH} levels deep; "
                             "provenance is a flat object (chunks, session, file, lines)")
        children = value.values() if isinstance(value, dict) else value \
            if isinstance(value, list) else ()
        stack.extend((v, depth + 1) for v in children if isinstance(v, dict | list))
    import orjson

    try:
        size = len(orjson.dumps(source))
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise UsageError(f"source cannot be stored as JSON ({exc})") from None
    if size > MAX_SOURCE_BYTES:
        raise UsageError(f"source is {size} bytes as JSON; the limit is {MAX_SOURCE_BYTES}")
    return source


def from_input(data: Any, types: dict[str, MemType], *, default_project: str | None,
               default_author: str = "human") -> NewMemory:
    """Validate one input record; only `text` is required. Raises UsageError."""
    if isinstance(data, str):
        data = {"text": data}
    if not isinstance(data, dict):
        raise UsageError("a record must be a JSON object with at least \"text\"")
    unknown = [k for k in data if k not in FIELDS and k != "score"]
    if unknown:
        raise UsageError(f"unknown field {unknown[0]!r}; fields: {', '.join(FIELDS)}")
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        raise UsageError("\"text\" must be a non-empty string")
    check_text(text)
    mtype = resolve(str(data.get("type") or "fact"), types)
    tier = data.get("tier") or mtype.tier
    if tier not in TIERS:
        raise UsageError(f"unknown tier {tier!r}; known tiers: {', '.join(TIERS)}")
    project = data.get("project", default_project)
    if project is not None and (not isinstance(project, str) or not project.strip()):
        raise UsageError("project must be a non-empty string or null (global)")
    if project is not None:
        require_utf8(project, "project")
    author = data.get("author") or default_author
    if author not in AUTHORS:
        raise UsageError(f"author must be one of {', '.join(AUTHORS)}, got {author!r}")
    status = data.get("status") or "active"
    if status not in STATUSES:
        raise UsageError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    source = check_source(data.get("source"))
    valid_from = _opt_time(data.get("valid_from"), "valid_from")
    valid_to = _opt_time(data.get("valid_to"), "valid_to", future=True)
    if valid_from and valid_to and valid_to < valid_from:
        raise UsageError(f"valid_to {valid_to} is before valid_from {valid_from}")
    return NewMemory(
        text=text.strip(),
        type=mtype.name,
        tier=tier,
        project=project.strip() if isinstance(project, str) else None,
        tags=[require_utf8(t, "tag") for t in clean_tags(data.get("tags"))],
        importance=_unit(data.get("importance", 0.5), "importance"),
        author=author,
        status=status,
        pinned=_flag(data.get("pinned", False), "pinned"),
        canonical=_flag(data.get("canonical", False), "canonical"),
        confidence=_unit(data.get("confidence", 0.5), "confidence"),
        id=_opt_int(data.get("id"), "id"),
        created_at=_opt_time(data.get("created_at"), "created_at"),
        updated_at=_opt_time(data.get("updated_at"), "updated_at"),
        confirmed_at=_opt_time(data.get("confirmed_at"), "confirmed_at"),
        verified_at=_opt_time(data.get("verified_at"), "verified_at"),
        consolidated_into=_opt_int(data.get("consolidated_into"), "consolidated_into"),
        superseded_by=_opt_int(data.get("superseded_by"), "superseded_by"),
        source=source,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def to_record(row: dict[str, Any]) -> dict[str, Any]:
    """A `memories` row as the SPEC record (stable key order, parsed JSON fields)."""
    import orjson

    return {
        "id": row["id"],
        "text": row["text"],
        "type": row["type"],
        "tier": row["tier"],
        "project": row["project"],
        "tags": orjson.loads(row["tags"]) if row["tags"] else [],
        "importance": row["importance"],
        "author": row["author"],
        "status": row["status"],
        "pinned": bool(row["pinned"]),
        "canonical": bool(row["canonical"]),
        "confidence": row["confidence"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "confirmed_at": row["confirmed_at"],
        "verified_at": row["verified_at"],
        "consolidated_into": row["consolidated_into"],
        "superseded_by": row["superseded_by"],
        "source": orjson.loads(row["source"]) if row["source"] else None,
        "valid_from": row["valid_from"],
        "valid_to": row["valid_to"],
    }
