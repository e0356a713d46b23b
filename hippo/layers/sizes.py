"""Each layer's size in tokens, for `hippo stats`: what it would cost to load it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hippo.embed.tokens import count_many
from hippo.layers.floor import (
    FLOOR_BUDGET,
    GUIDANCE_BUDGET,
    Route,
    guidance,
    rule_floor,
)
from hippo.layers.pack import Packed, bullet

if TYPE_CHECKING:
    from hippo.store import Store

def _size(packed: Packed) -> dict[str, Any]:
    everything = packed.included + packed.omitted
    full = f"## {packed.heading}\n" + "".join(bullet(r) for r in everything) if everything else ""
    return {"memories": len(everything), "tokens": count_many([full]), "budget": packed.budget,
            "loaded": len(packed.included), "loaded_tokens": packed.tokens,
            "unverified": len(packed.unverified)}


def layer_sizes(db: Store, project: str | None, *, all_projects: bool = False,
                floor_budget: int = FLOOR_BUDGET, guidance_budget: int = GUIDANCE_BUDGET,
                echo: bool = True) -> dict[str, Any]:
    """Tokens per layer for `project` (plus global memories): all of it, and what loads.

    rule_floor/guidance: `tokens` is the whole layer rendered, `loaded_tokens` what
    fits the default budget, `unverified` the machine-written memories it holds back
    until a person verifies or pins them (not in `memories`). curated/echo: total tokens of their texts (loaded on demand).
    """
    route = Route(project, all_projects=all_projects)
    scope = route.scope(with_topics=False)
    curated = db.context.current_texts(scope)
    out = {
        "project": None if all_projects else project,
        "rule_floor": _size(rule_floor(db, route, floor_budget)),
        "guidance": _size(guidance(db, route, guidance_budget)),
        "curated": {"memories": len(curated), "tokens": count_many(curated)},
    }
    if echo:
        texts = db.context.echo_texts(scope)
        out["echo"] = {"chunks": len(texts), "tokens": count_many(texts)}
    return out
