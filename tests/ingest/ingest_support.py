"""Helpers shared by the ingest tests: where the real transcripts live (skip when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.ingest.model import ReadResult
from hippo.ingest.readers import detect, read_head

TRANSCRIPTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "transcripts"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def real(relative: str) -> Path:
    """A real transcript under data/transcripts/, or skip the test when the data is absent."""
    path = TRANSCRIPTS / relative
    if not path.is_file():
        pytest.skip(f"real transcript not available: {relative}")
    return path


def read(path: Path, start_offset: int = 0, start_line: int = 0) -> ReadResult:
    """Detect the format and read, as the ingest pipeline does."""
    return detect(path, read_head(path)).read(path, start_offset, start_line)


def counts(result: ReadResult) -> dict[str, int]:
    """Messages per kind/role, e.g. {"user": 3, "assistant": 4, "tool_call": 6, ...}."""
    out: dict[str, int] = {}
    for m in result.messages:
        key = m.role if m.kind == "message" else m.kind
        out[key] = out.get(key, 0) + 1
    return out
