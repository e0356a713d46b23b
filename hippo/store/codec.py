"""How texts and vectors travel into the store: a text's content hash (sha256 of its
UTF-8, surrogates kept), and a vector as a little-endian float32 blob. Below the store,
so the store imports nothing above it (`hippo.embed.cache` gives them to the rest)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def to_blob(vec: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vec, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4")
