"""Each store's embedding model, little-endian float32 blobs, and the embed cache.

A store's model and dimension are recorded when it first receives vectors (its vector
table is created then, `store.vectors.create`); a different model afterwards is refused
(exit 78) instead of mixing vector spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.errors import ConfigError
from hippo.store.codec import content_hash, from_blob, to_blob
from hippo.timeutil import now_iso

if TYPE_CHECKING:
    import numpy as np

    from hippo.embed import Embedder
    from hippo.store import Store


def store_model(store: Store, name: str) -> tuple[str, int] | None:
    """The model id and dimensions the `name` store ("brain", "echo") was built with."""
    return store.vectors.model(name)


def check_model(db: Store, store: str, embedder: Embedder) -> bool:
    """True when the store already uses this model; raise (78) on a mismatch."""
    recorded = store_model(db, store)
    if recorded is None:
        return False
    model, dim = recorded
    if model != embedder.model_id or dim != embedder.dimensions:
        raise ConfigError(
            f"the {store} store of {db.label} holds vectors of {model} ({dim}-d), "
            f"not {embedder.model_id} ({embedder.dimensions}-d); use --embedder "
            f"matching it, or `hippo reindex --embedder {embedder.name}`"
        )
    return True


def ensure_store(db: Store, store: str, embedder: Embedder) -> None:
    """Create the store's vector table for this model on first use."""
    if check_model(db, store, embedder):
        return
    with db.transaction():
        if store_model(db, store) is not None:  # created by a concurrent process
            check_model(db, store, embedder)
            return
        db.vectors.create(store, embedder.model_id, embedder.dimensions, embedder.name)


def embed_texts(db: Store, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors for `texts`, computing only those this model has never embedded."""
    import numpy as np

    out = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
    if not texts:
        return out
    hashes = [content_hash(t) for t in texts]
    unique = list(dict.fromkeys(hashes))
    found: dict[str, np.ndarray] = {
        h: from_blob(blob) for h, blob in db.embed_cache.get_many(embedder.model_id, unique).items()}
    missing = [h for h in unique if h not in found]
    if missing:
        first_text = {h: t for h, t in zip(hashes, texts)}
        vecs = embedder.embed_batch([first_text[h] for h in missing])
        stamp = now_iso()
        found.update(zip(missing, vecs))

        def store(db: Store) -> None:
            db.embed_cache.put(embedder.model_id,
                               [(h, to_blob(v)) for h, v in zip(missing, vecs)], stamp)
            db.vectors.bump("embed.model_calls", 1)
            db.vectors.bump("embed.texts_embedded", len(missing))
            db.vectors.bump("embed.cache_hits", len(texts) - len(missing))

        db.cache_write(store)  # a read command's is skipped when busy
    else:
        db.cache_write(lambda db: db.vectors.bump("embed.cache_hits", len(texts)))
    for i, h in enumerate(hashes):
        out[i] = found[h]
    return out
