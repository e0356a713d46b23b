"""What reads like a statement but is not what is so: a change-log line that only names an
edit ("Added alias X", "Template updated with badges": git holds it), a count of tests ("6
new builder tests, 4 controller tests": the run holds it), and a file's region described as
it was read, cited by its lines ("Rendering logic (lines 400-458): ...": an exploration
note, true until the next edit; Echo holds what was read).

Both are told by structure: where the edit verb stands (first, after the line's subject, or
after a short subject), and whether anything after the named things says what the change
does or why (a clause, a purpose, a reason).
"""

from __future__ import annotations

import re

from hippo.extract.cues import IMPERATIVE

_I = re.IGNORECASE

CHANGE = (r"(?:added|updated|removed|renamed|created|changed|moved|extracted|deleted|bumped"
           r"|edited|modified|replaced|wrote|registered|installed|imported)")
# Where a change-log line's edit starts: first ("Added X"), after its subject ("`file` —
# Added X", "gqc.4: Added X"), or after a short subject ("Template updated with X").
_EDIT_AT = re.compile(rf"^(?:(?:`[^`]+`|[^\s:—–]+(?: [^\s:—–]+){{0,3}})\s*(?:[:—–]|\s-)\s*)?"
                      rf"{CHANGE}\b|^(?:`[^`]+`|\w+(?: \w+){{0,2}}) (?:was |were )?{CHANGE}"
                      rf" (?:with|to|in|for|from)\b", _I)
# What says more than the edit: what it does, why, what is now so, or a value ("with 3
# attempts").
_SAYS = re.compile(r"\s[-–—]\s|\.\s|\d|\b(?:that|which|so|because|since|to (?:avoid|prevent|keep"
                   r"|make|let|allow)|in order to|instead of|rather than|otherwise|now|when|unless"
                   r"|until|is|are|was|were|has|have|does|can|must|should|will|means|uses?|runs"
                   r"|returns|calls|keeps|stores|reads|writes|handles|skips|shows|sets|gets"
                   r"|works|fails|prevents|avoids|requires|needs|expects|accepts|lets|allows"
                   r"|makes|resolves|fixes|fixed|breaks)\b", _I)
_TO_VERB = re.compile(r"\bto (\w+)", _I)
_QUOTED = re.compile(r"`[^`]*`|\([^()]*\)|\"[^\"]*\"")
# Counts and nothing else ("6 new builder tests, 4 controller tests, 1 LiveView test").
_COUNTS_ONLY = re.compile(r"^(?:(?:and\s+)?\d+\s+(?:new\s+)?(?:[\w-]+\s+)?(?:tests?|specs?"
                          r"|doctests?|failures?|cases?)[,;]?\s*)+\.?$", _I)
# A file's region described as it was read ("Rendering logic (lines 400-458): ..."): an
# exploration note, true until the next edit (Echo holds what was read); a problem found
# at a line ("Compile error at line 171") is kept.
_LINE_REF = re.compile(r"\blines? \d+(?:\s*[-–]\s*\d+)?\b", _I)
_AT_LINE_PROBLEM = re.compile(r"\b(?:errors?|warnings?)\s+(?:at|on|in)\s+line|\b(?:fail\w*|cannot"
                              r"|can't|undefined|crash\w*|exceptions?)\b", _I)


def edit_only(text: str) -> bool:
    """A change-log line: an edit named and nothing said of what it does or why ("Added
    alias X", "`app.js` — Added `Hooks.X` (...)", "Template updated with badges"); a list
    of them, each. Git holds it."""
    return all(_edit_only(part) for part in text.split("; "))


def _edit_only(text: str) -> bool:
    m = _EDIT_AT.match(text)
    if m is None:
        return False
    rest = _QUOTED.sub(" ", text[m.end():])
    purpose = any(w.lower() in IMPERATIVE for w in _TO_VERB.findall(rest))  # "to prefer X"
    return not purpose and not _SAYS.search(rest)


def read_out(text: str, heading: str = "") -> bool:
    """A file's region described as it was read, cited by its lines (not a problem there)."""
    return bool(_LINE_REF.search(f"{heading} {text}")) and not _AT_LINE_PROBLEM.search(text)


def counts_only(text: str) -> bool:
    """A count of tests and nothing else: what the test run shows."""
    return bool(_COUNTS_ONLY.match(text.strip()))
