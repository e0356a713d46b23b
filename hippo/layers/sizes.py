"""Each layer's size in tokens, for `hippo stats`: what it would cost to load it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

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

BATCH = 512


def count_many(texts: Iterable[str]) -> int:
    """Total tokens of many texts: pure-Python WordPiece for a little ASCII, else batches.

    Loading the real tokenizer costs ~0.1 s, so `hippo stats` on a small or empty store
    must not pay it; an archive is encoded in batches (one call per text is slow).
    """
    items = [t for t in texts if t]
    if not items:
        return 0
    if sum(map(len, items)) < 20_000 and all(t.isascii() for t in items):
        from hippo.layers.wordpiece import count_ascii

        return sum(count_ascii(t) or 0 for t in items)
    from hippo import tokens

    tok = tokens._tokenizer()  # the same tokenizer `tokens.count` uses
    return sum(len(e.ids) for start in range(0, len(items), BATCH)
               for e in tok.encode_batch(items[start:start + BATCH], add_special_tokens=False))


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
