"""`hippo cron --print` and the ready entries in cron/ (generated from the same function)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hippo.config import display, is_server
from hippo.maintain.cron import _cron_quote, crontab, hippo_command

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = {"hippo": ["/path/to/hippo"], "db": "/path/to/hippo.db",
            "log": "/path/to/hippo-cron.log"}


def test_cron_file_in_repo_is_current() -> None:
    assert (REPO / "cron" / "hippo.crontab").read_text() == crontab(**TEMPLATE), (
        "regenerate: python -c 'from hippo.maintain.cron import template; template()'")


def test_crontab_lines() -> None:
    text = crontab(["/opt/my tools/hippo"], "/data/h%1.db", "/data/log", {"HIPPO_HOME": "/h"})
    jobs = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert len(jobs) == 4
    hourly, backstop, nightly, retire = jobs
    assert hourly.startswith("17 * * * * HIPPO_HOME=/h nice -n 10 '/opt/my tools/hippo' --db "
                             "/data/h\\%1.db ingest >> /data/log 2>&1; HIPPO_HOME=/h nice -n 10 ")
    assert hourly.endswith(" extract >> /data/log 2>&1")
    assert backstop.startswith("43 4 * * * ") and " ingest --backstop >> " in backstop
    assert nightly.startswith("7 3 * * * ") and " consolidate >> " in nightly
    assert retire.startswith("37 3 * * * ") and " retire >> " in retire


def test_cron_print_fills_in_this_machine(cli, db_path, tmp_path) -> None:
    r = cli("cron", "--print")
    assert r.exit_code == 0 and r.stderr == ""
    if is_server(db_path):  # the URL as cron would see it, the log in HIPPO_HOME
        db, logged = _cron_quote(display(db_path)), tmp_path / "home" / "hippo-cron.log"
    else:
        db, logged = _cron_quote(str(db_path)), db_path.parent / "hippo-cron.log"
    assert f"--db {db} consolidate >> {logged} 2>&1" in r.stdout
    assert f"HIPPO_HOME={tmp_path / 'home'} " in r.stdout
    assert " ".join(hippo_command()) in r.stdout
    r = cli("cron", "--log", str(tmp_path / "x.log"))
    assert f">> {tmp_path / 'x.log'} 2>&1" in r.stdout


def test_hippo_command_prefers_the_running_script(tmp_path) -> None:
    script = tmp_path / "hippo"
    script.write_text("#!/bin/sh\n")
    assert hippo_command(str(script)) == [str(script)]
    fallback = hippo_command("/nonexistent/__main__.py")
    assert fallback[-1] == "hippo" or fallback[0].endswith("hippo")


@pytest.mark.skipif(shutil.which("nice") is None or shutil.which("sh") is None,
                    reason="needs sh and nice")
def test_a_generated_line_runs_niced_with_its_environment(tmp_path) -> None:
    """The job command of a crontab line, run by sh as cron would: the stand-in hippo sees
    the passed HIPPO_HOME, its arguments, and a niceness 10 above the caller's."""
    fake = tmp_path / "my tools" / "hippo"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho \"$HIPPO_HOME|$(nice)|$*\"\n")
    fake.chmod(0o755)
    log = tmp_path / "cron.log"
    text = crontab([str(fake)], str(tmp_path / "h.db"), str(log), {"HIPPO_HOME": "/h me"})
    line = next(x for x in text.splitlines() if x.startswith("7 3 * * * "))
    subprocess.run(["sh", "-c", line.removeprefix("7 3 * * * ")], check=True,
                   env={"PATH": os.environ["PATH"]})
    home, niceness, args = log.read_text().strip().split("|")
    assert home == "/h me"
    assert int(niceness) == min(19, os.nice(0) + 10)
    assert args == f"--db {tmp_path / 'h.db'} consolidate"
