"""Turn a user's raw query text into the terms of a lexical query (`Terms`).

Raw text must never reach an index as syntax (in FTS5 `-`, `:`, `*`, `^`, quotes,
parentheses and the words AND/OR/NOT/NEAR are all operators). We tokenise the text the
way the unicode61 tokenizer does (letters, digits and marks form tokens; everything else
separates) and hand the store only words; each backend quotes them in its own syntax
(SQLite: `hippo.store.sqlite.lexical.fts5_match`).

Fallback policy for the pipeline (the BM25 retriever):

1. Run ``match_terms(q, "and")``: every term must occur (best precision).
2. If it is None, or finds fewer than ``SearchParams.fts_and_min_hits`` rows, also run
   ``match_terms(q, "or")`` (any term; stopwords dropped) and append its hits that
   the AND query did not return, keeping the AND hits first, up to
   ``candidates_per_retriever``. Skip step 2 when both find the same rows.
3. Both None: no lexical retriever for this query (vector candidates only).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from hippo.store.lexical import Terms

# Compact English stopword list: words that carry no topic in an agent's question.
# Hint words (task, next, due, todo, ...) are deliberately absent.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers herself him himself
    his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some
    such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves
    """
DEFAULT_STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


@lru_cache(maxsize=4096)
def _is_token_char(ch: str) -> bool:
    """True when unicode61 (remove_diacritics) would keep `ch` inside a token.

    Letters, numbers, marks, private-use and unassigned code points are token
    characters. Treating a few more characters as token characters than FTS5 does is
    harmless: inside a quoted phrase FTS5 splits them itself. Only rare newer symbols
    and emoji (which FTS5 keeps as tokens) are split here, costing recall, never validity.
    """
    if ch.isascii():
        return ch.isalnum()
    category = unicodedata.category(ch)
    return category[0] in "LNM" or category in ("Co", "Cn")


def _is_mark(ch: str) -> bool:
    return not ch.isascii() and unicodedata.category(ch)[0] == "M"


def tokens(text: str) -> list[str]:
    """Split `text` into unicode61-style tokens, case kept (FTS5 folds case itself)."""
    out: list[str] = []
    start = -1
    for i, ch in enumerate(text):
        if _is_token_char(ch):
            if start < 0:
                start = i
        elif start >= 0:
            out.append(text[start:i])
            start = -1
    if start >= 0:
        out.append(text[start:])
    # A run of bare combining marks is no word (and FTS5 may see no token in it).
    return [t for t in out if not all(_is_mark(c) for c in t)]


# English clitics after an apostrophe: `Caroline's`, `we're`, `they've`, `I'll`, `I'd`,
# `I'm`, `don't`. unicode61 splits them off as tokens of their own ("caroline" "s").
_CLITICS = frozenset({"s", "re", "ve", "ll", "d", "m", "t"})
_APOSTROPHES = "'\u2019"
_NEGATION = "not"


def _strip_clitic(chunk: str, parts: list[str]) -> list[str]:
    """`parts` of `chunk` without a final English clitic; `n't` becomes "not".

    Left as a phrase, `Caroline's` would match only where the possessive itself is
    written, and `don't` would demand "don t" in every hit. The possessive's word is the
    term; a negation is the stopword "not".
    """
    if len(parts) < 2 or parts[-1].lower() not in _CLITICS:
        return parts
    end = chunk.rfind(parts[-1])
    if end < 1 or chunk[end - 1] not in _APOSTROPHES or not chunk[:end - 1].endswith(parts[-2]):
        return parts
    if parts[-1].lower() == "t":
        return [_NEGATION] if len(parts) == 2 and parts[0][-1:].lower() == "n" else parts
    return parts[:-1]


def terms(query: str, *, keep_clitics: bool = False) -> list[str]:
    """Search terms of `query`: single tokens, or identifier-like runs as one phrase.

    A whitespace-free chunk that splits into several tokens (`src/app.py`,
    `ERR_SSL_PROTOCOL_ERROR`, `--no-verify`, `key:value`) becomes one phrase of its
    tokens joined by spaces, so it matches only where those tokens are adjacent. Unless
    `keep_clitics` is set, an English clitic is no part of the term: `Caroline's` is
    `Caroline`, `don't` is `not`.
    Duplicates (ignoring case) are dropped; order of first appearance is kept.
    """
    seen: set[str] = set()
    out: list[str] = []
    for chunk in query.split():
        parts = tokens(chunk) if keep_clitics else _strip_clitic(chunk, tokens(chunk))
        if not parts:
            continue
        term = " ".join(parts)
        key = term.lower()
        if key not in seen:
            seen.add(key)
            out.append(term)
    return out


_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _camel_phrase(term: str) -> str | None:
    """A camelCase word as the phrase of its parts (`SessionLive` -> `Session Live`), or
    None when it has one part (or is a phrase already)."""
    if " " in term or not term.isascii() or not term.isalpha():
        return None
    parts = _CAMEL.findall(term)
    ok = len(parts) > 1 and "".join(parts) == term and min(map(len, parts)) > 1
    return " ".join(parts) if ok else None


def match_terms(
    query: str,
    mode: Literal["and", "or"] = "and",
    *,
    stopwords: Collection[str] = DEFAULT_STOPWORDS,
    max_terms: int = 64,
) -> Terms | None:
    """The lexical query for `query` (`hippo.store.lexical.Terms`), or None when no
    usable term remains.

    Stopwords (single-token terms only; phrases keep every token) are dropped in both
    modes, except that "and" keeps them, as written, when the query has nothing else
    (`the who`, `I'm`).
    At most `max_terms` terms are used, and a phrase keeps at most `max_terms` tokens.
    "and" finds rows with every term; "or" rows with any.
    """
    if mode not in ("and", "or"):
        raise ValueError(f"mode must be 'and' or 'or', not {mode!r}")
    if max_terms < 1:
        raise ValueError("max_terms must be at least 1")
    kept = [t for t in terms(query) if " " in t or t.lower() not in stopwords]
    if not kept and mode == "and":
        kept = terms(query, keep_clitics=True)  # `the who`, `don't`: the words as written
    if not kept:
        return None
    if mode == "or":  # `SessionLive` also finds `session_live.ex` and "the session live"
        seen = {t.lower() for t in kept}
        kept += [p for t in kept if (p := _camel_phrase(t)) and p.lower() not in seen]
    from hippo.store.lexical import Terms

    return Terms(tuple(" ".join(t.split(" ")[:max_terms]) for t in kept[:max_terms]), mode)
