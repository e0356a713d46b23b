"""`hippo --db postgresql://...` end to end as a new user runs it: real processes, the
default embedder, a URL with a password (which no output shows), then who changed what in
the audit log (`by_user`: HIPPO_USER, else the database role). Postgres pass only."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import psycopg
import pytest

from hippo.config import display

pytestmark = pytest.mark.postgres_only(reason="needs a PostgreSQL server (the postgres pass)")

PASSWORD = "Team-pw-kept-out-of-output"  # pgserver's login is trust: any password works
DEPLOY = "We deploy with ops/deploy.sh on Fridays, never on a release day."
BACKEND = "The test suite runs once per backend: SQLite, then PostgreSQL."


def with_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user.split(':', 1)[0]}:{PASSWORD}@{host}"


def hippo(url: str, *args: str, user: str | None = None, embedder: str | None = None
          ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HIPPO_USER"}
    if user is not None:
        env["HIPPO_USER"] = user
    if embedder is not None:
        env["HIPPO_EMBEDDER"] = embedder
    r = subprocess.run([sys.executable, "-m", "hippo", "--db", url, *args], capture_output=True,
                       text=True, env=env, timeout=180, check=False)
    assert PASSWORD not in r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    return r


def records(r: subprocess.CompletedProcess[str]) -> list[dict]:
    assert r.returncode == 0, r.stderr
    return [orjson.loads(line) for line in r.stdout.splitlines() if line.strip()]


def test_a_new_user_adds_searches_lists_and_sees_stats(db_path: str) -> None:
    url = with_password(db_path)
    added = records(hippo(url, "add", DEPLOY, "--type", "decision", "--tag", "ops"))
    assert added == [{"id": 1, "action": "added", "type": "decision", "project": "testproj",
                      "text": DEPLOY}]
    assert records(hippo(url, "add", BACKEND))[0]["id"] == 2
    again = records(hippo(url, "add", DEPLOY, "--type", "decision"))  # the same: no new row
    assert again[0]["id"] == 1 and again[0]["action"] != "added"

    hits = records(hippo(url, "search", "--json", "when do we deploy"))
    assert [h["id"] for h in hits][:1] == [1]
    assert hits[0]["text"] == DEPLOY and hits[0]["tags"] == ["ops"]
    assert all(h["degraded"] == [] for h in hits)

    listed = records(hippo(url, "list"))
    assert [m["id"] for m in listed] == [2, 1]  # newest first

    stats = records(hippo(url, "stats"))[0]
    assert stats["database"] == display(db_path)
    assert stats["brain"]["memories"] == 2 and stats["brain"]["vectors"] == 2
    assert stats["brain"]["by_type"] == {"decision": 1, "fact": 1}
    assert stats["brain"]["embed_dim"] == 384


def _changes(db: str) -> list[tuple[int, str]]:
    """Each audited change to memories 1 and 2, in order: (memory, action)."""
    from hippo.store import connect

    store = connect(db, mode="read")
    try:
        entries = [(e["id"], m, e["action"]) for m in (1, 2) for e in store.audit.history(m)]
    finally:
        store.close()
    return [(m, action) for _, m, action in sorted(entries)]


def test_the_audit_log_records_which_user_changed_what(db_path: str, tmp_path) -> None:
    sqlite = str(tmp_path / "same.db")
    for db in (db_path, sqlite):
        first = records(hippo(db, "add", DEPLOY, user="alice", embedder="hash"))[0]["id"]
        records(hippo(db, "edit", str(first), "--text", DEPLOY.replace("Fridays", "Mondays"),
                      user="bob", embedder="hash"))
        records(hippo(db, "add", BACKEND, embedder="hash"))  # no HIPPO_USER: the role
        records(hippo(db, "forget", str(first), user="carol", embedder="hash"))
    changes = _changes(db_path)
    assert changes == _changes(sqlite)  # the same history as SQLite's
    with psycopg.connect(db_path) as conn:
        role = conn.execute("SELECT session_user").fetchone()[0]
        rows = conn.execute("SELECT memory_id, action, by_user FROM audit ORDER BY id").fetchall()
    assert [(m, a) for m, a, _ in rows] == changes
    assert [(m, u) for m, _, u in rows] == [(1, "alice"), (1, "bob"), (2, role), (1, "carol")]
