"""What extraction speaks: an Echo chunk and a session as an extractor sees them, the
candidate it proposes, and the one interface of an extractor (`hippo.extract` registers
them by name)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from hippo.errors import HippoError


@dataclass(frozen=True, slots=True)
class EchoChunk:
    """One Echo chunk as extraction sees it: `role: text` blocks plus where it came from."""

    id: int
    seq: int
    source_path: str
    roles: tuple[str, ...]
    line_start: int | None
    line_end: int | None
    message_ids: tuple[str, ...]
    started_at: str | None
    text: str


@dataclass(slots=True)
class SessionChunks:
    """New chunks of one session, in order (a session's tail when it grew since last time)."""

    session_id: int
    key: str
    project: str | None
    format: str
    started_at: str | None
    chunks: list[EchoChunk]
    parent: str | None = None  # the session that started this one (a subagent's)
    # The session's chunks just before these (already extracted): context an extractor may
    # read (the problem said before a fix in the new chunks), never a source of candidates.
    before: list[EchoChunk] = field(default_factory=list)

    @property
    def chunk_ids(self) -> list[int]:
        return [c.id for c in self.chunks]


@dataclass(slots=True)
class Candidate:
    """A statement an extractor proposes to remember, with the chunks that show it."""

    type: str
    text: str
    importance: float
    evidence: list[int]
    tags: list[str] = field(default_factory=list)
    confidence: float = 0.5
    closes: tuple[str, ...] = ()  # task ids it shows done (a tracker close, a commit)
    # A commit's: the files edited since the commit before it, each with the chunk of its
    # latest edit (what it may have fixed, `hippo.extract.supersede`).
    touches: tuple[tuple[str, int], ...] = ()
    # A fix's: the statements of the problem it fixes, as written (`hippo.extract.fixes`).
    replaces: tuple[str, ...] = ()


#: Tag of a task a compaction summary lists as pending. When a session's newest summary no
#: longer lists one, the run marks it done (`hippo.extract.run`).
PENDING_TAG = "pending"


class SkipSession(HippoError):
    """This session cannot be extracted (e.g. the model's answer stayed invalid): skip it."""


class Extractor(ABC):
    """Finds memory candidates in one session's chunks. Subclasses set `name`."""

    name: str = ""
    #: Whether a call leaves the machine (it is guarded and may cost money).
    remote: bool = False

    @abstractmethod
    def extract(self, session: SessionChunks) -> list[Candidate]:
        """Candidates found in `session`; raise SkipSession to skip it, BusyError to stop."""
