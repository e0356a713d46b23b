"""Only `hippo mcp` pays for the MCP SDK: every other command starts without importing mcp,
pydantic, starlette or anyio (a cold `hippo search` is what agents run on every task)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

HEAVY = ("mcp", "mcp_types", "pydantic", "starlette", "anyio", "uvicorn")
PROBE = """
import sys
import orjson
from hippo.cli.main import main
sys.argv = ["hippo", *sys.argv[2:]]
try:
    main()
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
open(OUT, "wb").write(orjson.dumps(heavy))
"""


@pytest.mark.parametrize("argv", [
    ["search", "--json", "deploy staging"],
    ["--embedder", "hash", "search", "deploy staging"],
    ["add", "--embedder", "hash", "We deploy on Tuesdays", "--type", "decision"],
    ["context"],
    ["list", "--json"],
    ["stats", "--json", "--no-layers"],
    ["--help"],
    ["mcp", "--help"],
])
def test_commands_other_than_mcp_import_no_mcp_sdk(argv: list[str], tmp_path: Path,
                                                   db_path: Path) -> None:
    out = tmp_path / "modules.json"
    code = f"HEAVY = {HEAVY!r}\nOUT = {str(out)!r}\n" + PROBE
    subprocess.run([sys.executable, "-c", code, "-", "--db", str(db_path), *argv],
                   check=True, capture_output=True, timeout=60)
    assert orjson.loads(out.read_bytes()) == []
