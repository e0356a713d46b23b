"""The faces (the command line, the MCP server, the warm server) import the application
layer, never the store (issue 35): every import statement counts, at module level, inside
a function or under `if TYPE_CHECKING:`. What a face needs of the store (where it lives, a
hook's wait, a team's setup) it asks `hippo.app` for."""

from __future__ import annotations

import ast
from pathlib import Path

import hippo

ROOT = Path(hippo.__file__).parent
FACES = ("cli", "mcp", "serve")
BANNED = "hippo.store"


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every hippo module an import statement names."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def test_no_face_imports_the_store() -> None:
    found = []
    for face in FACES:
        for path in sorted((ROOT / face).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, name in _imports(tree):
                if name == BANNED or name.startswith(BANNED + "."):
                    found.append(f"{path.relative_to(ROOT.parent)}:{line}: {name}")
    assert not found, "a face imports the store; go through hippo.app:\n" + "\n".join(found)


def test_the_check_sees_every_spelling() -> None:
    spellings = ["import hippo.store", "from hippo import store",
                 "from hippo.store.memories import FIELDS",
                 "if TYPE_CHECKING:\n    from hippo.store import Store",
                 "def f():\n    from hippo.store.filters import EchoFilters"]
    for code in spellings:
        names = [n for _, n in _imports(ast.parse(code))]
        assert any(n == BANNED or n.startswith(BANNED + ".") for n in names), code


def test_the_application_package_imports_nothing() -> None:
    """`hippo.app` itself stays import-free: the search fast path passes through it."""
    tree = ast.parse((ROOT / "app" / "__init__.py").read_text(encoding="utf-8"))
    assert not _imports(tree)
