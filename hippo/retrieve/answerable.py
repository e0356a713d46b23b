"""Whether anything stored can answer a question: the words it is about that the store never saw.

Search always brings its best five, and a question about a thing never discussed still
finds memories about its other words ("What Redis version is the ecommerce-api on?"
meets every memory naming the ecommerce-api, scoring 0.9), so no score floor can tell
it from an answerable one. What can: the question's content words (stopwords and
words with digits left out, each word of a phrase apart) looked up in the scope's
full-text indexes, the Brain's (active memories) and Echo's (the transcripts). A word
that neither holds was never said in this scope, so nothing stored states it. The
question goes unanswered (the prompt recipe and the prompt hook stay quiet) when

- a word never said is a name: written with a capital inside a sentence of the
  question (`Kubernetes`, `GitHub`, `AWS`), or
- most of its words were never said (more than `UNSEEN_SHARE` of them).

Only a question is judged (it ends with "?" or opens with a question word): a prompt that
asks for work ("Add Redis caching to the checkout") may be about something new and still
be helped by what is stored about the rest. Ordinary words a conversation may just not have used ("developer", "library",
"preferred") count only by their share, so a question in other words than the
memory's is still answered. Offline, deterministic, no model run: two index lookups a
word, through `store.lexical` (both backends). docs/search.md gives the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store import Store
    from hippo.store.filters import EchoFilters, MemoryFilter

# More than this share of a question's content words never said: nothing answers it.
UNSEEN_SHARE = 0.6
# What ends a sentence: a capital after one starts a sentence, it names nothing.
SENTENCE_ENDS = ".!?:;\"'([{\n-—–"
# Words shorter than this are left out (`UI`, `id`, `vs`): too short to name a topic.
MIN_CHARS = 3


@dataclass(frozen=True, slots=True)
class Verdict:
    """The question's content words, those the scope never saw, and why it goes
    unanswered ("" when it may be answered)."""

    words: tuple[str, ...]
    unseen: tuple[str, ...]
    reason: str

    @property
    def quiet(self) -> bool:
        return bool(self.reason)


def content_words(question: str) -> list[str]:
    """The words a question is about, in order, once each (case of the first kept):
    its search terms without stopwords, each word of a phrase apart; words with digits,
    months (a date is matched by time, not words: `hippo.retrieve.dates`) and words
    under `MIN_CHARS` left out."""
    from hippo.retrieve.dates import is_month
    from hippo.retrieve.ftsquery import DEFAULT_STOPWORDS, match_terms

    terms = match_terms(question, "or")
    seen: set[str] = set()
    out: list[str] = []
    for term in terms.words if terms else ():
        for word in term.split(" "):
            key = word.lower()
            if (len(word) < MIN_CHARS or key in DEFAULT_STOPWORDS or key in seen
                    or any(c.isdigit() for c in word) or is_month(word)):
                continue
            seen.add(key)
            out.append(word)
    return out


def is_name(word: str, question: str) -> bool:
    """True when `word` names a thing: written with a capital inside a sentence of the
    question (`Redis`, `AWS`, `GitHub`), not as a sentence's first word."""
    import re

    if word == word.lower():
        return False
    for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", question):
        before = question[:m.start()].rstrip()
        if before and before[-1] not in SENTENCE_ENDS:
            return True
    return False


def judge(words: Sequence[str], unseen: Sequence[str], question: str,
          share: float = UNSEEN_SHARE) -> Verdict:
    """The verdict on a question from its content words and those never said (pure)."""
    names = [w for w in unseen if is_name(w, question)]
    if names:
        reason = f"nothing stored mentions {', '.join(names)}"
    elif words and len(unseen) / len(words) > share:
        reason = (f"nothing stored mentions {len(unseen)} of the question's "
                  f"{len(words)} words ({', '.join(unseen)})")
    else:
        reason = ""
    return Verdict(tuple(words), tuple(unseen), reason)


def said(db: Store, word: str, brain: MemoryFilter, echo: EchoFilters) -> bool:
    """True when a memory in `brain`'s scope or a transcript chunk in `echo`'s holds
    `word` (as the full-text index matches it: stemmed, any case). An index that cannot
    answer counts as holding it: the gate never silences a search on a broken index."""
    from hippo.store.lexical import IndexUnavailable, Terms

    terms = Terms((word,), "and")
    try:
        return bool(db.lexical.search(terms, 1, brain)
                    or db.lexical.search_chunks(terms, 1, echo))
    except IndexUnavailable:
        return True


_ASKS = frozenset(["what", "which", "who", "whom", "whose", "where", "when", "why", "how",
                   "is", "are", "was", "were", "do", "does", "did", "can", "could", "should",
                   "would", "will", "has", "have", "shall", "may"])


def asks(text: str) -> bool:
    """`text` is a question: it ends with "?" or its first word asks (what, how, is, ...)."""
    words = text.strip().split(maxsplit=1)
    return text.rstrip().endswith("?") or (bool(words) and words[0].lower().strip(",")
                                             in _ASKS)


def verdict(db: Store, question: str, projects: Sequence[str | None] | None) -> Verdict:
    """Whether what `projects` hold (None: every project; None inside it: global
    memories) can answer `question`: the Brain's active memories and Echo's chunks of
    those projects are asked for each of its content words."""
    from hippo.store.filters import EchoFilters, MemoryFilter

    if not asks(question):
        return Verdict((), (), "")
    scope = None if projects is None else tuple(dict.fromkeys(projects))
    brain = MemoryFilter.search(projects=scope)
    echo = EchoFilters(projects=None if scope is None else list(scope))
    words = content_words(question)
    unseen = [w for w in words if not said(db, w, brain, echo)]
    return judge(words, unseen, question)
