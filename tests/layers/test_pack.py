"""Budget packing, and `hippo.embed.tokens.count` (pure Python for ASCII) against the shipped
tokenizer."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.embed import tokens
from hippo.embed.wordpiece import vocab
from hippo.layers.pack import bullet, lower_bound, pack

ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=80)
VOCAB = sorted(w for w in vocab() if w and w.isascii())
WORDY = st.lists(st.sampled_from(VOCAB), max_size=25).map(" ".join)


def rust(text: str) -> int:
    """The Rust tokenizer's own count."""
    return len(tokens._tokenizer().encode(text, add_special_tokens=False).ids)


SPECIALS = st.lists(st.sampled_from(["[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]", "[cls]",
                                     "x", " ", "-", "\x1c", "\x7f", "a" * 101, "[unused1]"]),
                    max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(ASCII, WORDY, SPECIALS))
def test_wordpiece_twin_equals_the_tokenizer(text: str) -> None:
    assert tokens.count_ascii(text) == rust(text) == tokens.count(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_count_is_the_tokenizer_for_any_text(text: str) -> None:
    assert tokens.count(text) == rust(text)
    assert (tokens.count_ascii(text) is None) == (not text.isascii())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(string.printable + "\x00\x1c\x1f\x7f\u200b\ufeffé中🙂"),
               max_size=60))
def test_lower_bound_never_exceeds_the_count(text: str) -> None:
    line = bullet({"text": text})
    assert lower_bound(line) <= rust(line)


def test_pack_skips_what_does_not_fit_and_keeps_order() -> None:
    recs = [{"id": i, "text": t} for i, t in enumerate(["a b c", "d e f g h i j k", "l", "m n"])]
    words = lambda s: len(s.split())  # a transparent fake tokenizer
    out = pack("rule_floor", "R", recs, 9, count=words)
    # heading 2 + "a b c" 4 = 6; the 9-word one is skipped; "l" 2 = 8; "m n" 3 would be 11.
    assert [r["id"] for r in out.included] == [0, 2]
    assert [r["id"] for r in out.omitted] == [1, 3]
    assert out.text == "## R\n- a b c\n- l\n" and out.tokens == 8
    assert out.summary() == {"tokens": 8, "budget": 9, "included": 2, "omitted": 2,
                             "omitted_ids": [1, 3], "unverified": 0, "unverified_ids": []}
    assert pack("g", "R", recs, 2, count=words).text == ""  # a heading alone is not printed
