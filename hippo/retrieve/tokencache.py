"""Token matrices from the local model and their cache: what late interaction scores.

Token matrices of stored texts are cached in the store (`store.embed_cache`) under the model
id plus ``#tokens-t1``, so a text is encoded at most once; a query's under ``#query-t1``
with its token ids masked by the query's own text. A writer fills both caches in one
forward pass (`warm_caches`); a search whose matrices are all cached never starts the model.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.errors import HippoError
from hippo.retrieve.tokenmatrix import TokenMatrix

if TYPE_CHECKING:
    import numpy as np

    from hippo.config import Settings
    from hippo.embed import Embedder
    from hippo.store import Store

# Token matrices are cached in `embed_cache` under the model id plus this suffix. The
# int8 matrices of hippo 0.1 ("#tokens") are dropped by migration 0003_ternary_tokens.
TOKENS_SUFFIX = "#tokens-t1"


def can_encode_tokens(embedder: Embedder) -> bool:
    """True when `embedder` can give per-token vectors (the local ONNX model can).

    Asked of the class, so nothing loads: a search whose token matrices are all cached
    never starts the model.
    """
    return embedder.name == "local" and callable(getattr(type(embedder), "forward", None))


def encode_tokens(embedder: Embedder, texts: Sequence[str], batch: int = 32) -> list[TokenMatrix]:
    """Token matrices of `texts` (special tokens dropped), from the model's last layer."""
    return _forward(embedder, texts, batch)[1]


def encode_both(embedder: Embedder, texts: Sequence[str],
                batch: int = 32) -> tuple[np.ndarray, list[TokenMatrix]]:
    """One forward pass of the local model: pooled sentence vectors and token matrices.

    The pooled vectors are `LocalEmbedder.embed_batch`'s, so a writer fills both caches
    at once.
    """
    return _forward(embedder, texts, batch)


def _forward(embedder: Embedder, texts: Sequence[str],
             batch: int) -> tuple[np.ndarray, list[TokenMatrix]]:
    pooled, mats = embedder.forward(texts, tokens=True, batch=batch)  # type: ignore[attr-defined]
    return pooled, [TokenMatrix.from_vectors(ids, vecs, words) for ids, vecs, words in mats]


def warm_caches(db: Store, embedder: Embedder, texts: Sequence[str]) -> int:
    """Fill `embed_cache` with both the sentence vector and the token matrix of every text
    this model has not seen, in one forward pass each; returns how many were encoded.

    For writers (adding memories, ingesting chunks): afterwards `embed_texts` and
    `token_matrices` find everything cached, and a search never encodes a candidate.
    Embedders without token vectors are left alone (0).
    """
    from hippo.embed.cache import content_hash, to_blob
    from hippo.timeutil import now_iso

    if not can_encode_tokens(embedder):
        return 0
    tokens_model = embedder.model_id + TOKENS_SUFFIX
    first: dict[str, str] = {}
    for t in texts:
        first.setdefault(content_hash(t), t)
    hashes = list(first)
    have_vec = db.embed_cache.get_many(embedder.model_id, hashes)
    have_tok = db.embed_cache.get_many(tokens_model, hashes)
    todo = [h for h in hashes if h not in have_vec or h not in have_tok]
    if not todo:
        return 0
    pooled, mats = encode_both(embedder, [first[h] for h in todo])
    stamp = now_iso()
    with db.transaction():
        for h, v, m in zip(todo, pooled, mats):
            db.embed_cache.put(embedder.model_id, [(h, to_blob(v))], stamp)
            db.embed_cache.put(tokens_model, [(h, m.to_blob())], stamp)
        db.vectors.bump("embed.model_calls", 1)
        db.vectors.bump("embed.texts_embedded", len(todo))
    return len(todo)


def warm_for_search(db: Store, settings: Settings, embedder: Embedder,
                    texts: Sequence[str]) -> None:
    """For writers: with the local model and late interaction on (`late_pool` > 0), cache
    the token matrices of `texts` in the same forward pass as their vectors (`warm_caches`).
    Afterwards no search has to start the model for one of them."""
    if not texts or not can_encode_tokens(embedder):  # only the local model has them
        return
    from hippo.retrieve.params import load_params

    if load_params(settings).late_pool > 0:
        warm_caches(db, embedder, texts)


def encode_query(db: Store, embedder: Embedder, text: str) -> tuple[bytes, TokenMatrix]:
    """A new query's float32 vector blob and token matrix from one forward pass.

    Both go to `embed_cache` under the text's hash when the database takes the write (a
    busy or read-only database still gets its answer): the vector, and the token matrix
    with its token ids masked by the query's own text (`QUERY_SUFFIX`): the ids would spell
    the query out, and a prompt is not a memory (docs/privacy.md).
    """
    from hippo.embed.cache import to_blob

    pooled, mat = _query_forward(embedder, text)
    blob = to_blob(pooled)
    with contextlib.suppress(HippoError), db.transaction():
        _store_query(db, embedder, text, blob, mat)
        db.vectors.bump("embed.model_calls", 1)
        db.vectors.bump("embed.texts_embedded", 1)
    return blob, mat


# A query's token matrix is cached under the model id plus this suffix with its token ids
# XOR a keystream that only the query's own text gives (SHAKE-256 of the text under a
# label; the row's key is its SHA-256), so the file alone cannot spell the query out, and
# a repeat, holding the text, takes the ids back for free (no tokenizer, no model).
QUERY_SUFFIX = "#query-t1"
_ID_LABEL = b"hippo query token ids\x00"


def _id_mask(text: str, n: int) -> tuple[int, ...]:
    import hashlib

    stream = hashlib.shake_256(_ID_LABEL + text.encode("utf-8", "surrogatepass")).digest(4 * n)
    return struct.unpack(f"<{n}I", stream)


def _masked(mat: TokenMatrix, text: str) -> TokenMatrix:
    """`mat` with its ids XOR the text's keystream (its own inverse)."""
    ids = tuple(i ^ k for i, k in zip(mat.ids, _id_mask(text, len(mat.ids)), strict=True))
    return TokenMatrix(ids, mat.planes, mat.dimensions, mat.words)


def _query_forward(embedder: Embedder, text: str) -> tuple[Any, TokenMatrix]:
    """One model pass over a query: pooled vector and token matrix."""
    pooled, ((ids, vecs, words),) = embedder.forward(  # type: ignore[attr-defined]
        [text], tokens=True, batch=1)
    return pooled[0], TokenMatrix.from_vectors(ids, vecs, words)


def _store_query(db: Store, embedder: Embedder, text: str, blob: bytes | None,
                 mat: TokenMatrix) -> None:
    from hippo.embed.cache import content_hash
    from hippo.timeutil import now_iso

    stamp, h = now_iso(), content_hash(text)
    if blob is not None:
        db.embed_cache.put(embedder.model_id, [(h, blob)], stamp)
    db.embed_cache.put(embedder.model_id + QUERY_SUFFIX, [(h, _masked(mat, text).to_blob())],
                       stamp, replace=True)


def query_cached(db: Store, embedder: Embedder, text: str) -> bool:
    """Whether both the vector and the (masked) token matrix of this query are cached."""
    from hippo.embed.cache import content_hash

    h = content_hash(text)
    return (db.embed_cache.get(embedder.model_id, h) is not None
            and db.embed_cache.get(embedder.model_id + QUERY_SUFFIX, h) is not None)


def query_matrix(db: Store, embedder: Embedder, text: str) -> TokenMatrix:
    """A query's token matrix: from the cache (ids unmasked with the text itself, no
    model), else encoded now and cached masked (best effort)."""
    from hippo.embed.cache import content_hash

    blob = db.embed_cache.get(embedder.model_id + QUERY_SUFFIX, content_hash(text))
    if blob is not None:
        with contextlib.suppress(ValueError, struct.error):
            return _masked(TokenMatrix.from_blob(blob), text)
    _, mat = _query_forward(embedder, text)
    with contextlib.suppress(HippoError), db.transaction():
        _store_query(db, embedder, text, None, mat)
    return mat


def token_matrices(db: Store, embedder: Embedder, texts: Sequence[str]) -> list[TokenMatrix]:
    """Token matrices of stored `texts` (memories, chunks), from the cache when this model
    has seen the text before; those encoded here are cached. Never a query's
    (`query_matrix`): the cache keeps what a purge can find, the text of a row."""
    from hippo.embed.cache import content_hash
    from hippo.timeutil import now_iso

    model = embedder.model_id + TOKENS_SUFFIX
    hashes = [content_hash(t) for t in texts]
    unique = list(dict.fromkeys(hashes))
    found: dict[str, TokenMatrix] = {}
    for h, blob in db.embed_cache.get_many(model, unique).items():
        with contextlib.suppress(ValueError, struct.error):  # damaged: encode again
            found[h] = TokenMatrix.from_blob(bytes(blob))
    missing = [h for h in unique if h not in found]
    if missing:
        first = dict(zip(hashes, texts))
        mats = encode_tokens(embedder, [first[h] for h in missing])
        stamp = now_iso()
        # A cache that cannot be written (busy, read-only) still leaves a result.
        with contextlib.suppress(HippoError), db.transaction():
            db.embed_cache.put(model, [(h, m.to_blob()) for h, m in zip(missing, mats)], stamp,
                               replace=True)
        found.update(zip(missing, mats))
    return [found[h] for h in hashes]
