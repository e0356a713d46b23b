"""Moved to `hippo.tokens` (the one token counter). Kept only while `hippo.layers.sizes`
and `hippo.cli.context` still import these names from here; delete it with those imports."""

from __future__ import annotations

from hippo.tokens import count, count_ascii

__all__ = ["count", "count_ascii"]
