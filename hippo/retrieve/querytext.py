"""What both searches (Brain and Echo) do to a user's query before anything reads it."""

from __future__ import annotations

import re

from hippo.retrieve.params import MAX_QUERY_CHARS

# Python reads a byte that is not UTF-8 (in argv, or stdin with `-`) as a lone surrogate.
_UNDECODABLE = re.compile("[\ud800-\udfff]")


def prepare(query: str) -> tuple[str, list[str]]:
    """(the text to search for, what was changed, as degradations to report).

    An undecodable byte becomes a space: neither the tokenizer nor SQLite can take it, and
    it means nothing to match, while the rest of the query still does. A query longer
    than MAX_QUERY_CHARS is cut.
    """
    notes: list[str] = []
    text, bad = _UNDECODABLE.subn(" ", query)
    if bad:
        notes.append(f"query: {bad} byte{'s' * (bad != 1)} not valid UTF-8, read as "
                     f"space{'s' * (bad != 1)}")
    text = text.strip()
    if len(text) > MAX_QUERY_CHARS:
        notes.append(f"query cut to its first {MAX_QUERY_CHARS} of {len(text)} characters")
        text = text[:MAX_QUERY_CHARS].strip()
    return text, notes
