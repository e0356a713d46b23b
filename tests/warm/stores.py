"""Stores of random Brain memories and vectors for the warm index's tests, written through
the store (so the vector log is kept as by any hippo write)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from hippo.embed.cache import ensure_store
from hippo.embed.hashed import HashEmbedder
from hippo.memory.memtypes import BUILTIN
from hippo.store import connect
from hippo.store.sqlite.database import Database
from hippo.timeutil import epoch

PROJECTS = (None, "A", "B", "C")
TYPES = ("fact", "rule", "decision", "task", "preference")
TAGS = ("x", "y", "z")
DIM = HashEmbedder.dimensions


def stamp(rng: random.Random) -> str:
    """A time in 2025-2026 with milliseconds (the store's canonical form)."""
    return (f"202{rng.choice('56')}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}."
            f"{rng.randint(0, 999):03d}Z")


def unit(rng: np.random.Generator, n: int = 1) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype("<f4")
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def add(db: Database, mid: int, rng: random.Random, vector: np.ndarray | None, *,
        status: str = "active", superseded_by: int | None = None,
        project: str | None | bool = False, created: str | None = None) -> dict:
    """One memory (and its vector, when given) under id `mid`."""
    mtype = rng.choice(TYPES)
    proj = rng.choice(PROJECTS) if project is False else project
    at = created or stamp(rng)
    tags = sorted(rng.sample(TAGS, rng.randint(0, 2)))
    rec = {"id": mid, "text": f"memory {mid}", "type": mtype, "tier": BUILTIN[mtype].tier,
           "project": proj, "tags": str(tags).replace("'", '"'), "importance": 0.5,
           "author": "machine", "status": status, "pinned": 0, "canonical": 0,
           "confidence": 0.5, "created_at": at, "updated_at": at, "confirmed_at": None,
           "verified_at": None, "consolidated_into": None, "superseded_by": superseded_by,
           "source": None, "dedup_key": f"k{mid}", "content_hash": f"h{mid}",
           "valid_from": at, "valid_to": at if superseded_by is not None else None}
    db.memories.insert(rec)
    if vector is not None:
        db.vectors.put(mid, vector, project=proj or "", type=mtype,
                               tier=BUILTIN[mtype].tier, created=epoch(at))
    return rec


def build(path: Path, n: int, seed: int = 0) -> list[dict]:
    """`n` memories: every project (and global), several types, tags and times, some
    superseded, some no longer active but with a vector left (what only the post-check
    against `memories` can drop), a few without a vector."""
    rng, vrng = random.Random(seed), np.random.default_rng(seed)
    db = connect(path)
    ensure_store(db, "brain", HashEmbedder())
    vecs = unit(vrng, n)
    out = []
    with db.transaction():
        for i in range(1, n + 1):
            roll = rng.random()
            out.append(add(db, i, rng, None if roll < 0.02 else vecs[i - 1],
                           status="done" if 0.02 <= roll < 0.05 else "active",
                           superseded_by=i - 1 if i > 1 and 0.05 <= roll < 0.1 else None))
    db.close()
    return out
