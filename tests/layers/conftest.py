"""A database with 200 rules across projects A, B, C (half human, half machine) plus globals.

Of the machine-written rules half were verified by a person and some pinned; the rest
(i % 4 == 3, not pinned: 16 of A's, 5 global) wait for review and stay out of the floor.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

TOPICS = ("tests", "migrations", "logging", "secrets", "style", "deploys", "reviews", "docs")


def rule_lines(n: int = 200, n_global: int = 20) -> str:
    lines = []
    for i in range(n + n_global):
        topic = TOPICS[i % len(TOPICS)]
        lines.append(orjson.dumps({
            "text": f"Rule {i}: check {topic} before touching module {i % 17}"
                    + ("; ask a person when unsure." if i % 3 else "."),
            "type": "rule",
            "project": None if i >= n else "ABC"[i % 3],
            "author": "human" if i % 2 == 0 else "machine",
            "importance": round(0.3 + (i * 37 % 70) / 100, 2),
            "pinned": i % 11 == 0,
            "verified_at": "2026-01-15T00:00:00Z" if i % 4 == 1 else None,
            "tags": [topic],
        }).decode())
    return "\n".join(lines) + "\n"


# Noise that must never reach the floor: other types, and rules that are not active.
EXTRA = [
    {"text": "Deploy with `make deploy` from a clean tree", "type": "procedure", "project": "A",
     "tags": ["deploys"]},
    {"text": "Use uv to manage virtualenvs", "type": "tool", "project": "A"},
    {"text": "The API listens on port 8080", "type": "fact", "project": "A"},
    {"text": "Rule that was retired", "type": "rule", "project": "A", "status": "retired"},
    {"text": "Rule that is done", "type": "rule", "project": "A", "status": "done"},
]


def _build_rules(db: Path | str, home: Path) -> None:
    """The rules store, written in a real process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    env.update(HIPPO_HOME=str(home), HIPPO_NO_PROGRESS="1", HIPPO_SERVE="off")
    lines = rule_lines() + "".join(orjson.dumps(e).decode() + "\n" for e in EXTRA)
    subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), "--embedder", "hash", "add",
                    "-"], input=lines, env=env, capture_output=True, text=True, check=True)


@pytest.fixture(scope="session")
def rules_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once per session in a real process; each test gets its own copy."""
    base = tmp_path_factory.mktemp("rules")
    db = base / "rules.db"
    _build_rules(db, base)
    return db


@pytest.fixture
def rules_db(rules_template: Path, db_path: Path | str, tmp_path: Path) -> Path | str:
    if not isinstance(db_path, Path):  # a server's schema: written there, as the file was
        home = tmp_path / "rules-home"
        home.mkdir()
        _build_rules(db_path, home)
        return db_path
    for suffix in ("", "-wal", "-shm"):
        src = Path(f"{rules_template}{suffix}")
        if src.exists():
            shutil.copy(src, f"{db_path}{suffix}")  # with its user-only mode
    return db_path
