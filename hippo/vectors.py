"""Vector tables (sqlite-vec vec0, cosine), little-endian float32 blobs, and the embed cache.

A store's model and dimension are recorded in `meta` when it first receives vectors;
a different model afterwards is refused (exit 78) instead of mixing vector spaces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.errors import ConfigError
from hippo.timeutil import now_iso

if TYPE_CHECKING:
    import numpy as np

    from hippo.embed import Embedder
    from hippo.store.sqlite.database import Database

# store -> (vec table, key column, metadata columns)
VEC_TABLES = {
    "brain": (
        "memories_vec",
        "memory_id",
        "project TEXT, type TEXT, tier TEXT, created INTEGER",
    ),
    "echo": ("echo_vec", "chunk_id", "project TEXT, session_id INTEGER, started INTEGER"),
}


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def to_blob(vec: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vec, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4")


def vec_table_ddl(store: str, dimensions: int, table: str | None = None, extra: str = "") -> str:
    """CREATE statement of a store's vec0 table (`table` overrides the name, e.g. a side table)."""
    name, key, meta_cols = VEC_TABLES[store]
    return (f"CREATE VIRTUAL TABLE IF NOT EXISTS {table or name} USING vec0("
            f"{key} INTEGER PRIMARY KEY, embedding float[{dimensions}] "
            f"distance_metric=cosine, {meta_cols}{extra})")


def store_model(db: Database, store: str) -> tuple[str, int] | None:
    model = db.scalar("SELECT value FROM meta WHERE key = ?", (f"{store}.embed_model",))
    dim = db.scalar("SELECT value FROM meta WHERE key = ?", (f"{store}.embed_dim",))
    return (model, int(dim)) if model else None


def check_model(db: Database, store: str, embedder: Embedder) -> bool:
    """True when the store already uses this model; raise (78) on a mismatch."""
    recorded = store_model(db, store)
    if recorded is None:
        return False
    model, dim = recorded
    if model != embedder.model_id or dim != embedder.dimensions:
        raise ConfigError(
            f"the {store} store of {db.path} holds vectors of {model} ({dim}-d), "
            f"not {embedder.model_id} ({embedder.dimensions}-d); use --embedder "
            f"matching it, or `hippo reindex --embedder {embedder.name}`"
        )
    return True


def ensure_store(db: Database, store: str, embedder: Embedder) -> str:
    """Create the store's vec0 table for this model on first use; return its name."""
    table = VEC_TABLES[store][0]
    if check_model(db, store, embedder):
        return table
    with db.transaction():
        if store_model(db, store) is not None:  # created by a concurrent process
            check_model(db, store, embedder)
            return table
        db.execute(vec_table_ddl(store, embedder.dimensions))
        db.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?), (?, ?), (?, ?)",
            (
                f"{store}.embed_model", embedder.model_id,
                f"{store}.embed_dim", str(embedder.dimensions),
                f"{store}.embedder", embedder.name,
            ),
        )
    return table


def bump(db: Database, name: str, by: int = 1) -> None:
    if by:
        db.execute(
            "INSERT INTO counters(name, value) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            (name, by),
        )


def embed_texts(db: Database, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors for `texts`, computing only those this model has never embedded."""
    import numpy as np

    out = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
    if not texts:
        return out
    hashes = [content_hash(t) for t in texts]
    found: dict[str, np.ndarray] = {}
    unique = list(dict.fromkeys(hashes))
    for start in range(0, len(unique), 500):
        part = unique[start : start + 500]
        marks = ",".join("?" * len(part))
        for h, blob in db.execute(
            f"SELECT content_hash, vector FROM embed_cache WHERE model = ? AND content_hash IN ({marks})",
            (embedder.model_id, *part),
        ):
            found[h] = from_blob(blob)
    missing = [h for h in unique if h not in found]
    if missing:
        first_text = {h: t for h, t in zip(hashes, texts)}
        vecs = embedder.embed_batch([first_text[h] for h in missing])
        stamp = now_iso()
        found.update(zip(missing, vecs))

        def store(db: Database) -> None:
            for h, v in zip(missing, vecs):
                db.execute(
                    "INSERT OR IGNORE INTO embed_cache(model, content_hash, vector, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (embedder.model_id, h, to_blob(v), stamp),
                )
            bump(db, "embed.model_calls", 1)
            bump(db, "embed.texts_embedded", len(missing))
            bump(db, "embed.cache_hits", len(texts) - len(missing))

        db.cache_write(store)  # a read command's is skipped when busy
    else:
        db.cache_write(lambda db: bump(db, "embed.cache_hits", len(texts)))
    for i, h in enumerate(hashes):
        out[i] = found[h]
    return out
