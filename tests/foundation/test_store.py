"""The one SQLite file: schema, migrations, vectors, embed cache, model guard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hippo import embed
from hippo.core import Hippo
from hippo.embed.cache import embed_texts, ensure_store, from_blob, to_blob
from hippo.errors import ConfigError, HippoError
from hippo.memory.records import from_input
from hippo.store import connect


@pytest.mark.sqlite_only(reason="SQLite's file: WAL, foreign_keys pragma, sqlite-vec, "
                          "its migration names and the file's mode")
def test_connect_sets_wal_fk_and_loads_vec(db_path: Path) -> None:
    db = connect(db_path)
    assert db.scalar("PRAGMA journal_mode") == "wal"
    assert db.scalar("PRAGMA foreign_keys") == 1
    assert db.scalar("SELECT vec_version()").startswith("v")
    from hippo.store.sqlite.migrations import MIGRATIONS

    applied = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert applied == [name for name, _ in MIGRATIONS] and applied[0] == "0001_core"
    assert db_path.stat().st_mode & 0o777 == 0o600


def test_missing_directory_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(HippoError, match="does not exist"):
        connect(tmp_path / "nope" / "hippo.db")


def test_newer_schema_is_refused(db_path: Path) -> None:
    db = connect(db_path)
    db.execute("INSERT INTO _migrations VALUES ('9999_future', 'x')")
    db.close()
    with pytest.raises(ConfigError, match="newer than this hippo") as info:
        connect(db_path)
    assert info.value.exit_code == 78


@pytest.mark.sqlite_only(reason="SQLite's schema history: a file from before its step 0004 "
                          "(PostgreSQL's schema starts at p0001 with verified_at)")
def test_verified_at_is_backfilled_from_a_persons_verify_in_the_audit(db_path: Path) -> None:
    """A database from before 0004: who verified what is read from the audit log (human
    actor, action verify), not from confirmed_at, which reinforcement sets too."""
    from hippo.store.sqlite.migrations import MIGRATIONS

    db = connect(db_path, migrate=False)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, sql in MIGRATIONS[:3]:
        db.execute(sql)
        db.execute("INSERT INTO _migrations VALUES (?, 'x')", (name,))
    for mid in (1, 2, 3):
        db.execute("INSERT INTO memories(id, text, type, tier, author, created_at, updated_at, "
                   "confirmed_at, dedup_key, content_hash) VALUES (?, ?, 'rule', 'procedural', "
                   "'machine', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', "
                   "'2026-02-01T00:00:00Z', ?, '')", (mid, f"rule {mid}", f"k{mid}"))
    db.execute("INSERT INTO audit(memory_id, actor, action, at) VALUES "
               "(1, 'human', 'verify', '2026-02-01T00:00:00Z'), "
               "(1, 'human', 'verify', '2026-03-01T00:00:00Z'), "
               "(2, 'extract', 'reinforce', '2026-02-01T00:00:00Z'), "
               "(3, 'human', 'edit', '2026-02-01T00:00:00Z')")
    db.close()
    db = connect(db_path)
    assert [tuple(r) for r in db.execute("SELECT id, verified_at FROM memories ORDER BY id")] \
        == [(1, "2026-03-01T00:00:00Z"), (2, None), (3, None)]


def test_vectors_are_little_endian_float32() -> None:
    v = np.array([1.0, -2.5, 3.25], dtype=np.float32)
    blob = to_blob(v)
    assert blob == b"\x00\x00\x80?\x00\x00 \xc0\x00\x00P@"
    assert np.array_equal(from_blob(blob), v)


def test_embed_cache_never_embeds_twice(db_path: Path) -> None:
    db = connect(db_path)
    emb = embed.get("hash")
    ensure_store(db, "brain", emb)
    first = embed_texts(db, emb, ["a b", "c d", "a b"])
    assert db.scalar("SELECT value FROM counters WHERE name='embed.texts_embedded'") == 2
    again = embed_texts(db, emb, ["c d", "a b"])
    assert db.scalar("SELECT value FROM counters WHERE name='embed.texts_embedded'") == 2
    assert db.scalar("SELECT value FROM counters WHERE name='embed.model_calls'") == 1
    assert np.allclose(again[1], first[0])


def test_model_mismatch_is_refused_naming_both(db_path: Path) -> None:
    db = connect(db_path)
    ensure_store(db, "brain", embed.get("hash"))

    class Other(embed.Embedder):
        name, model_id, dimensions = "other", "other-model", 8

        def embed_batch(self, texts):  # type: ignore[no-untyped-def]
            return np.zeros((len(texts), 8), dtype=np.float32)

    with pytest.raises(ConfigError, match="hash-bow-v1.*other-model") as info:
        ensure_store(db, "brain", Other())
    assert info.value.exit_code == 78


def test_local_embedder_matches_reference_pipeline() -> None:
    e = embed.get("local")
    v = e.embed_batch(["The cat sits on the mat.", "A kitten is resting on a rug.",
                       "Quarterly revenue grew by 4%."])
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > 0.5 > sims[0, 2]
    # Batched and single calls agree (padding must not leak into the mean pooling).
    single = e.embed_batch(["A kitten is resting on a rug."])
    assert np.allclose(single[0], v[1], atol=1e-5)


def test_reinforce_instead_of_copy(db_path: Path) -> None:
    h = Hippo.open(db_path, embedder="hash", project="p")
    m = from_input({"text": "Deploy with  make release."}, h.types, default_project="p")
    (first,) = h.add([m])
    m2 = from_input({"text": "deploy with make release", "importance": 0.9}, h.types,
                    default_project="p")
    (second,) = h.add([m2])
    assert first.action == "added" and second.action == "reinforced"
    rec = second.record
    assert rec["id"] == first.record["id"]
    assert rec["confirmed_at"] is not None and rec["importance"] == 0.9
    assert rec["confidence"] > first.record["confidence"]
    assert h.db.scalar("SELECT count(*) FROM memories") == 1
