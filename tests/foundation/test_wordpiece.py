"""The pure-Python WordPiece tokenizer gives the shipped `tokenizers` tokenizer's tokens.

`hippo.embed.wordpiece` spares a new query ~70 ms of loading the Rust tokenizer; it is
only allowed to, because on every text it accepts it is token for token and offset for
offset the same: every accepted character alone and in context, real transcripts and
LoCoMo conversations, the hostile query corpus, and random strings.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.embed import wordpiece
from hippo.embed.local import MAX_TOKENS, LocalEmbedder, tokenizer

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
SAFE = [chr(c) for c in [*range(0x250), *range(0x2000, 0x2070)]]


@functools.cache
def rust_tokenizer() -> object:
    return tokenizer()


@pytest.fixture
def rust() -> object:
    return rust_tokenizer()


def same(rust: object, text: str) -> None:
    want = rust.encode(text)  # type: ignore[attr-defined]
    got = wordpiece.encode(text, MAX_TOKENS)
    assert (got.ids, got.offsets) == (want.ids, want.offsets), (text, want.tokens)


def test_every_accepted_character_alone_and_in_words(rust: object) -> None:
    for c in SAFE:
        assert wordpiece.usable(c)
        for text in (c, f"a{c}b", f"a {c} b", f"{c}{c}x", f"[MASK]{c}[SEP]"):
            same(rust, text)


def test_special_tokens_long_words_and_truncation(rust: object) -> None:
    for text in ("foo [MASK] bar[CLS]x", "a[SEP]", "[UNK]", "[PAD][PAD]", "[mask] [Mask",
                 "x" * 100, "x" * 101, "ab" * 400, " ".join(["tokenization"] * 300),
                 "İstanbul Ünïcödé ﬁ ½ x² ΟΔΟΣ", "src/app.py --force ERR_SSL_PROTOCOL_ERROR",
                 "“smart” ‘quotes’ — dashes… and\u00a0nbsp\u2009thin", "", " \t\r\n "):
        if wordpiece.usable(text):
            same(rust, text)
    assert len(wordpiece.encode(" ".join(["word"] * 500), MAX_TOKENS).ids) == MAX_TOKENS


def texts_of_transcripts() -> Iterator[str]:
    roots = [REPO / "tests" / "ingest" / "fixtures", SHARED / "transcripts"]
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in {".jsonl", ".json", ".md", ".txt"}:
                for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                    yield line[:3000]


def test_real_transcripts_and_hostile_queries(rust: object) -> None:
    texts = list(texts_of_transcripts())
    texts += [q for q in json.loads((REPO / "tests" / "fuzz_corpus" / "queries.json")
                                    .read_text(encoding="utf-8")) if isinstance(q, str)]
    locomo = SHARED / "locomo" / "locomo10-dev.json"
    if locomo.exists():
        for conv in json.loads(locomo.read_text(encoding="utf-8")):
            texts += [qa["question"] for qa in conv["qa"]]
            texts += [turn["text"] for key, session in conv["conversation"].items()
                      if key.startswith("session_") and isinstance(session, list)
                      for turn in session]
    checked = 0
    for text in texts:
        if wordpiece.usable(text):
            same(rust, text)
            checked += 1
    assert checked > 30  # the in-repo fixtures and queries alone give 43


@settings(max_examples=300)
@given(st.lists(st.sampled_from([*SAFE, "[MASK]", "[SEP]", "[UNK", " ", " ", "e\u0301"]),
                max_size=60).map("".join))
def test_random_text(text: str) -> None:
    same(rust_tokenizer(), text)


def test_other_scripts_go_to_the_rust_tokenizer() -> None:
    assert wordpiece.usable("plain ascii") and wordpiece.usable("café — “ok”")
    for text in ("你好", "emoji 🚀", "\u0890", "\U0002b820", "Ελληνικά"):
        assert not wordpiece.usable(text)


def test_a_new_query_does_not_load_the_rust_tokenizer() -> None:
    emb = LocalEmbedder()
    pooled, [(ids, _, words)] = emb.forward(["why was the image resizer changed?"])
    assert "_tokenizer" not in emb.__dict__
    assert ids == tokenizer().encode("why was the image resizer changed?").ids[1:-1]
    assert words[-1] is False  # "?"
    rust_path = LocalEmbedder()
    rust_path._tokenizer  # noqa: B018 - loaded: the same text now goes through tokenizers
    again, _ = rust_path.forward(["why was the image resizer changed?"])
    assert (pooled == again).all()
