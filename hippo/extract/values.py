"""A named thing given a new value: which older memories a statement of change overturns.

A statement of change says, in one of a few fixed forms, that a thing's value is no longer
what it was:

- "switched / moved / migrated / changed from X to Y", "replaced X with Y", "Y replaced X",
  "use (prefer, chose, went with) Y instead of X": the old value X is named (never a word
  like "my", "it", "the usual": "playing strategy games instead of my usual ones" names
  no value);
- "S is now V", "S now defaults to V", "S changed to V": the subject S is named, the old value
  is whatever an older statement of S gave it.

An older memory is about the same thing only when it names the old value X (a whole token)
and shares another salient word with the statement of change (what X is for), or, for the
second form, names every content word of the subject S ("auth service": both words, so
the payment service's port is not the auth service's) and a value of the same shape (a
number, a version, a port) that is not V. Two ports of two services, two libraries of two
roles, share a word but not the subject: they are not merged (`hippo.extract.closing.salient`
says which words count). What it overturns is superseded when a machine wrote it, and
becomes a conflict for a person when a person did (`hippo.memory.conflicts`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hippo.extract.closing import salient
from hippo.extract.statements import content_words

_I = re.IGNORECASE
# A value as statements name it: `quoted`, or one name-shaped word (a library, a flag, a path,
# a version), or a number with its unit.
_NAME = r"(?:`[^`]{1,80}`|[\w@./:+-]*[A-Za-z0-9][\w@./:+-]*)"
_FROM_TO = re.compile(rf"\b(?:switch(?:ed)?|mov(?:ed|e)|migrat(?:ed|e)|chang(?:ed|e)|went)"
                      rf"\s+(?:\w+\s+){{0,3}}?from\s+(?P<old>{_NAME})\s+to\s+(?P<new>{_NAME})", _I)
_REPLACED_WITH = re.compile(rf"\breplac(?:ed|e|ing)\s+(?P<old>{_NAME})\s+(?:with|by)\s+"
                            rf"(?P<new>{_NAME})", _I)
_REPLACES = re.compile(rf"(?P<new>{_NAME})\s+(?:now\s+)?(?:replaced|replaces|supersedes|"
                       rf"superseded)\s+(?P<old>{_NAME})", _I)
_INSTEAD = re.compile(rf"\b(?:use[sd]?|using|prefer(?:s|red)?|chose|choose|picked|pick|went\s+with|"
                      rf"go\s+with)\s+(?P<new>{_NAME})\s+instead\s+of\s+(?P<old>{_NAME})", _I)
_IS_NOW = re.compile(rf"^(?P<subject>.{{3,80}}?)\s+(?:is|are)\s+now\s+(?:set\s+to\s+|on\s+|at\s+|in\s+)?"
                     rf"(?:(?:port|version|v)\s+)?(?P<new>{_NAME})|^(?P<subject2>.{{3,80}}?)\s+(?:now\s+"
                     rf"defaults\s+to|changed\s+to|was\s+changed\s+to)\s+(?P<new2>{_NAME})", _I)
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
# Words that are never a value: what "instead of my usual games" or "from it to them" name.
_STOP = frozenset([
    "the", "a", "an", "our", "its", "their", "this", "that", "these", "those", "default", "my",
    "your", "his", "her", "me", "us", "you", "i", "we", "they", "it", "them", "one", "some",
    "any", "all", "each", "every", "other", "another", "usual", "same", "new", "old", "there",
    "here", "what", "which", "who", "how", "when", "where", "then", "now", "just", "only",
    "more", "less", "much", "many"])


@dataclass(frozen=True, slots=True)
class Change:
    """A statement of change: the old value when named, else the subject, and the new one."""

    new: str
    old: str | None = None
    subject: frozenset[str] = frozenset()  # content words of the subject (the `is now` form)


def _bare(value: str) -> str:
    return value.strip("`").rstrip(".,;:").strip()


def change(text: str) -> Change | None:
    """The change `text` states, if it states one in the forms above."""
    for pattern in (_FROM_TO, _REPLACED_WITH, _REPLACES, _INSTEAD):
        m = pattern.search(text)
        if m is not None:
            old, new = _bare(m.group("old")), _bare(m.group("new"))
            if (len(old) > 1 and len(new) > 1 and old.lower() != new.lower()
                    and old.lower() not in _STOP and new.lower() not in _STOP):
                return Change(new, old)
    m = _IS_NOW.search(text)
    if m is not None:
        subject = m.group("subject") or m.group("subject2") or ""
        new = _bare(m.group("new") or m.group("new2") or "")
        words = content_words(subject) - content_words(new)
        # A subject names one thing: two words ("auth service"), or a name (`DB_POOL_SIZE`);
        # "John is now at 5 a day" does not say which of John's numbers changed.
        specific = len(words) >= 2 or any(re.search(r"[_./\d]", w) for w in words)
        if new and new.lower() not in _STOP and specific:
            return Change(new, None, words)
    return None


def _names(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w@./-]){re.escape(value)}(?![\w@/-]|\.\w)", text, _I) is not None


def _shape(value: str) -> re.Pattern[str]:
    """What another value of the same thing looks like: a number for a number, else a name."""
    if _NUMBER.fullmatch(value):
        return re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?!\w|\.\d)")
    return re.compile(r"`[^`]+`")


def overturns(chg: Change, new_text: str, old_text: str) -> bool:
    """`old_text` states the value `chg` says is no longer so, of the same thing."""
    if _names(old_text, chg.new):
        return False  # it already says the new value
    if chg.old is not None:
        if not _names(old_text, chg.old):
            return False
        about = salient(new_text) - salient(chg.old) - salient(chg.new)
        return bool(about & salient(old_text))
    if not chg.subject or not chg.subject <= content_words(old_text):
        return False
    shape = _shape(chg.new)
    return any(_bare(v).lower() != chg.new.lower() for v in shape.findall(old_text))


def overturned(rows: Iterable[dict], new_text: str, newest: int) -> list[dict]:
    """The rows (current memories of the project, as records) that the statement of change
    `new_text` (memory `newest`) overturns, said before it."""
    chg = change(new_text)
    if chg is None:
        return []
    new = next((r for r in rows if r["id"] == newest), None)
    said = str((new or {}).get("valid_from") or "")
    return [r for r in rows if r["id"] != newest and r["status"] == "active"
            and r["superseded_by"] is None and str(r.get("valid_from") or "") <= said
            and overturns(chg, new_text, r["text"])]
