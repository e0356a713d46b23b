"""A secret is masked in every string a memory stores, not only its text: its project, its
tags (before they are lower-cased: a token's shape is in its case) and its source, through
`add`, `import`, `edit` and MCP `remember` (issue 31, item 9)."""

from __future__ import annotations

import json

import orjson

from hippo.store import connect

GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
AWS = "AKIAQ3EGRT7WXYZ2ABCD"  # lower-cased, no redactor would know it
SECRETS = (GITHUB, AWS)


def _stored(db_path) -> str:  # type: ignore[no-untyped-def]
    """Every memory's stored fields and its audit, as one text."""
    db = connect(db_path)
    try:
        rows = db.rows("SELECT text, project, tags, source, dedup_key FROM memories")
        audit = db.rows("SELECT before, after FROM audit")
    finally:
        db.close()
    return json.dumps([dict(r) for r in rows] + [dict(r) for r in audit], default=str)


def _clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret.lower() not in text.lower(), text


def test_add_masks_project_and_tags(cli, db_path) -> None:  # type: ignore[no-untyped-def]
    r = cli("add", "The deploy notes live in the wiki", "--type", "fact", "--tag", GITHUB,
            "--tag", AWS, "--tag", "ops", "--project", GITHUB, "--json")
    assert r.exit_code == 0, r.stderr
    assert r.records[0]["project"] == "[REDACTED:github_token]"
    (rec,) = cli("export").records
    assert rec["project"] == "[REDACTED:github_token]"
    assert rec["tags"] == ["[redacted:aws_access_key]", "[redacted:github_token]", "ops"]
    _clean(r.stdout, r.stderr, _stored(db_path), cli("export").stdout)


def test_import_masks_project_tags_and_source(cli, db_path) -> None:  # type: ignore[no-untyped-def]
    line = {"id": 7, "text": "imported fact", "type": "fact", "project": AWS,
            "tags": [GITHUB, "ops"], "source": {"via": "import", "note": f"key {GITHUB}"}}
    r = cli("import", "-", input=orjson.dumps(line).decode() + "\n")
    assert r.exit_code == 0, r.stderr
    (rec,) = cli("export").records
    assert rec["project"] == "[REDACTED:aws_access_key]"
    assert rec["tags"] == ["[redacted:github_token]", "ops"]
    assert rec["source"]["note"] == "key [REDACTED:github_token]"
    _clean(r.stdout, r.stderr, _stored(db_path))


def test_edit_masks_a_new_project_and_tags(cli, db_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("add", "a plain fact", "--type", "fact").exit_code == 0
    r = cli("edit", "1", "--tag", AWS, "--project", GITHUB, "--json")
    assert r.exit_code == 0, r.stderr
    (rec,) = cli("export").records
    assert rec["project"] == "[REDACTED:github_token]"
    assert rec["tags"] == ["[redacted:aws_access_key]"]
    _clean(r.stdout, r.stderr, _stored(db_path))


def test_mcp_remember_masks_project_and_tags(db_path) -> None:  # type: ignore[no-untyped-def]
    from hippo.core import Hippo
    from hippo.mcp.params import McpParams
    from hippo.mcp.server import build
    from hippo.mcp.tools import Tools
    from tests.mcp.conftest import calls, data

    engine = Tools(Hippo(None, db=str(db_path), embedder="hash", project="alpha"),
                    McpParams())
    try:
        (res,) = calls(build(engine), ("remember", {
            "text": "The staging proxy needs the CA bundle", "type": "config",
            "project": GITHUB, "tags": [AWS, "proxy"]}))
    finally:
        engine.close()
    out = data(res)
    assert out["project"] == "[REDACTED:github_token]" and out["redacted"] == 2
    _clean(json.dumps(out), _stored(db_path))
