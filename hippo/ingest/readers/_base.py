"""The reader interface: cheap detection, and an incremental read from where the last stopped.

Every format implements `sniff` and `read_from`; `read` is the one public entry, with the
resume point's defaults (a whole file) and the longest line a reader takes, said once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from hippo.ingest.model import ReadResult

#: A physical line longer than this is skipped ("line too long") rather than held in memory.
MAX_LINE_BYTES = 8_000_000


class Reader(ABC):
    """A transcript format. Readers are pure: they read a file and return messages."""

    name: str

    @abstractmethod
    def sniff(self, path: Path, head: bytes) -> bool:
        """Whether the file is of this format, from its location, name and first bytes."""

    def read(self, path: Path, start_offset: int = 0, start_line: int = 0, *,
             max_line_bytes: int = MAX_LINE_BYTES) -> ReadResult:
        """Messages from byte `start_offset` (line `start_line`) on, and where the next read
        resumes: a read from where the last stopped returns only what is new."""
        return self.read_from(path, start_offset, start_line, max_line_bytes)

    @abstractmethod
    def read_from(self, path: Path, start_offset: int, start_line: int,
                  max_line_bytes: int) -> ReadResult:
        """`read` with every argument given."""
