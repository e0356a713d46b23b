"""No import circles in hippo (issue 23): every import statement counts, at module level or
inside a function, except those under `if TYPE_CHECKING:` (annotations only)."""

from __future__ import annotations

import ast
from pathlib import Path

import hippo

ROOT = Path(hippo.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_only(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids.update(id(n) for n in ast.walk(node))
    return ids


def graph() -> dict[str, set[str]]:
    """Each hippo module -> the hippo modules it imports (a name from a package counts as
    its submodule when there is one, else as the package)."""
    mods = _modules()

    def known(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                edges[mod] |= {known(a.name) for a in node.names if a.name.startswith("hippo")}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hippo"):
                base = node.module or ""
                edges[mod] |= {known(f"{base}.{a.name}") for a in node.names}
        edges[mod] -= {mod, ""}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    assert cycles(graph()) == []


def test_the_check_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions() -> None:
    edges = graph()
    assert "hippo.store.sqlite.database" in edges["hippo.store"]  # inside connect()
    assert "hippo.store.sqlite.errors" in edges["hippo.store.sqlite.database"]
