"""The embedding caches, in the `embed_cache` table: vectors of texts and their token
matrices, by model and content hash (a text is embedded once).

A token matrix (late interaction) is cached under the embedding model id plus a suffix
naming its format (`#tokens-t1`, `hippo.retrieve.tokencache`): the same table, the same
reads. Vectors are float32 blobs (`hippo.embed.cache.to_blob`), matrices opaque blobs
(`hippo.retrieve.tokenmatrix.TokenMatrix`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hippo.store.sql import Repository

# Set in `meta` when every cached token matrix drops near-copies of repeated tokens
# (`TokenMatrix.distinct`): on a file created since December 2026, or after
# `hippo doctor --fix` compacted an older one.
TOKENS_DISTINCT_KEY = "tokens.distinct"
GET = "SELECT vector FROM embed_cache WHERE model = ? AND content_hash = ?"
GET_MANY = "SELECT content_hash, vector FROM embed_cache WHERE model = ? AND "
PUT = ("INSERT INTO embed_cache(model, content_hash, vector, created_at) VALUES {rows} "
       "ON CONFLICT (model, content_hash) DO ")
KEEP = "NOTHING"
# An entry encoded again because the cached one was missing or damaged replaces it.
REPLACE = "UPDATE SET vector = excluded.vector, created_at = excluded.created_at"
BATCH = 500  # hashes per statement


class EmbedCache(Repository):
    """Cached vectors and token matrices of texts, by model and content hash."""

    def get(self, model: str, content_hash: str) -> bytes | None:
        """The cached blob of the text with `content_hash` under `model`, or None."""
        blob = self.db.scalar(GET, (model, content_hash))
        return None if blob is None else bytes(blob)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """The cached blobs under `model` of those `hashes` that have one."""
        found: dict[str, bytes] = {}
        for start in range(0, len(hashes), BATCH):
            params: list[Any] = [model]
            among = self.db.dialect.within("content_hash", hashes[start : start + BATCH], params)
            for h, blob in self.db.execute(GET_MANY + among, params):
                found[h] = bytes(blob)
        return found

    def put(self, model: str, blobs: Iterable[tuple[str, bytes]] | Mapping[str, bytes],
            created_at: str, *, replace: bool = False) -> None:
        """Cache (content hash, blob) pairs under `model`; a hash already cached is kept,
        or with `replace` overwritten. A hash given twice counts once: its first blob, or
        with `replace` its last (as one row after another would)."""
        pairs: dict[str, bytes] = {}
        for h, blob in blobs.items() if isinstance(blobs, Mapping) else blobs:
            if replace or h not in pairs:
                pairs[h] = bytes(blob)
        keys = list(pairs)
        for start in range(0, len(keys), BATCH):
            part = keys[start : start + BATCH]
            sql = PUT.format(rows=", ".join(["(?, ?, ?, ?)"] * len(part)))
            params = [v for h in part for v in (model, h, pairs[h], created_at)]
            self.db.execute(sql + (REPLACE if replace else KEEP), params)
