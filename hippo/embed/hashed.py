"""Deterministic feature-hashing embedder: no model, no network.

For tests and air-gapped smoke checks; it captures shared words, not meaning.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.embed.base import Embedder

if TYPE_CHECKING:
    import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder(Embedder):
    name = "hash"
    model_id = "hash-bow-v1"
    dimensions = 384

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                h = hashlib.blake2b(word.encode(), digest_size=8).digest()
                slot = int.from_bytes(h[:4], "little") % self.dimensions
                out[row, slot] += 1.0 if h[4] & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
            else:
                out[row, 0] = 1.0  # a text with no words still gets a valid unit vector
        return out
