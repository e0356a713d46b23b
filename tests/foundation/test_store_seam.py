"""The store seam (issue 23): outside `hippo/store/`, no module holds SQL, opens a
connection, imports apsw or sqlite-vec, or reaches into the SQLite backend."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import hippo

ROOT = Path(hippo.__file__).parent
STORE = ROOT / "store"

# A string used as SQL: a statement, or the parts of one a caller would splice in.
SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA|WITH|ALTER|DROP|BEGIN|COMMIT|ROLLBACK|"
    r"SAVEPOINT|RELEASE|VACUUM|ANALYZE|REPLACE)\b"
    r"|\bSELECT\b.*\bFROM\b|\bINSERT\s+(OR\s+[A-Z]+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b|\bCREATE\s+(TABLE|INDEX|VIRTUAL|TRIGGER|VIEW)\b|\bPRAGMA\s+\w+"
    r"|\b\w+\s*(=|<|>|<=|>=|<>|!=|\bIS\b|\bIN\b)\s*\?|\bjson_each\(|\bbm25\(|\bMATCH\s+\?"
    r"|\bsqlite_master\b|\bWHERE\b.*\b(AND|OR|IN|IS|LIKE|GLOB)\b",
    re.DOTALL,
)
BACKEND_MODULES = ("apsw", "sqlite_vec", "sqlite3", "psycopg", "pgvector", "hippo.store.sqlite",
                   "hippo.store.postgres")
CONNECTION_CALLS = {"execute", "executemany", "rows", "row", "scalar", "conn", "last_id",
                    "changes", "has_table"}

# Modules not yet moved behind the store: each step of issue 23 empties this list.
NOT_YET: set[str] = set()


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _strings(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def findings(path: Path) -> list[str]:
    """What in `path` belongs behind the store: SQL strings, backend imports, connections."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found = []
    inside_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
                      for v in n.values}
    for node in ast.walk(tree):
        if id(node) in docs or id(node) in inside_fstring:
            continue
        text = _strings(node)
        if text is not None and SQL.search(text):
            found.append(f"{node.lineno}: SQL {text.strip()[:60]!r}")
        elif text is not None and text.startswith(BACKEND_MODULES):  # importlib, by name
            found.append(f"{node.lineno}: import {text}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name.startswith(BACKEND_MODULES)]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(BACKEND_MODULES):
            found.append(f"{node.lineno}: from {node.module} import")
        elif isinstance(node, ast.Attribute) and node.attr in CONNECTION_CALLS:
            found.append(f"{node.lineno}: .{node.attr}")
    return found


def offenders() -> dict[str, list[str]]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        if STORE in path.parents:
            continue
        hits = findings(path)
        if hits:
            out[str(path.relative_to(ROOT))] = hits
    return out


def test_nothing_outside_the_store_speaks_sql() -> None:
    found = offenders()
    new = {p: hits for p, hits in found.items() if p not in NOT_YET}
    assert not new, "outside hippo/store/: " + "; ".join(
        f"{p} ({', '.join(h[:3])})" for p, h in new.items())
    clean = sorted(NOT_YET - set(found))
    assert not clean, f"moved behind the store, remove from NOT_YET: {clean}"


def test_the_check_sees_what_it_looks_for(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""SELECT x FROM y in a docstring is prose."""\n'
                   "import apsw\n"
                   "from hippo.store.sqlite.database import Database\n"
                   'Q = "SELECT id FROM memories WHERE project = ?"\n'
                   'W = f"UPDATE {t} SET a = 1"\n'
                   'F = "status = ? AND project IS NULL"\n'
                   'M = importlib.import_module(f"hippo.store.sqlite.{name}")\n'
                   "def f(db):\n"
                   "    return db.conn.changes()\n", encoding="utf-8")
    kinds = [h.split(": ", 1)[1].split(" ")[0] for h in findings(bad)]
    assert sorted(kinds) == sorted(["import", "from", "SQL", "SQL", "SQL", "import", ".conn",
                                    ".changes"])
    good = tmp_path / "good.py"
    good.write_text('"""Select the rows where the project is set and update them."""\n'
                    'MSG = "select a project, then run `hippo update`"\n'
                    "def f(store):\n"
                    "    return store.memories.get(1)\n", encoding="utf-8")
    assert findings(good) == []
