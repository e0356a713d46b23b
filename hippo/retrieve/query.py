"""Query processing for retrieval: dates a query names, and late-interaction scoring.

Two general mechanisms, measured on LoCoMo (docs/quality.md) and meant for coding-agent
memories as much as for conversations:

* **Dates named in the query.** "what did we decide on 3 March 2025?", "the deploy of
  2025-03-03", "in July 2024": each absolute date becomes a time window. The pipeline
  adds the window's nearest vectors as candidates and gives memories created inside a
  window a small, bounded relevance boost. Relative phrases ("last week") are left
  alone: they have no anchor a search can trust.

* **Late interaction (MaxSim) over the local model's token vectors.** A pooled sentence
  vector blurs a question into one point; scoring each query token against its best
  matching token of a candidate (ColBERT-style MaxSim, here with the unchanged MiniLM's
  contextual token states) keeps every content word of the query in play, softly
  (`painted` ~ `painting`, `sunrise` ~ `sunset`). Query tokens are weighted by an IDF
  computed over the candidate pool itself, so words every candidate shares (the
  project's or person's name, `the`) count little, and the score needs no corpus
  statistics. It reranks the fused candidate pool only, so its cost is bounded by the
  pool (a few dozen texts); token matrices are cached in `embed_cache` under the model
  id plus ``#tokens-t1`` (ternary, two bit planes per token), so a text is encoded at
  most once.

Pure functions here take `now`-free inputs; the only I/O is the token-matrix cache.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import struct
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from hippo.errors import HippoError

if TYPE_CHECKING:
    import numpy as np

    from hippo.config import Settings
    from hippo.embed import Embedder
    from hippo.store import Store

# -- dates named in a query ------------------------------------------------------------

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH_OF = {m: i for i, m in enumerate(_MONTHS, 1)}
_MONTH_OF.update({m[:3]: i for i, m in enumerate(_MONTHS, 1)})
_MON = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
       r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = re.compile(r"\d{4}")


@functools.cache
def _date_patterns() -> tuple[re.Pattern[str], ...]:
    """Day-month-year, month-day-year, month-year, ISO day, ISO month; compiled on first
    use (a few ms that a query without a four-digit number never pays)."""
    return (
        re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON},?\s*(\d{{4}})\b", re.IGNORECASE),
        re.compile(rf"\b{_MON}\s+(\d{{1,2}}){_ORD},?\s*(\d{{4}})\b", re.IGNORECASE),
        re.compile(rf"\b{_MON},?\s+(\d{{4}})\b", re.IGNORECASE),
        re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
        re.compile(r"\b(\d{4})-(\d{2})\b(?!-\d)"),
    )


@dataclass(frozen=True, slots=True)
class Window:
    """A span of time a query names: [start, end), UTC."""

    start: datetime
    end: datetime

    def widened(self, days: float) -> Window:
        pad = timedelta(days=days)
        return Window(self.start - pad, self.end + pad)

    def contains(self, when: datetime) -> bool:
        return self.start <= when < self.end


def _month_num(name: str) -> int:
    return _MONTH_OF[name.lower().rstrip(".")[:3]]


def _day(year: int, month: int, day: int) -> Window | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return Window(start, start + timedelta(days=1))


def _month(year: int, month: int) -> Window | None:
    if not (1 <= month <= 12 and 1 <= year <= 9998):
        return None
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Window(start, end)


def mentioned_dates(text: str) -> list[Window]:
    """Absolute calendar days and months named in `text`, in order, without repeats.

    Understood: `7 July 2023`, `7th of July, 2023`, `July 7, 2023`, `Dec 1,2023`,
    `2023-07-07`, and months `July 2023`, `2023-07`. A month is named only when no day
    of it is named in the same phrase; an impossible day (`31 February 2023`) leaves
    just its month.
    """
    if not _YEAR.search(text):
        return []
    day_month_year, month_day_year, month_year, iso_day, iso_month = _date_patterns()
    found: list[tuple[int, Window]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], w: Window | None) -> None:
        if w is None or any(a < m.end() and m.start() < b for a, b in taken):
            return
        taken.append((m.start(), m.end()))
        found.append((m.start(), w))

    for m in day_month_year.finditer(text):
        add(m, _day(int(m[3]), _month_num(m[2]), int(m[1])))
    for m in month_day_year.finditer(text):
        add(m, _day(int(m[3]), _month_num(m[1]), int(m[2])))
    for m in iso_day.finditer(text):
        add(m, _day(int(m[1]), int(m[2]), int(m[3])))
    for m in month_year.finditer(text):
        add(m, _month(int(m[2]), _month_num(m[1])))
    for m in iso_month.finditer(text):
        add(m, _month(int(m[1]), int(m[2])))
    found.sort(key=lambda x: x[0])
    out: list[Window] = []
    for _, w in found:
        if w not in out:
            out.append(w)
    return out


def in_any(when: datetime, windows: Sequence[Window]) -> bool:
    return any(w.contains(when) for w in windows)


# -- late interaction over token vectors -----------------------------------------------

# Token matrices are cached in `embed_cache` under the model id plus this suffix. The
# int8 matrices of hippo 0.1 ("#tokens") are dropped by migration 0003_ternary_tokens.
TOKENS_SUFFIX = "#tokens-t1"
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
    from hippo.timeutil import now_iso
    from hippo.vectors import content_hash, to_blob

    if not can_encode_tokens(embedder):
        return 0
    tokens_model = embedder.model_id + TOKENS_SUFFIX
    first: dict[str, str] = {}
    for t in texts:
        first.setdefault(content_hash(t), t)
    hashes = list(first)
    have_vec = db.embed_cache.get_many(embedder.model_id, hashes)
    have_tok = db.tokens.get_many(tokens_model, hashes)
    todo = [h for h in hashes if h not in have_vec or h not in have_tok]
    if not todo:
        return 0
    pooled, mats = encode_both(embedder, [first[h] for h in todo])
    stamp = now_iso()
    with db.transaction():
        for h, v, m in zip(todo, pooled, mats):
            db.embed_cache.put_many(embedder.model_id, [(h, to_blob(v))], stamp)
            db.tokens.put(tokens_model, [(h, m.to_blob())], stamp, replace=False)
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
    from hippo.retrieve.pipeline import load_params

    if load_params(settings).late_pool > 0:
        warm_caches(db, embedder, texts)


def encode_query(db: Store, embedder: Embedder, text: str) -> tuple[bytes, TokenMatrix]:
    """A new query's float32 vector blob and token matrix from one forward pass.

    Both go to `embed_cache` under the text's hash when the database takes the write (a
    busy or read-only database still gets its answer): the vector, and the token matrix
    with its token ids masked by the query's own text (`QUERY_SUFFIX`): the ids would spell
    the query out, and a prompt is not a memory (docs/privacy.md).
    """
    from hippo.vectors import to_blob

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
    from hippo.timeutil import now_iso
    from hippo.vectors import content_hash

    stamp, h = now_iso(), content_hash(text)
    if blob is not None:
        db.embed_cache.put_many(embedder.model_id, [(h, blob)], stamp)
    db.tokens.put(embedder.model_id + QUERY_SUFFIX, [(h, _masked(mat, text).to_blob())], stamp)


def query_cached(db: Store, embedder: Embedder, text: str) -> bool:
    """Whether both the vector and the (masked) token matrix of this query are cached."""
    from hippo.vectors import content_hash

    h = content_hash(text)
    return (db.embed_cache.get(embedder.model_id, h) is not None
            and db.tokens.get(embedder.model_id + QUERY_SUFFIX, h) is not None)


def query_matrix(db: Store, embedder: Embedder, text: str) -> TokenMatrix:
    """A query's token matrix: from the cache (ids unmasked with the text itself, no
    model), else encoded now and cached masked (best effort)."""
    from hippo.vectors import content_hash

    blob = db.tokens.get(embedder.model_id + QUERY_SUFFIX, content_hash(text))
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
    from hippo.timeutil import now_iso
    from hippo.vectors import content_hash

    model = embedder.model_id + TOKENS_SUFFIX
    hashes = [content_hash(t) for t in texts]
    unique = list(dict.fromkeys(hashes))
    found: dict[str, TokenMatrix] = {}
    for h, blob in db.tokens.get_many(model, unique).items():
        with contextlib.suppress(ValueError, struct.error):  # damaged: encode again
            found[h] = TokenMatrix.from_blob(bytes(blob))
    missing = [h for h in unique if h not in found]
    if missing:
        first = dict(zip(hashes, texts))
        mats = encode_tokens(embedder, [first[h] for h in missing])
        stamp = now_iso()
        # A cache that cannot be written (busy, read-only) still leaves a result.
        with contextlib.suppress(HippoError), db.transaction():
            db.tokens.put(model, [(h, m.to_blob()) for h, m in zip(missing, mats)], stamp)
        found.update(zip(missing, mats))
    return [found[h] for h in hashes]


def pool_idf(query: TokenMatrix, docs: Sequence[TokenMatrix]) -> list[float]:
    """IDF of each query token over the candidate pool: log((P+1)/(df+0.5)), always > 0."""
    df: Counter[int] = Counter()
    for d in docs:
        df.update(set(d.ids))
    p = len(docs)
    return [math.log((p + 1) / (df.get(t, 0) + 0.5)) for t in query.ids]


def _terms(m: TokenMatrix) -> tuple[list[tuple[int, int, int]], list[float]]:
    """Per token (pos, neg, nonzero mask), and per token 1/sqrt(nonzero count)."""
    bits = [(p, n, p | n) for p, n in zip(m.pos, m.neg)]
    inv = [1.0 / math.sqrt(c) if (c := z.bit_count()) else 0.0 for _, _, z in bits]
    return bits, inv


# From this many (query token, document token) pairs MaxSim runs in numpy, and whenever
# numpy is loaded already (a new query ran the model; a warm worker): pure Python takes
# ~0.5 µs a pair, importing numpy ~150 ms. A Brain pool (90 memories of ~16 tokens, a
# 9-token query) is ~13k pairs, ~9 ms in Python; an Echo pool of ~270 transcript chunks
# of ~180 tokens ~500k pairs, ~255 ms in Python.
NUMPY_MIN_PAIRS = 300_000


def late_scores(query: TokenMatrix, docs: Sequence[TokenMatrix]) -> list[float]:
    """MaxSim per doc: the pool-IDF-weighted mean over the query's content tokens (no
    punctuation) of the best cosine to any token of the doc.

    Cosines are those of the ternary token vectors: (agreeing − disagreeing nonzero
    components) / sqrt(nonzeros of one · nonzeros of the other). Every token keeps the
    same number of components (`TERNARY_SHARE`), so the integer agreement is maximised
    first and scaled once, unless ties made a doc's counts differ. Big pools, or any pool
    once numpy is loaded, are scored by `_late_scores_numpy`: the same arithmetic, the
    same floats.
    """
    if not docs:
        return []
    query = query.content()
    if not query.ids:
        return [0.0] * len(docs)
    w = pool_idf(query, docs)
    total = sum(w) or 1.0
    pairs = len(query.ids) * sum(len(d.ids) for d in docs)
    if ("numpy" in sys.modules or pairs >= NUMPY_MIN_PAIRS) and _bitwise_count() is not None:
        return _late_scores_numpy(query, docs, w, total)
    return _late_scores_python(query, docs, w, total)


def _late_scores_python(query: TokenMatrix, docs: Sequence[TokenMatrix], w: Sequence[float],
                        total: float) -> list[float]:
    """`late_scores` with popcounts on Python ints: nothing to import."""
    qbits, qinv = _terms(query)
    qt = [(p, n, z, inv * wi) for (p, n, z), inv, wi in zip(qbits, qinv, w)]
    out: list[float] = []
    for d in docs:
        dt, dinv = _terms(d)
        if not dt:
            out.append(0.0)
            continue
        s = 0.0
        if min(dinv) == max(dinv):
            scale = dinv[0]
            for qp, qn, qz, qw in qt:
                best = max([2 * ((qp & dp) | (qn & dn)).bit_count() - (qz & dz).bit_count()
                            for dp, dn, dz in dt])
                s += qw * best * scale
        else:
            for qp, qn, qz, qw in qt:
                scaled = max([(2 * ((qp & dp) | (qn & dn)).bit_count() - (qz & dz).bit_count()) * di
                              for (dp, dn, dz), di in zip(dt, dinv)])
                s += qw * scaled
        out.append(s / total)
    return out


@functools.cache
def _bitwise_count() -> Any:
    """numpy's popcount ufunc (numpy 2.0 and later), else None."""
    import numpy as np

    return getattr(np, "bitwise_count", None)


def _planes(planes: bytes, tokens: int, width: int) -> np.ndarray:
    """Bit planes as a (tokens, 2, words) array: uint64 words when a plane is a whole
    number of them (384 dimensions: 6), else bytes."""
    import numpy as np

    dtype = "<u8" if width % 8 == 0 else "u1"
    return np.frombuffer(planes, dtype=dtype).reshape(tokens, 2, -1)


def _late_scores_numpy(query: TokenMatrix, docs: Sequence[TokenMatrix], w: Sequence[float],
                       total: float) -> list[float]:
    """`late_scores` over every document token at once, per query token: the popcounts of
    the pure-Python path on the stored planes (no parsing), each best match scaled by its
    token's 1/sqrt(nonzeros) and taken per document with `maximum.reduceat`."""
    import numpy as np

    popcount = _bitwise_count()
    sizes = [len(d.ids) for d in docs]
    have = [i for i, n in enumerate(sizes) if n]
    out = [0.0] * len(docs)
    if not have:
        return out
    width = query.width
    d = _planes(b"".join(doc.planes for doc in docs), sum(sizes), width)
    dp, dn = d[:, 0, :], d[:, 1, :]
    dz = dp | dn
    dnz = popcount(dz).sum(axis=1, dtype=np.int64)
    dinv = np.divide(1.0, np.sqrt(dnz), out=np.zeros(len(dnz)), where=dnz > 0)
    starts = np.cumsum([0, *sizes])[:-1][have]
    # The pure-Python path's arithmetic, operation for operation, so both give the same
    # floats: a new query (numpy loaded) and its repeat (no numpy) rank alike.
    scale = np.maximum.reduceat(dinv, starts)
    uniform = np.minimum.reduceat(dinv, starts) == scale
    _, qinv = _terms(query)
    q = _planes(query.planes, len(query.ids), width)
    sums = np.zeros(len(have))
    for (qp, qn), inv, wi in zip(q, qinv, w):
        agree = popcount((dp & qp) | (dn & qn)).sum(axis=1, dtype=np.int64)
        both = popcount(dz & (qp | qn)).sum(axis=1, dtype=np.int64)
        dots = 2 * agree - both
        qw = inv * wi
        sums += np.where(uniform, (qw * np.maximum.reduceat(dots, starts)) * scale,
                         qw * np.maximum.reduceat(dots * dinv, starts))
    for i, value in zip(have, sums / total):
        out[i] = float(value)
    return out


def neighbour_support(relevance: Mapping[int, float], neighbours: Mapping[int, Sequence[int]],
                      weight: float) -> dict[int, float]:
    """Each item's relevance plus `weight` times the best relevance among its neighbours.

    For transcripts: a chunk next to a relevant chunk of the same session (the question
    before an answer, the answer after a question) is more likely relevant itself, and
    an answer that shares no word with the query is found through the question it
    answers. Neighbours without a relevance count as 0.
    """
    out: dict[int, float] = {}
    for item, rel in relevance.items():
        near = [relevance.get(n, 0.0) for n in neighbours.get(item, ())]
        out[item] = rel + weight * max(near, default=0.0)
    return out


def rescale(scores: Sequence[float]) -> list[float]:
    """Min-max to [0, 1] (all 1.0 when the scores are equal)."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]
