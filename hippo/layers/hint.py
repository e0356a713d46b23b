"""What hippo tells an agent about writing its own memories, said once, and `[agents]`.

`REMEMBER_HINT` is the one text: the session-start context (`hippo hook AGENT
session-start`, `hippo context --agent NAME`) prints it under `HEADING`, the MCP `remember`
tool's description ends with it, and a plugin's skill quotes it (`python -c "from
hippo.layers.hint import REMEMBER_HINT; print(REMEMBER_HINT)"`). It stays under
`MAX_TOKENS` by hippo's own counter (`hippo.embed.tokens`; a test checks it).

`[agents]` in the config file (docs/agents.md, "The agent writes what it learned"):

    [agents]
    remember_hint = true   # false: no hint at session start nor in the tool's description
    notes = true           # read agents' own notes and the person's instruction files

Only the standard library at import: the session-start hook imports this.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.config import Settings

REMEMBER_HINT = (
    "When you learn something a later session needs, store it with hippo's `remember` "
    "tool: a decision and its reason, a non-obvious error and its fix, a convention or "
    "preference the person stated, where something lives, what was left to do. One "
    "self-contained statement per call; `supersede` a memory that is no longer true.")
HEADING = "## Remembering"
MAX_TOKENS = 80  # the hint with its heading, counted by `hippo.embed.tokens.count`

#: The agents whose own files hippo reads, and the tag that marks what each loads itself.
AGENTS = ("claude-code", "codex", "gemini")
LOADED_BY = "loaded-by:"


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """`[agents]` of the config file."""

    remember_hint: bool = True
    notes: bool = True

    @classmethod
    def from_settings(cls, settings: Settings | None) -> AgentSettings:
        """Defaults, then `[agents]` (its keys checked by `hippo.config`); a value that is
        not true or false is exit 78 naming the setting."""
        from hippo.errors import ConfigError

        table: dict[str, Any] = settings.table("agents") if settings is not None else {}
        known = {f.name for f in fields(cls)}
        for key, value in table.items():
            if key in known and not isinstance(value, bool):
                raise ConfigError(f"[agents] {key} must be true or false, got {value!r}")
        return cls(**{k: v for k, v in table.items() if k in known})


def section() -> str:
    """The hint as the Markdown block the session-start context ends with."""
    return f"{HEADING}\n{REMEMBER_HINT}\n"


def loaded_by(agent: str) -> str:
    """The tag of memories read from files `agent` loads by itself (its instruction files,
    its own notes): the context layers leave them out for that agent."""
    return LOADED_BY + agent
