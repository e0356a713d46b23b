"""What each layer of hippo may import (docs/DEVELOPING.md, "The layers"): the faces the
application layer, the application layer the domain, the domain the store, the store the
base modules. Every import counts, inside functions too (but not under TYPE_CHECKING)."""

from __future__ import annotations

from tests.foundation.test_imports import graph

BASE = {"hippo.errors", "hippo.timeutil", "hippo.redact", "hippo.config", "hippo.project",
        "hippo.plugins", "hippo.console"}
STORE = {"hippo.store"}
DOMAIN = {"hippo.core", "hippo.memory", "hippo.embed", "hippo.paid", "hippo.retrieve",
          "hippo.layers", "hippo.ingest", "hippo.extract", "hippo.maintain", "hippo.ops",
          "hippo.setup", "hippo.warm"}
APP = {"hippo.app"}
FACES = {"hippo.cli", "hippo.mcp", "hippo.serve", "hippo.docgen", "hippo", "hippo.__main__"}
LAYERS = [BASE, STORE, DOMAIN, APP, FACES]


def unit(module: str) -> str:
    """A module's part: `hippo.store.sqlite.database` -> `hippo.store`."""
    parts = module.split(".")
    return ".".join(parts[:2])


def layer(module: str) -> int:
    for i, members in enumerate(LAYERS):
        if unit(module) in members:
            return i
    raise AssertionError(f"{module} is in no layer: add its package to one")


def test_every_module_is_in_a_layer() -> None:
    for module in graph():
        layer(module)


def test_no_layer_imports_one_above_it() -> None:
    upward = sorted(f"{m} -> {t}" for m, targets in graph().items() for t in targets
                    if layer(t) > layer(m))
    assert upward == []


def test_the_faces_reach_the_store_only_through_the_application_layer() -> None:
    direct = sorted(f"{m} -> {t}" for m, targets in graph().items() for t in targets
                    if unit(m) in FACES and unit(t) in STORE)
    assert direct == []


def test_warm_imports_no_pipeline() -> None:
    found = sorted(f"{m} -> {t}" for m, targets in graph().items() for t in targets
                   if unit(m) == "hippo.warm" and unit(t) == "hippo.retrieve")
    assert found == []


def test_at_most_ten_modules_at_the_package_root() -> None:
    from pathlib import Path

    import hippo

    root = sorted(p.name for p in Path(hippo.__file__).parent.glob("*.py"))
    assert len(root) <= 10, root
