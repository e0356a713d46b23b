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

A question that asks for a value of a kind a text shows by its form (a URL or domain, a
version, a port: "What is the production URL of the api?") is unanswered, too, when none
of the memories it would print holds one (`asks_value`, `holds_value`): every memory about
the api's URL scores well, and none gives it. So is one that asks for a member of a small,
closed class of well-known things (a browser, an operating system, a cloud provider, an
editor, a CI service: "What browsers does the app support?") when none of them names one
(`Chrome`, `macOS`, `AWS`, `Neovim`, `GitHub Actions`, or "all modern browsers").

Only a question is judged (it ends with "?" or opens with a question word): a prompt that
asks for work ("Add Redis caching to the checkout") may be about something new and still
be helped by what is stored about the rest. Ordinary words a conversation may just not have used ("developer", "library",
"preferred") count only by their share, so a question in other words than the
memory's is still answered. Offline, deterministic, no model run: two index lookups a
word, through `store.lexical` (both backends). docs/search.md gives the figures.
"""

from __future__ import annotations

import re
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


# The value kinds a question may ask for, each by the nouns that name it, and the form
# of a value of that kind in a text. A URL: a scheme, `www.`, localhost, an IPv4
# address, or a host under a common top-level domain (`Next.js` is not one).
_TLDS = ("com|org|net|io|dev|app|co|ai|cloud|sh|me|xyz|tech|site|info|biz|us|uk|de|fr|"
         "eu|ca|au|in|jp|nl|se|ch|internal|local|test|example")
_HOST = (r"[a-z][a-z0-9+.-]*://[^\s/]|\bwww\.|\blocalhost\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|"
         rf"\b(?:[a-z0-9-]+\.)+(?:{_TLDS})\b(?![.\w])")
# A path from the root, two segments or more (`/api/review-context/:token`).
_PATH = r"(?<![\w.~])/[\w.:{}-]+/[\w.:{}/-]*"
# Words that put a URL in an environment: its host is what is asked.
_PLACES = frozenset(["production", "prod", "staging", "live", "public", "deployed"])
_VALUES: dict[str, tuple[frozenset[str], re.Pattern[str]]] = {
    "a domain": (frozenset(["domain", "domains", "hostname", "hostnames", "subdomain",
                            "website"]), re.compile(_HOST, re.IGNORECASE)),
    "a URL": (frozenset(["url", "urls"]), re.compile(f"{_HOST}|{_PATH}", re.IGNORECASE)),
    # 3.12, v2, a name and its number (`Node 20`, `Next.js 15`), "version 4"
    "a version": (frozenset(["version", "versions"]),
                  re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b|\bv\d+\b|"
                             r"\b[A-Z][\w.+-]*\s+v?\d+\b|\b[Vv]ersion\s+v?\d")),
    "a port": (frozenset(["port", "ports"]),
               re.compile(r"\bport\s*:?\s*\d{2,5}\b|:\d{2,5}\b", re.IGNORECASE)),
    # A member of a small, closed class of well-known things a developer works with: the
    # answer names one (a browser, an OS, a cloud, an editor, a CI service), or says all.
    "a browser": (frozenset(["browser", "browsers"]), re.compile(
        r"\b(?:Chrome|Chromium|Firefox|Safari|Edge|Opera|Brave|Vivaldi|Internet Explorer|IE ?\d+|"
        r"Samsung Internet)\b|\b(?i:chromium|firefox|webkit|browserslist|(?:modern|evergreen|"
        r"major|all|every|desktop|mobile) browsers)\b")),
    "an operating system": (frozenset(["os", "oses", "operating"]), re.compile(
        r"\b(?:Linux|macOS|MacOS|Mac OS|OS X|Windows|Ubuntu|Debian|Fedora|CentOS|RHEL|Alpine|"
        r"WSL2?|iOS|Android|FreeBSD|NixOS)\b")),
    "a cloud provider": (frozenset(["cloud", "hosting"]), re.compile(
        r"\b(?:AWS|Amazon Web Services|GCP|Google Cloud|Azure|DigitalOcean|Heroku|Vercel|"
        r"Netlify|Fly\.io|Railway|Linode|Hetzner|Cloudflare|OVH|Oracle Cloud|IBM Cloud|EC2|ECS|"
        r"EKS|GKE|AKS|Cloud Run|App Engine)\b|\b(?i:self-hosted|on-prem(?:ise)?s?|bare metal)\b")),
    "an editor": (frozenset(["editor", "editors", "ide", "ides"]), re.compile(
        r"\b(?:VS ?Code|Visual Studio|Vim|Neovim|nvim|Emacs|JetBrains|IntelliJ|PyCharm|WebStorm|"
        r"GoLand|RubyMine|CLion|Sublime(?: Text)?|Zed|Cursor|Helix|Xcode|Android Studio|"
        r"Eclipse|NetBeans)\b")),
    "a CI service": (frozenset(["ci"]), re.compile(
        r"\b(?:GitHub Actions|GitLab CI|CircleCI|Travis(?: CI)?|Jenkins|Buildkite|"
        r"Azure Pipelines|Bitbucket Pipelines|TeamCity|Drone CI|Woodpecker)\b|"
        r"\.github/workflows|\.gitlab-ci\.yml")),
}
# The classes above a question names only as their own head noun: "browser" in "What browser
# extension …", "cloud" in "Which cloud storage bucket …" modify another noun.
_CLASSES = frozenset(["a browser", "an operating system", "a cloud provider", "an editor",
                      "a CI service"])
_MODIFIED = frozenset(["library", "libraries", "component", "components", "package", "packages",
                       "plugin", "plugins", "extension", "extensions", "widget", "widgets",
                       "framework", "frameworks", "api", "apis", "sdk", "sdks", "module",
                       "modules", "tool", "tools", "tab", "tabs", "window", "windows",
                       "storage", "cache", "console", "event", "events", "test", "tests",
                       "testing", "account", "accounts", "region", "regions", "function",
                       "functions", "bucket", "buckets", "config", "configuration", "settings",
                       "theme", "themes", "variable", "variables", "script", "scripts", "job",
                       "jobs", "step", "steps", "file", "files", "cost", "costs", "credentials",
                       "history", "state", "session", "sessions", "image", "images", "level"])
# What may stand between a question word and the noun phrase it asks for, and what ends
# that phrase (a verb or a preposition: "What port does ...", "What is the URL for ...").
_LEAD = frozenset(["s", "is", "are", "was", "were", "the", "a", "an", "our", "my", "your", "its",
                   "their", "this", "that", "exact", "current"])
_PHRASE_ENDS = frozenset(["do", "does", "did", "is", "are", "was", "were", "be", "been",
                          "being", "has", "have", "had", "can", "could", "should", "will",
                          "would", "for", "of", "in", "on", "at", "to", "from", "by", "with",
                          "that", "which", "we", "i", "you", "they", "it"])


def asks_value(question: str) -> str:
    """The kind of value `question` asks for ("a domain", "a URL", "a version", "a
    port"), or "" when it asks for none: a "what" or "which" question whose noun phrase
    (after "is the") names the kind ("What Redis version is used?", "What URL does the
    plugin call?"; not "How does the app hide the backend URL?"). A domain, a host name,
    or the URL of a place (production, staging, public) asks for a host; a URL alone
    takes a path from the root too (`/api/v1/orders`)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9]+(?:[.'-][A-Za-z0-9]+)*", question)]
    if not words or words[0] not in ("what", "which", "what's", "whats"):
        return ""
    phrase: list[str] = []
    for w in words[1:]:
        if not phrase and w in _LEAD:
            continue
        if w in _PHRASE_ENDS:
            break
        phrase.append(w)
    for kind, (nouns, _) in _VALUES.items():
        if kind in _CLASSES:
            heads = [k for k, w in enumerate(phrase) if w in nouns
                     and (k + 1 == len(phrase) or phrase[k + 1] not in _MODIFIED)]
            if heads:
                return kind
        elif nouns.intersection(phrase):
            # a production (staging, public) URL is its host: a path is not one
            return "a domain" if kind == "a URL" and _PLACES.intersection(phrase) else kind
    return ""


def holds_value(kind: str, text: str) -> bool:
    """True when `text` holds a value of `kind` (`asks_value`'s) by its form."""
    return _VALUES[kind][1].search(text) is not None


def verdict(db: Store, question: str, projects: Sequence[str | None] | None,
            printed: Sequence[str] = ()) -> Verdict:
    """Whether what `projects` hold (None: every project; None inside it: global
    memories) can answer `question`: the Brain's active memories and Echo's chunks of
    those projects are asked for each of its content words, and the texts of the
    memories the answer would print (`printed`) for the value the question asks for."""
    from hippo.store.filters import EchoFilters, MemoryFilter

    if not asks(question):
        return Verdict((), (), "")
    scope = None if projects is None else tuple(dict.fromkeys(projects))
    brain = MemoryFilter.search(projects=scope)
    echo = EchoFilters(projects=None if scope is None else list(scope))
    words = content_words(question)
    unseen = [w for w in words if not said(db, w, brain, echo)]
    found = judge(words, unseen, question)
    kind = asks_value(question) if printed and not found.quiet else ""
    if kind and not any(holds_value(kind, t) for t in printed):
        return Verdict(found.words, found.unseen,
                       f"the question asks for {kind} and no memory found gives one")
    return found
