"""The two pair finders agree: vec0 KNN per changed memory and one blocked scan."""

from __future__ import annotations

import numpy as np

from hippo.config import is_server
from hippo.embed.cache import to_blob
from hippo.maintain.neighbors import knn_pairs, scan_pairs
from hippo.store import connect

# PostgreSQL: the vectors carry no metadata; type and project are the memories' own.
PG_MEMORY = ("INSERT INTO memories(id, text, type, tier, project, created_at, updated_at, "
             "dedup_key, content_hash) VALUES (?, 'x', ?, 'semantic', ?, 'now', 'now', "
             "'k' || ?, 'h')")
PG_VECTOR = "INSERT INTO memories_vec(memory_id, embedding) VALUES (?, ?)"
VEC0 = ("CREATE VIRTUAL TABLE memories_vec USING vec0(memory_id INTEGER PRIMARY KEY, "
        "embedding float[32] distance_metric=cosine, project TEXT, type TEXT, "
        "tier TEXT, created INTEGER)")
VEC0_ROW = "INSERT INTO memories_vec VALUES (?, ?, ?, ?, 'semantic', 0)"


def world(db_path, n: int = 300, seed: int = 7):
    """Clumps of near-identical unit vectors in two types and two projects."""
    db = connect(db_path)
    server = is_server(db_path)
    if server:
        from hippo.store.postgres.vector import Vec

        db.vectors.create("brain", "test-32", 32, "test")
    else:
        db.execute(VEC0)
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, 32))
    eligible = {}
    for i in range(1, n + 1):
        v = centres[i % 40] + rng.standard_normal(32) * rng.choice([0.05, 0.2, 0.5])
        v /= np.linalg.norm(v)
        key = (("fact", "tool")[i % 2], ("", "p")[(i // 2) % 2])
        if server:
            db.execute(PG_MEMORY, (i, key[0], key[1] or None, i))
            db.execute(PG_VECTOR, (i, Vec(to_blob(v))))
        else:
            db.execute(VEC0_ROW, (i, to_blob(v), key[1], key[0]))
        if i % 11:
            eligible[i] = key
    return db, eligible


def test_knn_and_scan_find_the_same_pairs(db_path) -> None:
    db, eligible = world(db_path)
    full = scan_pairs(db, None, eligible, 0.93)
    assert full and all(eligible[a] == eligible[b] for a, b in full)
    changed = set(list(eligible)[::3])
    touching = {p: s for p, s in full.items() if p[0] in changed or p[1] in changed}
    knn = knn_pairs(db, changed, eligible, 0.93, k=2)  # small k: it must grow
    scan = scan_pairs(db, changed, eligible, 0.93)
    assert set(knn) == set(scan) == set(touching)
    assert all(abs(knn[p] - full[p]) < 1e-5 for p in knn)
    assert all(s >= 0.93 for s in full.values())
