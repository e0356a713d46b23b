"""The `[extract]` table of the config file, validated once (a bad value is exit 78).

    [extract]
    extractor = "rules"       # or "llm"
    model = "gpt-4o-mini"     # llm: chat model at OPENAI_BASE_URL
    timeout = 60.0            # llm: seconds per request
    max_retries = 2           # llm: the openai client's own retries (429, 5xx, timeouts)
    window_chars = 24000      # llm: transcript characters per request
    similarity = 0.93         # write-time dedup: cosine at or above reinforces
    agent_command = "claude -p --output-format json"   # agent: the agent CLI, headless
    agent_timeout = 300.0     # agent: seconds one run of that command may take
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from hippo.errors import ConfigError

if TYPE_CHECKING:
    from hippo.config import Settings


@dataclass(frozen=True, slots=True)
class ExtractSettings:
    extractor: str = "rules"
    model: str = "gpt-4o-mini"
    timeout: float = 60.0
    max_retries: int = 2
    window_chars: int = 24_000
    similarity: float = 0.93
    temperature: float = 0.0
    agent_command: str = ""  # empty: `--extractor agent` is refused (exit 78)
    agent_timeout: float = 300.0

    @classmethod
    def from_settings(cls, settings: Settings | None, **overrides: Any) -> ExtractSettings:
        table = settings.table("extract") if settings is not None else {}
        known = {f.name: f for f in fields(cls)}
        changes: dict[str, Any] = {}
        for key, value in table.items():
            if key not in known:
                raise ConfigError(f"unknown setting {key!r} in [extract]; "
                                  f"known: {', '.join(sorted(known))}")
            changes[key] = _check(key, value, type(getattr(cls(), key)))
        changes.update({k: v for k, v in overrides.items() if v is not None})
        return replace(cls(), **changes)


def _check(key: str, value: Any, kind: type) -> Any:
    if key == "agent_command":
        ok = isinstance(value, str) or (isinstance(value, list) and value
                                        and all(isinstance(v, str) for v in value))
        if not ok:
            raise ConfigError(f"[extract] agent_command must be a command line (a string or "
                              f"a list of strings), got {value!r}")
        return value if isinstance(value, str) else _join(value)
    if kind is str:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"[extract] {key} must be a non-empty string, got {value!r}")
        return value.strip()
    ok = (not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
          and value >= 0)
    if kind is int:
        ok = ok and value == int(value)
    if key == "similarity":
        ok = ok and 0 < value <= 1
    if key in ("timeout", "window_chars", "agent_timeout"):
        ok = ok and value > 0
    if not ok:
        raise ConfigError(f"[extract] {key} must be a {'whole ' if kind is int else ''}"
                          f"number{' in (0, 1]' if key == 'similarity' else ' >= 0'}, "
                          f"got {value!r}")
    return kind(value)


def _join(argv: list[str]) -> str:
    import shlex

    return shlex.join(argv)
