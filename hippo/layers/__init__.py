"""The layers an agent loads at different times: the rule floor, domain guidance, prompt recall.

`floor.py` selects, `pack.py` fits a selection into a token budget and renders it,
`recall.py` answers an agent's prompt hook, `sizes.py` measures each layer for stats.
Nothing here embeds or imports numpy: these run at every session start.
"""

from __future__ import annotations

from hippo.layers.floor import (
    FLOOR_BUDGET,
    GUIDANCE_BUDGET,
    Route,
    guidance,
    guidance_candidates,
    remember_hint,
    rule_candidates,
    rule_floor,
)
from hippo.layers.pack import Packed, pack, render
from hippo.layers.sizes import layer_sizes

__all__ = ["FLOOR_BUDGET", "GUIDANCE_BUDGET", "Packed", "Route", "guidance",
           "guidance_candidates", "layer_sizes", "pack", "remember_hint", "render",
           "rule_candidates", "rule_floor"]
