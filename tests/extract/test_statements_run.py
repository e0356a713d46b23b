"""Issue 30's acceptance, whole runs over the hand-made excerpts of `test_statements.py`:
a re-run adds nothing, `hippo undo` of the extract run removes every memory it wrote, and
a statement holding a secret is stored masked, the secret in no byte of the database."""

from __future__ import annotations

from pathlib import Path

from tests.extract import excerpts as X
from tests.extract.test_statements import WRITERS, by_text, nothing_invented


def _listed(cli) -> list[dict]:
    res = cli("list", "--all-projects", "--status", "all", "--limit", "0", "--json")
    assert res.exit_code == 0, res.stderr
    return res.records


def test_rerun_adds_nothing_and_undo_removes_what_the_run_wrote(cli, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for write in WRITERS.values():
        write(folder)
    res = cli("ingest", str(folder), "--idle-minutes", "0")
    assert res.exit_code == 0, res.stderr
    exported = cli("export").stdout
    res = cli("extract")
    assert res.exit_code == 0, res.stderr
    summary = res.records[-1]
    mems = nothing_invented(cli)
    assert summary["added"] == len(mems) >= 15
    # every format gave memories
    files = {Path(m["source"]["file"]).name for m in mems}
    assert len(files) == len(WRITERS), files
    listed = _listed(cli)

    again = cli("extract")
    assert again.exit_code == 0 and again.records[-1]["added"] == 0
    sessions = sorted({m["source"]["session"] for m in mems})
    for key in sessions:  # each session extracted again on purpose: all already linked
        res = cli("extract", "--session", key)
        assert res.exit_code == 0, res.stderr
        assert not [e for e in res.records if e.get("action") in ("add", "reinforce")], key
    assert _listed(cli) == listed

    assert cli("export").stdout != exported
    res = cli("undo", summary["run_id"])
    assert res.exit_code == 0, res.stderr
    assert _listed(cli) == []
    assert cli("export").stdout == exported


GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS = "AKIA" + "4QWERTYUIOPASDF2"
DB_PASSWORD = "Vq7rT2mXk9Lp"
DSN = f"postgres://orders_app:{DB_PASSWORD}@db.staging.internal:5432/orders"


def test_secrets_in_statements_are_stored_masked(cli, tmp_path: Path, db_path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    X.generic(folder / "secrets.jsonl", "gw-secrets", "/home/dev/gateway", [
        ("user", (f"The release job pushes images to GHCR with the token {GITHUB} of the "
                 "`ci-bot` account.")),
        ("user", f"The worker reads orders from {DSN} on staging."),
        ("assistant", (f"Uploads to S3 use the access key {AWS} of the `ci-uploader` IAM user, "
                      "so the bucket policy must allow that user.")),
    ])
    X.claude_code(folder / "7d3e9b10-2222-4c6d-8e0f-abcdefabcdef.jsonl",
                  "7d3e9b10-2222-4c6d-8e0f-abcdefabcdef", "/home/dev/ledger-api", [
        ("user", f"The nightly export uploads with the AWS key {AWS}; never print it in logs."),
        ("call", "Bash", "cat .env"),
        ("result", f"DATABASE_URL={DSN}\nGITHUB_TOKEN={GITHUB}"),
        ("assistant", (f"`DATABASE_URL` points at {DSN}, which is the staging database, not "
                      "production.")),
    ])
    assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    got = by_text(nothing_invented(cli))
    said = "\n".join(got)
    for secret in (GITHUB, AWS, DB_PASSWORD):
        assert secret not in said
    assert ("The release job pushes images to GHCR with the token [REDACTED:github_token] of "
            "the `ci-bot` account.") in got
    assert ("The worker reads orders from postgres://orders_app:[REDACTED:password]"
            "@db.staging.internal:5432/orders on staging.") in got
    assert any("[REDACTED:aws_access_key] of the `ci-uploader` IAM user" in t for t in got)
    assert any("uploads with the AWS key [REDACTED:aws_access_key]" in t for t in got)
    if isinstance(db_path, Path):  # the file's bytes, every table and index (and its WAL)
        blob = b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
        assert blob, db_path
        for secret in (GITHUB, AWS, DB_PASSWORD):
            assert secret.encode() not in blob, secret
