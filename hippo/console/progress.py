"""Progress on stderr for a person; silence when stderr is not a terminal (cron, pipes)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, Protocol


class Progress(Protocol):
    def advance(self, n: int = 1) -> None: ...
    def total(self, n: int | None) -> None: ...
    def describe(self, text: str) -> None: ...


class _Quiet:
    def advance(self, n: int = 1) -> None:
        pass

    def total(self, n: int | None) -> None:
        pass

    def describe(self, text: str) -> None:
        pass


class _Rich:
    def __init__(self, bar: Any, task: Any) -> None:
        self._bar, self._task = bar, task

    def advance(self, n: int = 1) -> None:
        self._bar.advance(self._task, n)

    def total(self, n: int | None) -> None:
        self._bar.update(self._task, total=n)

    def describe(self, text: str) -> None:
        self._bar.update(self._task, description=text)


_LIVE: list[Any] = []  # the console of the bar being drawn, if any


def above(text: str, *, soft_wrap: bool = False) -> None:
    """Print a line at the terminal: above the progress bar while one is drawn (the bar's
    console erases it first), else on stdout. `soft_wrap` leaves long lines to the
    terminal (a JSON line stays one line when copied)."""
    if _LIVE:
        _LIVE[-1].print(text, markup=False, highlight=False, soft_wrap=soft_wrap,
                        emoji=False)
        return
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def interactive() -> bool:
    return sys.stderr.isatty() and os.environ.get("HIPPO_NO_PROGRESS") != "1"


@contextlib.contextmanager
def progress(description: str, total: int | None = None, *,
             unit: str = "items") -> Iterator[Progress]:
    """A rich progress bar on stderr when a person watches, else a no-op.

    `unit` "bytes" counts bytes (ingest: how much of the transcripts is read and embedded)
    and shows the rate and the time left; "items" counts items (sessions, memories). While
    the bar runs, what the command writes to `sys.stdout` is printed above it."""
    if not interactive():
        yield _Quiet()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as RichProgress

    counts: tuple[Any, ...] = ((DownloadColumn(), TransferSpeedColumn()) if unit == "bytes"
                               else (MofNCompleteColumn(),))
    bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                       *counts, TimeElapsedColumn(), TextColumn("eta"),
                       TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                       redirect_stdout=True)
    with bar:
        _LIVE.append(bar.console)
        try:
            yield _Rich(bar, bar.add_task(description, total=total))
        finally:
            _LIVE.pop()
