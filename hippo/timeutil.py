"""Timestamps: ISO-8601 UTC strings with a 'Z' suffix, millisecond precision.

One canonical stored form, `YYYY-MM-DDTHH:MM:SS.mmmZ`, zero-padded, so text order is time
order. Accepted: any time whose UTC instant lies in years 0001..9999 (what the form can
write); an offset that carries it outside (`0001-01-01T00:00:00+14:00`) is refused with a
UsageError naming the range, never an OverflowError.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hippo.errors import UsageError


def now() -> datetime:
    return datetime.now(UTC)


RANGE = "0001-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z"


def iso(dt: datetime) -> str:
    """The canonical form (strftime's %Y does not pad years below 1000 on glibc)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    u = dt.astimezone(UTC)
    return (f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:"
            f"{u.second:02d}.{u.microsecond // 1000:03d}Z")


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
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except OverflowError:  # the offset carries it past year 1 or 9999
        raise UsageError(f"time {value!r} is outside the range hippo stores ({RANGE} in "
                         "UTC)") from None


def normalise(value: str) -> str:
    return iso(parse(value))


def parse_since(value: str, *, ref: datetime | None = None) -> datetime:
    """A time bound: ISO-8601, or a relative age like 7d, 12h, 30m, 2w."""
    text = value.strip().lower()
    units = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if len(text) > 1 and text[-1] in units and text[:-1].isascii() and text[:-1].isdigit():
        try:
            return (ref or now()) - timedelta(**{units[text[-1]]: int(text[:-1])})
        except (OverflowError, ValueError):  # timedelta(days=10**10) is a ValueError
            raise UsageError(f"{value!r} reaches before year 1; give a shorter age") from None
    return parse(value)


def epoch(value: str | None) -> int:
    return int(parse(value).timestamp()) if value else 0


def option_time(value: str, option: str) -> str:
    """A time option's value (`parse_since`'s forms) as the canonical form; a bad one is a
    UsageError naming the option."""
    try:
        return iso(parse_since(value))
    except UsageError as exc:
        raise UsageError(f"{option}: {exc}") from None
