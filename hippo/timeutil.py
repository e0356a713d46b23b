"""Timestamps: ISO-8601 UTC strings with a 'Z' suffix, millisecond precision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hippo.errors import UsageError


def now() -> datetime:
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return iso(now())


def parse(value: str) -> datetime:
    """Parse ISO-8601 (a date alone means midnight UTC); naive times are taken as UTC."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"not an ISO-8601 time: {value!r} (e.g. 2026-11-30 or 2026-11-30T14:00Z)") from None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def normalise(value: str) -> str:
    return iso(parse(value))


def parse_since(value: str, *, ref: datetime | None = None) -> datetime:
    """A time bound: ISO-8601, or a relative age like 7d, 12h, 30m, 2w."""
    text = value.strip().lower()
    units = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if len(text) > 1 and text[-1] in units and text[:-1].isascii() and text[:-1].isdigit():
        try:
            return (ref or now()) - timedelta(**{units[text[-1]]: int(text[:-1])})
        except (OverflowError, ValueError):
            raise UsageError(f"{value!r} reaches before year 1; give a shorter age") from None
    return parse(value)


def epoch(value: str | None) -> int:
    return int(parse(value).timestamp()) if value else 0
