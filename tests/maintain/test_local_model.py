"""Consolidation with the real local model (MiniLM) on hand-written statements.

Run this file directly (`python tests/maintain/test_local_model.py`) to print the pair →
cosine table the report quotes.
"""

from __future__ import annotations

import pytest

THRESHOLD = 0.93

# (kind, type, a, b): "merge" paraphrases ≥ 0.93; "guard" look-alikes ≥ 0.93 the literal
# guard must keep apart; "below" paraphrases MiniLM scores under 0.93 (not merged).
PAIRS: list[tuple[str, str, str, str]] = [
    ("merge", "procedure", "Run the tests with pytest -q before pushing",
     "Before pushing, run the tests with pytest -q"),
    ("merge", "fact", "The staging database is hosted on db-staging.internal",
     "The staging DB is hosted on db-staging.internal"),
    ("merge", "tool", "Deploys go through the GitHub Actions workflow deploy.yml",
     "Deployments go through the deploy.yml GitHub Actions workflow"),
    ("merge", "procedure",
     "To release, bump the version in pyproject.toml, tag it and push the tag",
     "To release: bump the version in pyproject.toml, then tag and push the tag"),
    ("merge", "procedure", "Restart the worker with systemctl restart worker",
     "Restart the worker using systemctl restart worker"),
    ("merge", "config", "Enable WAL mode on the SQLite database",
     "Turn on WAL mode for the SQLite database"),
    ("merge", "tool", "Build the docs with mkdocs build",
     "Build the documentation with mkdocs build"),
    ("guard", "config", "use port 5432", "use port 5433"),
    ("guard", "config", "Use port 5432 for the Postgres database",
     "Use port 5433 for the Postgres database"),
    ("guard", "config", "Use Python 3.11 for this project", "Use Python 3.12 for this project"),
    ("guard", "config", "The build uses Node 18", "The build uses Node 20"),
    ("guard", "fact", "Logs are written to /var/log/app.log",
     "Logs are written to /var/log/app/app.log"),
    ("guard", "config", "The API key is read from OPENAI_API_KEY",
     "The API key is read from OPENAI_KEY"),
    ("guard", "procedure", "Run the linter before committing",
     "Do not run the linter before committing"),
    ("guard", "preference", "Always use tabs for indentation", "Never use tabs for indentation"),
    ("below", "fact", "The cache is stored in Redis", "The cache lives in Redis"),
    ("below", "fact", "Migrations run automatically on startup",
     "Database migrations are applied automatically at startup"),
    ("below", "preference", "The user prefers short answers", "The user prefers brief answers"),
    ("below", "config", "Set HIPPO_DB to choose the database file",
     "The database file is chosen with HIPPO_DB"),
    ("below", "rule", "Never commit directly to main",
     "Do not commit directly to the main branch"),
]
# A limit the guard cannot see (same words, other order); reported, not asserted.
KNOWN_MISS = ("preference", "The user prefers tabs over spaces", "The user prefers spaces over tabs")

# The same paraphrase pairs, protected: never changed by consolidation.
PROTECTED = [
    ({"type": "rule"}, {"type": "rule"}, 0),
    ({"type": "decision"}, {"type": "decision"}, 1),
    ({"author": "human", "project": "people"}, {"author": "human", "project": "people"}, 2),
    ({"pinned": True, "project": "pins"}, {"project": "pins"}, 5),
    ({"canonical": True, "project": "canon"}, {"project": "canon"}, 3),
]


def cosines(texts: list[str]) -> list[float]:
    from hippo import embed

    v = embed.get("local").embed_batch(texts)
    return [float(v[i] @ v[i + 1]) for i in range(0, len(texts), 2)]


@pytest.fixture(scope="module")
def sims() -> list[float]:
    return cosines([t for _, _, a, b in PAIRS for t in (a, b)])


def test_pairs_sit_where_the_test_says(sims) -> None:
    for (kind, _, a, b), sim in zip(PAIRS, sims):
        if kind == "below":
            assert sim < THRESHOLD, (a, b, sim)
        else:
            assert sim >= THRESHOLD, (a, b, sim)


def test_local_model_merges_paraphrases_only(cli, seed, db_path, check) -> None:
    records = []
    for kind, mtype, a, b in PAIRS:
        records += [{"text": a, "type": mtype}, {"text": b, "type": mtype}]
    for extra_a, extra_b, pair in PROTECTED:
        _, mtype, a, b = PAIRS[pair]
        records += [{"text": a, "type": mtype, **extra_a}, {"text": b, "type": mtype, **extra_b}]
    added = seed(records, embedder="local")
    assert [r["action"] for r in added] == ["added"] * len(records)
    first = cli("export", embedder=None)
    before = {r["id"]: r for r in first.records}
    r = cli("consolidate", embedder=None)
    assert r.exit_code == 0, r.stderr
    merges = {tuple(sorted([e["survivor"], *e["absorbed"]])) for e in r.records
              if e["event"] == "merge"}
    vetoed = {(e["a"], e["b"]) for e in r.records if e["event"] == "veto"}
    expect_merge = {(2 * i + 1, 2 * i + 2) for i, p in enumerate(PAIRS) if p[0] == "merge"}
    expect_veto = {(2 * i + 1, 2 * i + 2) for i, p in enumerate(PAIRS) if p[0] == "guard"}
    assert merges == expect_merge
    assert vetoed == expect_veto
    after = {r["id"]: r for r in cli("export", embedder=None).records}
    protected = range(2 * len(PAIRS) + 1, len(records) + 1)
    for mid in protected:
        assert after[mid] == before[mid], mid
    # Procedures that repeat gain confidence; other survivors keep the higher one.
    surv = {e["survivor"]: e for e in r.records if e["event"] == "merge"}
    assert after[min(surv)]["confidence"] == 0.6  # pair 1 is a procedure: 0.5 + 0.5 * 0.2
    check(db_path)
    export = cli("export", embedder=None).stdout
    assert cli("undo", r.records[-1]["run_id"], embedder=None).exit_code == 0
    assert cli("export", embedder=None).stdout != export
    assert cli("export", embedder=None).stdout == first.stdout  # byte for byte
    check(db_path)


if __name__ == "__main__":
    rows = [*PAIRS, ("miss", *KNOWN_MISS)]
    values = cosines([t for _, _, a, b in rows for t in (a, b)])
    print(f"{'kind':<6} {'cosine':>7}  {'>=0.93':<6} pair")
    for (kind, _, a, b), sim in zip(rows, values):
        print(f"{kind:<6} {sim:7.4f}  {'yes' if sim >= THRESHOLD else 'no':<6} {a!r} ~ {b!r}")
