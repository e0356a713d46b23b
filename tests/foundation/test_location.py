"""A store is a SQLite path or a PostgreSQL URL, and no output shows the URL's password."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hippo import config
from hippo.config import display, is_server

URLS = [
    ("postgresql://bob:s3cret@db.example:5432/team?sslmode=require",
     "postgresql://bob@db.example:5432/team?sslmode=require"),
    ("postgres://bob@h/db", "postgres://bob@h/db"),
    ("postgresql:///team?host=/run/pg&password=s3cret", "postgresql:///team?host=/run/pg&password=***"),
    ("POSTGRESQL://a:s3cret@h/d", "postgresql://a@h/d"),
]


@pytest.mark.parametrize(("url", "shown"), URLS)
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert is_server(url)
    assert display(url) == shown
    assert "s3cret" not in display(url)


@pytest.mark.parametrize("path", ["hippo.db", "/tmp/x.db", "postgresql.db", "./postgresql:/x"])
def test_anything_else_is_a_file(path: str) -> None:
    assert not is_server(path)
    assert display(path) == path


def test_settings_keep_a_url_whole_and_a_path_as_a_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPO_DB", "postgresql://bob:s3cret@db.example/team")
    assert config.load().database == "postgresql://bob:s3cret@db.example/team"
    monkeypatch.setenv("HIPPO_DB", "~/x.db")
    assert config.load().database == Path("~/x.db").expanduser()


def test_config_and_cron_never_print_the_password(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql://bob:s3cret@127.0.0.1:1/team"
    shown = cli("config", "--json", db=None, env={"HIPPO_DB": url})
    assert shown.exit_code == 0, shown.stderr
    values = {r["name"]: r["value"] for r in shown.records}
    assert values["db"] == values["path.db"] == "postgresql://bob@127.0.0.1:1/team"
    cron = cli("cron", "--print", db=None, env={"HIPPO_DB": url})
    assert cron.exit_code == 0, cron.stderr
    assert "--db postgresql://bob@127.0.0.1:1/team" in cron.stdout
    assert "s3cret" not in shown.stdout + shown.stderr + cron.stdout + cron.stderr
    assert orjson.loads(shown.stdout.splitlines()[0])
