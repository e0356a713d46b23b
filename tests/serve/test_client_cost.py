"""A served call costs the client only its own small imports: never Typer, numpy or
onnxruntime (importing them is what the server is there to spare)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.serve.helpers import calls, env_on, seed, serving

HEAVY = ("typer", "click", "numpy", "onnxruntime", "tokenizers", "rich", "apsw", "hippo.config",
         "hippo.core")
PROBE = """
import sys
from hippo.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = [m for m in {heavy!r} if m in sys.modules]
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


def test_a_served_call_imports_nothing_heavy(db_path: Path | str, tmp_path: Path) -> None:
    seed(db_path, ("the deploy script needs the staging token from vault",))
    payload = b'{"hook_event_name": "UserPromptSubmit", "prompt": "deploy token?"}'
    with serving(db_path):
        for args, stdin in ((("search", "deploy token", "--json"), b""),
                            (("hook", "claude-code", "prompt"), payload),
                            (("echo", "deploy"), b""), (("context",), b"")):
            before = calls(db_path)
            out = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY),
                                  "--db", str(db_path), *args], input=stdin,
                                 capture_output=True, env=env_on(), timeout=60, check=False)
            assert calls(db_path) == before + 1, out.stderr
            assert out.stderr.decode().splitlines()[-1] == "HEAVY=", (args, out.stderr)
