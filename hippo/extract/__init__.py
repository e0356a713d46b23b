"""Extraction: turn new Echo chunks into durable Brain memories (`hippo extract`).

An extractor is a class with ONE method, `extract(session) -> list[Candidate]`, found by
name: the built-ins (`rules`: offline patterns, `llm`: any OpenAI-compatible chat
endpoint, `agent`: the user's agent CLI run headless), then the `hippo.extractors` entry
points of other installed packages (docs/plugins.md). `hippo.extract.run` feeds them
sessions past the watermark and `hippo.extract.write` stores what they find, de-duplicated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hippo.extract.base import (
    PENDING_TAG,
    Candidate,
    EchoChunk,
    Extractor,
    SessionChunks,
    SkipSession,
)
from hippo.plugins import Registry

if TYPE_CHECKING:
    from hippo.core import Hippo
    from hippo.extract.settings import ExtractSettings


Factory = Callable[["Hippo", "ExtractSettings"], Extractor]


def _builtins() -> tuple[tuple[str, Factory], ...]:
    def rules(h: Hippo, conf: ExtractSettings) -> Extractor:
        from hippo.extract.rules import RulesExtractor

        return RulesExtractor()

    def llm(h: Hippo, conf: ExtractSettings) -> Extractor:
        from hippo.extract.llm import LlmExtractor

        return LlmExtractor.from_settings(h, conf)

    def agent(h: Hippo, conf: ExtractSettings) -> Extractor:
        from hippo.extract.agent import AgentExtractor

        return AgentExtractor.from_settings(h, conf)

    return ("rules", rules), ("llm", llm), ("agent", agent)


_REGISTRY: Registry[Factory] = Registry("extractor", _builtins, "hippo.extractors")
register = _REGISTRY.register
names = _REGISTRY.names
builtin_names = _REGISTRY.builtin_names


def get(name: str, h: Hippo, conf: ExtractSettings) -> Extractor:
    """Build the extractor called `name`; an unknown name lists the known ones."""
    return _REGISTRY.get(name)(h, conf)


__all__ = ["PENDING_TAG", "Candidate", "EchoChunk", "Extractor", "SessionChunks", "SkipSession",
           "builtin_names", "get", "names", "register"]
