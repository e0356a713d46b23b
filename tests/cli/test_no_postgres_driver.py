"""`--db postgresql://...` on an install without the postgres extra: one line naming the
extra to install, exit 78 (issue 31, item 13), for a read and a write alike."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# psycopg made unimportable, as on an install without `hippo[postgres]`.
RUN = ("import sys; sys.modules['psycopg'] = None; from hippo.cli.main import main; "
       "sys.argv[0] = 'hippo'; main()")
URL = "postgresql://alice:Never-shown-pw@127.0.0.1:1/hippo"


@pytest.mark.parametrize("command", [("search", "deploy"), ("add", "a fact"), ("stats",),
                                     ("echo", "deploy")])
def test_a_server_url_without_the_driver_names_the_extra(command: tuple[str, ...]) -> None:
    r = subprocess.run([sys.executable, "-c", RUN, "--db", URL, *command], capture_output=True,
                       text=True, env={**os.environ, "HIPPO_SERVE": "off"}, timeout=60,
                       check=False)
    assert (r.returncode, r.stdout) == (78, "")
    assert r.stderr == ("hippo: a postgresql:// database needs the PostgreSQL driver, which "
                        "is not installed: pip install 'hippo[postgres]'\n")
