"""The literal guard: two statements close in meaning are still different statements when
their numbers or identifiers conflict, or when only one of them is negated.

Sentence embeddings blur exactly these differences (MiniLM puts "use port 5432" and
"use port 5433" at cosine 0.93, "run the linter" and "do not run the linter" at 0.98),
so consolidation asks this guard before it merges a pair. Pure functions, no I/O.
"""

from __future__ import annotations

import re

# Split on whitespace and bracketing/quoting punctuation; keep `.`, `/`, `-`, `_`, `:`,
# `=`, `@` inside a token so paths, flags, hosts and versions stay whole.
_TOKEN = re.compile(r"[^\s,;()\[\]{}<>\"'`]+")
_EDGE = ".,:;!?"
_CODE = re.compile(r"\w[./\\_:=@]\w|^-{1,2}\w|[a-z][A-Z]|\w-\d|\d")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
NUMBER_WORDS = frozenset({
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million",
    "billion", "once", "twice", "first", "second", "third",
})
NEGATORS = frozenset({
    "not", "no", "never", "none", "nothing", "nor", "neither", "without", "cannot", "avoid",
})


def literals(text: str) -> frozenset[str]:
    """Numbers, versions, paths, flags, identifiers and acronyms in a statement (case-folded)."""
    out = set()
    for raw in _TOKEN.findall(text):
        tok = raw.strip(_EDGE)
        if not tok:
            continue
        low = tok.casefold()
        if (_CODE.search(tok) or low in NUMBER_WORDS
                or (len(tok) > 1 and tok.isupper() and any(c.isalpha() for c in tok))):
            out.add(low)
    return frozenset(out)


def words(text: str) -> frozenset[str]:
    """Every token of a statement as `literals` splits it, case-folded."""
    return frozenset(t for raw in _TOKEN.findall(text) if (t := raw.strip(_EDGE).casefold()))


def negated(text: str) -> bool:
    """Whether the statement says not/never/don't/... anywhere."""
    for word in _WORD.findall(text.casefold()):
        if word in NEGATORS or word.endswith(("n't", "n’t")):
            return True
    return False


def conflict(a: str, b: str) -> str | None:
    """Why `a` and `b` must not merge, or None when nothing literal tells them apart.

    A literal present on one side only is allowed (one statement is more complete);
    literals missing on both sides are a substitution (5432 vs 5433) and block the merge.
    """
    la, lb = literals(a), literals(b)
    only_a, only_b = la - lb, lb - la
    if only_a and only_b:
        return f"literals differ: {', '.join(sorted(only_a))} / {', '.join(sorted(only_b))}"
    if negated(a) != negated(b):
        return "only one statement is negated"
    return None
