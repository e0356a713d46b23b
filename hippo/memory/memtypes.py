"""Memory types: freshness decay constant τ (days), default tier, and merge freezing.

The SPEC table, plus types a user declares in the config file:
    [types.incident]
    tau_days = 30
    tier = "episodic"
    frozen = false
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hippo.errors import ConfigError, UsageError

TIERS = ("procedural", "semantic", "episodic")


@dataclass(frozen=True, slots=True)
class MemType:
    name: str
    tau_days: float
    tier: str
    frozen: bool = False  # never merged by automatic consolidation


BUILTIN: dict[str, MemType] = {
    t.name: t
    for t in (
        MemType("rule", 3650, "procedural", True),
        MemType("architecture", 3650, "semantic", True),
        MemType("decision", 3650, "semantic", True),
        MemType("tool", 730, "procedural"),
        MemType("config", 730, "procedural"),
        MemType("people", 730, "semantic"),
        MemType("fact", 365, "semantic"),
        MemType("insight", 180, "semantic"),
        MemType("task", 90, "episodic"),
        MemType("todo", 90, "episodic"),
        MemType("observability", 7, "episodic"),
        MemType("procedure", 730, "procedural"),
        MemType("preference", 730, "semantic"),
    )
}


def registry(declared: dict[str, Any] | None = None) -> dict[str, MemType]:
    """Built-in types plus those declared in the config file's [types.NAME] tables."""
    types = dict(BUILTIN)
    for name, spec in (declared or {}).items():
        if not isinstance(spec, dict):
            raise ConfigError(f"[types.{name}] must be a table with tau_days and tier")
        try:
            tau = float(spec.get("tau_days", types.get(name, BUILTIN["fact"]).tau_days))
        except (TypeError, ValueError):
            raise ConfigError(f"[types.{name}] tau_days must be a number") from None
        tier = str(spec.get("tier", types[name].tier if name in types else "semantic"))
        if tier not in TIERS or tau <= 0:
            raise ConfigError(f"[types.{name}] needs tau_days > 0 and tier in {', '.join(TIERS)}")
        types[name] = MemType(name, tau, tier, bool(spec.get("frozen", False)))
    return types


def resolve(name: str, types: dict[str, MemType]) -> MemType:
    try:
        return types[name]
    except KeyError:
        raise UsageError(
            f"unknown type {name!r}; known types: {', '.join(sorted(types))}"
        ) from None
