"""One registry behaviour for embedders and extractors: a plugin registered before the
built-ins load neither drops them nor is replaced by one of the same name."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hippo.errors import UsageError
from hippo.plugins import Registry


def test_builtins_load_on_first_use_and_a_plugin_registered_first_keeps_its_name() -> None:
    loads: list[int] = []

    def builtins() -> list[tuple[str, str]]:
        loads.append(1)
        return [("a", "built-in a"), ("b", "built-in b")]

    reg: Registry[str] = Registry("thing", builtins)
    reg.register("b", "plugin b")
    reg.register("c", "plugin c")
    assert not loads
    assert reg.names() == ["a", "b", "c"]
    assert (reg.get("a"), reg.get("b"), reg.get("c")) == ("built-in a", "plugin b", "plugin c")
    reg.register("a", "plugin a")  # after loading, registering replaces
    assert reg.get("a") == "plugin a" and loads == [1]
    with pytest.raises(UsageError, match=r"^unknown thing 'z'; known: a, b, c$"):
        reg.get("z")


@pytest.mark.parametrize(("module", "factory", "builtins"), [
    ("hippo.extract", "lambda h, conf: None", ["agent", "llm", "rules"]),
    ("hippo.embed", "lambda settings: None", ["hash", "local", "openai"]),
])
def test_registering_first_keeps_the_builtins(module, factory, builtins) -> None:
    code = (f"import {module} as m; m.register('mine', {factory}); "
            f"m.register('{builtins[0]}', {factory}); print(m.names()); "
            # hippo.embed builds its registry on first use (`_registry()`)
            f"reg = m._registry() if hasattr(m, '_registry') else m._REGISTRY; "
            f"print(reg.get('{builtins[0]}').__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == [str(sorted([*builtins, "mine"])), "<lambda>"]


def test_the_builtin_names_are_the_builtins_alone_and_no_group_reads_no_entry_points() -> None:
    reg: Registry[str] = Registry("thing", lambda: [("b", "built-in b"), ("a", "built-in a")])
    reg.register("c", "registered c")
    reg.register("a", "registered a")
    assert reg.builtin_names() == ["a", "b"]
    assert reg.names() == ["a", "b", "c"]  # no entry-point group: nothing installed counts
    assert reg.get("a") == "registered a"
