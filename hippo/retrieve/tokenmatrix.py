"""The token-matrix format of late interaction: one text's token ids and ternary token
vectors (two bit planes per token), its blob in the cache, and its compaction.

A token vector of the local model keeps only the signs of its largest components, so a
cached matrix costs 2·d/8 bytes a token and is scored with popcounts (`hippo.retrieve.late`).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# Each token vector keeps the sign of its largest TERNARY_SHARE of components (+1/-1)
# and zeroes the rest: docs/quality.md has the measurements.
TERNARY_SHARE = 1 / 3
# A repeat of a token id whose ternary vector has a cosine of at least DISTINCT_COSINE with
# an occurrence already kept adds (almost) nothing to MaxSim, which takes each query
# token's best match, and is not stored: 48 % fewer tokens in coding-agent transcript
# chunks, 7.5 % in conversation turns, recall unchanged (docs/quality.md).
DISTINCT_COSINE = 0.7
_HEAD = struct.Struct("<II")  # token count, dimensions


@dataclass(frozen=True, slots=True)
class TokenMatrix:
    """One text's token ids (no special tokens) and ternary token vectors, one per token.

    A token vector of the model is reduced to its largest components' signs: bit i of
    `pos[t]` is set when component i of token t is among them and positive, of `neg[t]`
    when negative. `planes` holds them as stored, per token the positive then the
    negative plane, d/8 bytes each (little-endian), so a cached matrix is read without
    parsing. The cosine of two such vectors is counted with popcounts: on Python ints
    (`pos`, `neg`), so a search whose token matrices are all cached needs neither numpy
    nor the model, or on the planes in numpy for big pools. A token costs 2·d/8 bytes in
    the cache (96 for MiniLM) instead of d.
    """

    ids: tuple[int, ...]
    planes: bytes
    dimensions: int
    # Per token: has a letter or digit (False: punctuation or symbols only).
    words: tuple[bool, ...] = ()

    @property
    def width(self) -> int:
        """Bytes of one bit plane."""
        return (self.dimensions + 7) // 8

    @property
    def pos(self) -> tuple[int, ...]:
        w, p = self.width, self.planes
        return tuple(int.from_bytes(p[at : at + w], "little") for at in range(0, len(p), 2 * w))

    @property
    def neg(self) -> tuple[int, ...]:
        w, p = self.width, self.planes
        return tuple(int.from_bytes(p[at : at + w], "little") for at in range(w, len(p), 2 * w))

    @classmethod
    def from_vectors(cls, ids: Sequence[int], vectors: np.ndarray,
                     words: Sequence[bool] | None = None,
                     share: float = TERNARY_SHARE,
                     distinct: float = DISTINCT_COSINE) -> TokenMatrix:
        """Ternary form of `vectors` ((len(ids), d) floats): the signs of each row's largest
        `share` of components by magnitude, near-copies of a repeated token dropped
        (`distinct`). `words` defaults to all True."""
        import numpy as np

        n, d = vectors.shape
        flags = tuple(bool(w) for w in words) if words is not None else (True,) * n
        if n == 0:
            return cls((), b"", d, ())
        keep = min(d, max(1, round(d * share)))
        mag = np.abs(vectors)
        cut = np.partition(mag, d - keep, axis=1)[:, d - keep : d - keep + 1]
        big = (mag >= cut) & (mag > 0)
        pos = np.packbits(big & (vectors > 0), axis=1, bitorder="little")
        neg = np.packbits(big & (vectors < 0), axis=1, bitorder="little")
        full = cls(tuple(int(i) for i in ids), np.stack([pos, neg], axis=1).tobytes(), d, flags)
        return full.distinct(distinct)

    def distinct(self, cosine: float = DISTINCT_COSINE) -> TokenMatrix:
        """The matrix without the repeats of a token id whose ternary vector has a cosine of
        `cosine` or more with an occurrence kept before it: the contexts that give a word
        another meaning stay, near-copies go (MaxSim takes each query token's best match,
        so a near-copy adds almost nothing). Works on the stored planes, so a matrix cached
        before this rule is compacted without the model; a second pass changes nothing."""
        n = len(self.ids)
        if n < 2 or len(set(self.ids)) == n:
            return self
        import numpy as np

        w = self.width
        bits = np.unpackbits(np.frombuffer(self.planes, dtype=np.uint8).reshape(n, 2, w),
                             axis=2, bitorder="little")
        signs = bits[:, 0].astype(np.int16) - bits[:, 1]
        rows = _distinct_rows(self.ids, signs, cosine)
        return self if len(rows) == n else self._rows(rows)

    def content(self) -> TokenMatrix:
        """The tokens with a letter or digit (all of them when none has one).

        The query side of MaxSim: punctuation carries nothing to match ("?" ends every
        question; +0.7 points on LoCoMo without it). A document keeps its punctuation:
        the contextual vector of a sentence's final "." sums the sentence up, and
        dropping it on the document side cost 0.9 points (docs/quality.md).
        """
        keep = [k for k, w in enumerate(self.words) if w]
        if not keep or len(keep) == len(self.ids):
            return self
        return self._rows(keep)

    def _rows(self, rows: Sequence[int]) -> TokenMatrix:
        """The matrix of tokens `rows` only, in that order."""
        step = 2 * self.width
        return TokenMatrix(tuple(self.ids[r] for r in rows),
                           b"".join(self.planes[r * step : (r + 1) * step] for r in rows),
                           self.dimensions, tuple(self.words[r] for r in rows))

    def to_blob(self) -> bytes:
        """`<II` count and dimensions, `<I` ids, one flag byte per token (1: has a letter or
        digit), then per token the positive and the negative bit plane (d/8 bytes each)."""
        return b"".join([_HEAD.pack(len(self.ids), self.dimensions),
                         struct.pack(f"<{len(self.ids)}I", *self.ids),
                         bytes(int(w) for w in self.words), self.planes])

    @classmethod
    def from_blob(cls, blob: bytes) -> TokenMatrix:
        n, d = _HEAD.unpack_from(blob)
        width = (d + 7) // 8
        at = _HEAD.size + 5 * n
        if len(blob) != at + 2 * width * n:
            raise ValueError(f"token matrix blob of {len(blob)} bytes, expected {at + 2 * width * n}")
        ids = struct.unpack_from(f"<{n}I", blob, _HEAD.size)
        words = tuple(b == 1 for b in blob[_HEAD.size + 4 * n : at])
        return cls(ids, blob[at:], d, words)


def _distinct_rows(ids: Sequence[int], signs: np.ndarray, cosine: float) -> list[int]:
    """Rows to keep, in order: every token, except a repeated id whose ternary vector
    (`signs`, one row of -1/0/+1 per token) has a cosine of `cosine` or more with a kept
    occurrence of the same id."""
    import numpy as np

    nonzero = np.abs(signs).sum(axis=1)
    kept: dict[int, list[int]] = {}
    rows: list[int] = []
    for r, tid in enumerate(ids):
        same = kept.setdefault(tid, [])
        if same:
            dots = signs[same] @ signs[r]
            if (dots >= cosine * np.sqrt(nonzero[same] * nonzero[r])).any():
                continue
        same.append(r)
        rows.append(r)
    return rows
