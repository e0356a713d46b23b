"""`[mcp]` of the config file, and the bounds of a tool call's arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hippo.errors import ConfigError, UsageError

MAX_LIMIT = 50  # results per search/echo call: a model's context is the scarce thing


@dataclass(frozen=True, slots=True)
class McpParams:
    """`[mcp]` in the config file (docs/agents.md, MCP)."""

    max_writes: int = 50  # writes (remember, supersede, forget, done, verify) per session
    allow_verify: bool = False  # let the agent set verified_at (a person's review)
    busy_retry_seconds: float = 10.0  # keep retrying a busy write this long

    @classmethod
    def from_table(cls, table: dict[str, Any], **flags: Any) -> McpParams:
        """Defaults, then [mcp] (its keys checked by `hippo.config`), then flags."""
        p = cls(**{**table, **{k: v for k, v in flags.items() if v is not None}})
        if isinstance(p.max_writes, bool) or not isinstance(p.max_writes, int) \
                or p.max_writes < 0:
            raise ConfigError(f"[mcp] max_writes must be a whole number >= 0, got "
                              f"{p.max_writes!r}")
        if not isinstance(p.allow_verify, bool):
            raise ConfigError(f"[mcp] allow_verify must be true or false, got "
                              f"{p.allow_verify!r}")
        if isinstance(p.busy_retry_seconds, bool) or not isinstance(
                p.busy_retry_seconds, (int, float)) or p.busy_retry_seconds < 0:
            raise ConfigError("[mcp] busy_retry_seconds must be a number >= 0, got "
                              f"{p.busy_retry_seconds!r}")
        return p


def check_limit(value: int, name: str = "limit") -> int:
    """`value` when it is between 1 and MAX_LIMIT, else a UsageError."""
    if not 1 <= value <= MAX_LIMIT:
        raise UsageError(f"{name} must be between 1 and {MAX_LIMIT}, got {value}")
    return value
