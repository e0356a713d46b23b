"""`hippo cron --print` and the ready entries in cron/ (generated from the same function)."""

from __future__ import annotations

from pathlib import Path

from hippo.maintain.cron import crontab, hippo_command

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
    assert hourly.startswith("17 * * * * HIPPO_HOME=/h '/opt/my tools/hippo' --db /data/h\\%1.db"
                             " ingest >> /data/log 2>&1; HIPPO_HOME=/h")
    assert hourly.endswith(" extract >> /data/log 2>&1")
    assert backstop.startswith("43 4 * * * ") and " ingest --backstop >> " in backstop
    assert nightly.startswith("7 3 * * * ") and " consolidate >> " in nightly
    assert retire.startswith("37 3 * * * ") and " retire >> " in retire


def test_cron_print_fills_in_this_machine(cli, db_path, tmp_path) -> None:
    r = cli("cron", "--print")
    assert r.exit_code == 0 and r.stderr == ""
    assert f"--db {db_path} consolidate >> {db_path.parent / 'hippo-cron.log'} 2>&1" in r.stdout
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
