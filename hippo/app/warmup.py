"""Loading ahead of the first call what a warm process's calls will use: run by `hippo
serve` (`hippo.serve.daemon`) and `hippo mcp` (`hippo.mcp.tools`) once they start, so
`hippo.warm` itself keeps state and imports no search pipeline."""

from __future__ import annotations

from typing import Any


def preload(h: Any) -> None:
    """Load what the first call would: the store's embedders, the search modules, the
    local model's session (with full graph optimisation, the right choice for a
    long-lived process: one pass makes onnxruntime allocate its buffers now), and the
    Brain's vectors when the process keeps them (`h.env.warm`)."""
    emb = h.embedder("brain")
    h.embedder("echo")  # shares the loaded model when it is the same one
    import hippo.retrieve.echo_search
    import hippo.retrieve.pipeline  # noqa: F401 - imported now, not by the first search

    if getattr(emb, "_session", None) is not None:
        emb.embed_batch(["warm up"])
    warm = h.env.warm
    index = warm.index(h.settings.database) if warm is not None else None
    if index is not None:
        index.sync(h.db)


__all__ = ["preload"]
