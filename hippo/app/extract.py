"""Turn new Echo content into Brain memories (`hippo extract`): the extractor chosen by
flag or `[extract]`, the sessions past the watermark (or one session again) in a job of
their own, each memory and session to the face's `emit`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippo.errors import ConfigError, HippoError, UsageError

if TYPE_CHECKING:
    from hippo.core import Hippo


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run: what the sessions extracted before it added (the session in
    progress was not written)."""

    def __init__(self, summary: dict[str, Any]) -> None:
        super().__init__(summary)
        self.summary = summary


@dataclass(slots=True)
class Extracted:
    """A run's summary, and what stopped it (a spend cap, an open circuit, a failing
    provider: nothing of the session in progress was written), if anything."""

    summary: dict[str, Any]
    stopped: HippoError | None = None

    @property
    def partial(self) -> bool:
        """Some session was skipped (each one reported as an event)."""
        return bool(self.summary["sessions_skipped"])


def extract(h: Hippo, *, extractor: str | None = None, model: str | None = None,
            session: str | None = None, dry_run: bool = False,
            emit: Callable[[dict[str, Any]], None], progress: Callable[..., Any]) -> Extracted:
    """Extract memories from the Echo chunks past the watermark (`session`: that
    session's again, the watermark stays); `dry_run` writes nothing. Ctrl-C:
    `Interrupted`."""
    from hippo.extract import get
    from hippo.extract.run import Extraction
    from hippo.extract.settings import ExtractSettings
    from hippo.ops import jobs

    conf = ExtractSettings.from_settings(h.settings, extractor=extractor, model=model)
    try:
        ex = get(conf.extractor, h, conf)
    except UsageError as exc:
        if extractor is None:  # the name came from the config file
            raise ConfigError(f"[extract] extractor in {h.settings.file}: {exc}") from None
        raise
    stopped: HippoError | None = None
    x: Extraction | None = None
    try:
        with jobs.job(h.db, "extract", dry_run=dry_run) as run:
            x = Extraction(h, ex, conf, run_id=run.id, dry_run=dry_run)
            plan = x.plan(session)
            with progress("extract", total=len(plan)) as bar:
                try:
                    summary = x.run(plan, emit, bar.advance, move_watermark=session is None)
                except HippoError as exc:
                    stopped, summary = exc, x.summary
            if not dry_run:
                summary["run_id"] = run.id
            run.summary = summary
            run.outcome = ("stopped" if stopped else
                           "partial" if summary["sessions_skipped"] else "ok")
    except KeyboardInterrupt:
        raise Interrupted(x.summary if x is not None else {}) from None
    return Extracted(summary, stopped)
