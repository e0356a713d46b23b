"""Dates a query names: "what did we decide on 3 March 2025?", "the deploy of 2025-03-03",
"in July 2024": each absolute date becomes a time window (docs/quality.md).

The pipeline adds the window's nearest vectors as candidates and gives memories created
inside a window a small, bounded relevance boost. Relative phrases ("last week") are left
alone: they have no anchor a search can trust. Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH_OF = {m: i for i, m in enumerate(_MONTHS, 1)}
_MONTH_OF.update({m[:3]: i for i, m in enumerate(_MONTHS, 1)})
_MON = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
       r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = re.compile(r"\d{4}")


def is_month(word: str) -> bool:
    """True for a month's name or its three-letter abbreviation, any case."""
    return word.lower().rstrip(".") in _MONTH_OF


@functools.cache
def _date_patterns() -> tuple[re.Pattern[str], ...]:
    """Day-month-year, month-day-year, month-year, ISO day, ISO month; compiled on first
    use (a few ms that a query without a four-digit number never pays)."""
    return (
        re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON},?\s*(\d{{4}})\b", re.IGNORECASE),
        re.compile(rf"\b{_MON}\s+(\d{{1,2}}){_ORD},?\s*(\d{{4}})\b", re.IGNORECASE),
        re.compile(rf"\b{_MON},?\s+(\d{{4}})\b", re.IGNORECASE),
        re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
        re.compile(r"\b(\d{4})-(\d{2})\b(?!-\d)"),
    )


class Window(NamedTuple):
    """A span of time a query names: [start, end), UTC."""

    start: datetime
    end: datetime

    def widened(self, days: float) -> Window:
        pad = timedelta(days=days)
        return Window(self.start - pad, self.end + pad)

    def contains(self, when: datetime) -> bool:
        return self.start <= when < self.end


def _month_num(name: str) -> int:
    return _MONTH_OF[name.lower().rstrip(".")[:3]]


def _day(year: int, month: int, day: int) -> Window | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return Window(start, start + timedelta(days=1))


def _month(year: int, month: int) -> Window | None:
    if not (1 <= month <= 12 and 1 <= year <= 9998):
        return None
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Window(start, end)


def mentioned_dates(text: str) -> list[Window]:
    """Absolute calendar days and months named in `text`, in order, without repeats.

    Understood: `7 July 2023`, `7th of July, 2023`, `July 7, 2023`, `Dec 1,2023`,
    `2023-07-07`, and months `July 2023`, `2023-07`. A month is named only when no day
    of it is named in the same phrase; an impossible day (`31 February 2023`) leaves
    just its month.
    """
    if not _YEAR.search(text):
        return []
    day_month_year, month_day_year, month_year, iso_day, iso_month = _date_patterns()
    found: list[tuple[int, Window]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], w: Window | None) -> None:
        if w is None or any(a < m.end() and m.start() < b for a, b in taken):
            return
        taken.append((m.start(), m.end()))
        found.append((m.start(), w))

    for m in day_month_year.finditer(text):
        add(m, _day(int(m[3]), _month_num(m[2]), int(m[1])))
    for m in month_day_year.finditer(text):
        add(m, _day(int(m[3]), _month_num(m[1]), int(m[2])))
    for m in iso_day.finditer(text):
        add(m, _day(int(m[1]), int(m[2]), int(m[3])))
    for m in month_year.finditer(text):
        add(m, _month(int(m[2]), _month_num(m[1])))
    for m in iso_month.finditer(text):
        add(m, _month(int(m[1]), int(m[2])))
    found.sort(key=lambda x: x[0])
    out: list[Window] = []
    for _, w in found:
        if w not in out:
            out.append(w)
    return out


def in_any(when: datetime, windows: Sequence[Window]) -> bool:
    return any(w.contains(when) for w in windows)
