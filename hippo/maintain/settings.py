"""The tunable numbers of the maintenance jobs, named in one place; `[maintain]` overrides them.

    [maintain]
    threshold = 0.93          # cosine at or above which two memories may merge
    literal_guard = true      # veto merges whose numbers/identifiers or negation differ
    merger = "rules"          # or "llm": a chat model writes the merged statement
    [maintain.retire_days]
    task = 90
    observability = 7
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from hippo.errors import ConfigError

DEFAULT_RETIRE_DAYS: Mapping[str, float] = MappingProxyType(
    {"task": 90.0, "todo": 90.0, "observability": 7.0}
)


MERGERS = ("rules", "llm")


@dataclass(frozen=True, slots=True)
class MaintainParams:
    """Defaults are the SPEC's values; see docs/maintenance.md for what each one does."""

    threshold: float = 0.93
    literal_guard: bool = True
    merger: str = "rules"  # "llm": hippo/maintain/llm_merge.py
    # vec0 KNN per changed memory starts at k and grows while every neighbour is a hit.
    knn_k: int = 16
    # Up to this many changed memories: one vec0 KNN query each; more: one scan of the
    # vectors with a matrix product (cheaper once the queries would rescan the table).
    knn_limit: int = 32
    batch: int = 100  # clusters (or retirements) per transaction
    retire_days: Mapping[str, float] = field(default_factory=lambda: DEFAULT_RETIRE_DAYS)

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise ConfigError(f"[maintain] threshold must be in (0, 1], got {self.threshold}")
        for name in ("knn_k", "knn_limit", "batch"):
            if getattr(self, name) < 1:
                raise ConfigError(f"[maintain] {name} must be at least 1")
        for name, days in self.retire_days.items():
            if days <= 0:
                raise ConfigError(f"[maintain.retire_days] {name} must be > 0 days")

    @classmethod
    def from_table(cls, table: Mapping[str, Any], **flags: Any) -> MaintainParams:
        """Defaults, then the config file's [maintain] table, then command-line flags."""
        known = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, value in {**table, **{k: v for k, v in flags.items() if v is not None}}.items():
            if key not in known:
                raise ConfigError(f"unknown setting {key!r} in [maintain]; known: "
                                  f"{', '.join(sorted(known))}")
            values[key] = _coerce(key, value)
        if "retire_days" in values:
            values["retire_days"] = MappingProxyType({**DEFAULT_RETIRE_DAYS,
                                                      **values["retire_days"]})
        return cls(**values)


def _coerce(key: str, value: Any) -> Any:
    if key == "retire_days":
        if not isinstance(value, Mapping) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()):
            raise ConfigError("[maintain.retire_days] maps a type to a number of days")
        return {str(k): float(v) for k, v in value.items()}
    if key == "merger":
        if value not in MERGERS:
            raise ConfigError(f"[maintain] merger must be one of {', '.join(MERGERS)}, "
                              f"got {value!r}")
        return value
    if key == "literal_guard":
        if not isinstance(value, bool):
            raise ConfigError("[maintain] literal_guard must be true or false")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"[maintain] {key} must be a number, got {value!r}")
    if key == "threshold":
        return float(value)
    if float(value) != int(value):
        raise ConfigError(f"[maintain] {key} must be a whole number")
    return int(value)
