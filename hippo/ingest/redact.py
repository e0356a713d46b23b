"""Mask secrets in transcript text before anything is stored, and count them.

Known token shapes are masked first, then URL passwords, auth headers and assignments to
secret-looking names (which skip values already masked). Patterns start with a literal where
possible (the regex engine then scans fast) and run only when a cheap substring test passes.
Run it on whole messages before chunking; a private key cut in two is still caught (BEGIN
without END, and an END block whose BEGIN was cut off).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_PEM_BODY_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n\t "
)

_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r".*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")


def _mixed(token: str) -> bool:
    """Random keys mix digits, upper and lower case; slugs like `sk-learn-utils` do not."""
    return (
        any(c.isdigit() for c in token)
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    )


def _digit_alpha(token: str) -> bool:
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


# (kind, prefilter needle, pattern, validator or None); anthropic before openai (both `sk-`).
_TOKENS: list[tuple[str, str, re.Pattern[str], Callable[[str], bool] | None]] = [
    ("anthropic_key", "sk-ant-", re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,}"), _mixed),
    ("openai_key", "sk-", re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), _mixed),
    ("github_token", "gh", re.compile(r"gh[pousr]_[A-Za-z0-9]{36,255}"), None),
    ("github_token", "github_pat_", re.compile(r"github_pat_[A-Za-z0-9_]{22,255}"), None),
    ("aws_access_key", "AKIA", re.compile(r"AKIA[A-Z0-9]{16}"), None),
    ("aws_access_key", "ASIA", re.compile(r"ASIA[A-Z0-9]{16}"), None),
    ("slack_token", "xox", re.compile(r"xox[baprs]-[A-Za-z0-9\-]{10,}"), None),
    ("google_api_key", "AIza", re.compile(r"AIza[0-9A-Za-z_\-]{35}"), None),
    (
        "jwt",
        "eyJ",
        re.compile(r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"),
        None,
    ),
]

_URL_PASSWORD = re.compile(r"://([^:/?#@\s\"'<>]+):([^@/\s\"'<>]+)@")
_BEARER = re.compile(r"Bearer\s+([A-Za-z0-9._~+/\-]{20,}=*)")
# Matched against the lower-cased text (fast, no IGNORECASE); values are read from the original.
_AUTH_HEADER = re.compile(
    r"authorization[\"']?\s*[:=]\s*[\"']?\s*(?:bearer|basic|token)\s+([a-z0-9._~+/\-]{8,}=*)"
)
_ASSIGN = re.compile(
    r"(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|token|password|passwd|passphrase"
    r"|private[_\-]?key|access[_\-]?key|credentials?)"
    r"(?P<q>[\"']?)[ \t]*(?::=|=>|=|:)[ \t]*"
    r"(?P<val>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s,;'\"`)\]}]+)"
)
_ASSIGN_NEEDLES = ("key", "secret", "token", "pass", "credential")
_PLACEHOLDER_START = ("$", "{", "<", "%", "[", "*", "(", "os.", "process.", "env.")
_NOT_SECRET = {
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "required",
    "optional",
    "str",
    "string",
    "int",
    "bool",
    "boolean",
    "number",
    "any",
    "bytes",
    "secret",
    "password",
}
_IDENT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _mask(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def redact(text: str) -> tuple[str, int]:
    """Replace secrets with `[REDACTED:<kind>]`; return the new text and how many were masked."""
    total = 0
    if "PRIVATE KEY" in text:
        text, n = _PEM.subn(_mask("private_key"), text)
        total += n
        if "-----END" in text:
            text, n = _pem_tails(text)
            total += n
    for kind, needle, pattern, valid in _TOKENS:
        if needle in text:
            text, n = _splice(text, pattern.finditer(text), partial(_token, kind=kind, valid=valid))
            total += n
    if "://" in text:
        text, n = _splice(text, _URL_PASSWORD.finditer(text), _url_password)
        total += n
    if "Bearer" in text:
        text, n = _splice(text, _BEARER.finditer(text), _bearer)
        total += n
    lowered = text.lower()
    if len(lowered) != len(text):  # rare Unicode whose lower case changes length
        return text, total
    if "authorization" in lowered:
        text, n = _splice(text, _AUTH_HEADER.finditer(lowered), lambda m: _auth_value(m, text))
        total += n
        lowered = text.lower()
    if any(needle in lowered for needle in _ASSIGN_NEEDLES):
        text, n = _splice(text, _ASSIGN.finditer(lowered), lambda m: _assignment(m, text))
        total += n
    return text, total


def _splice(
    text: str,
    matches: Iterable[re.Match[str]],
    replace: Callable[[re.Match[str]], tuple[int, int, str] | None],
) -> tuple[str, int]:
    """Apply (start, end, replacement) edits chosen per match; return the text and edit count."""
    out: list[str] = []
    pos = count = 0
    for m in matches:
        edit = replace(m)
        if edit is None or edit[0] < pos:
            continue
        start, end, repl = edit
        out += (text[pos:start], repl)
        pos, count = end, count + 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


def _bounded(m: re.Match[str]) -> bool:
    """The match is a whole token, not the middle of a longer one."""
    s, start, end = m.string, m.start(), m.end()
    return (start == 0 or s[start - 1] not in _TOKEN_CHARS) and (
        end == len(s) or s[end] not in _TOKEN_CHARS
    )


def _token(
    m: re.Match[str], kind: str, valid: Callable[[str], bool] | None
) -> tuple[int, int, str] | None:
    if not _bounded(m) or (valid is not None and not valid(m.group(0))):
        return None
    return m.start(), m.end(), _mask(kind)


def _group_mask(m: re.Match[str], group: int, kind: str = "bearer_token") -> tuple[int, int, str]:
    return m.start(group), m.end(group), _mask(kind)


def _url_password(m: re.Match[str]) -> tuple[int, int, str] | None:
    password = m.group(2)
    if password.startswith(_PLACEHOLDER_START) or "REDACTED" in password:
        return None
    return _group_mask(m, 2, "password")


def _bearer(m: re.Match[str]) -> tuple[int, int, str] | None:
    return _group_mask(m, 1) if _digit_alpha(m.group(1)) else None


def _auth_value(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """`Authorization: Bearer <value>` (matched on lower-cased text) when the value looks random."""
    value = text[m.start(1) : m.end(1)]
    return _group_mask(m, 1) if _digit_alpha(value) and "REDACTED" not in value else None


def _pem_tails(text: str) -> tuple[str, int]:
    """Mask `<base64 lines>-----END ... PRIVATE KEY-----` left over after a BEGIN was cut off."""

    def edit(m: re.Match[str]) -> tuple[int, int, str] | None:
        start = m.start()
        while start > 0 and text[start - 1] in _PEM_BODY_CHARS:
            start -= 1
        body = text[start : m.start()]
        if sum(c.isalnum() for c in body) < 16:
            return None
        while start < m.start() and text[start].isspace():  # keep the separating whitespace
            start += 1
        return start, m.end(), _mask("private_key")

    return _splice(text, _PEM_END.finditer(text), edit)


def _assignment(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """Mask the value of `NAME=value`, `"api_key": "value"`, `export TOKEN=...` when literal."""
    start = m.start()
    while start > 0 and text[start - 1] in _NAME_CHARS:
        start -= 1
    name = text[start : m.end("q") - len(m.group("q"))]
    raw = text[m.start("val") : m.end("val")]
    if not _secret_value(name, raw):
        return None
    quoted = raw[:1] in "\"'`" and len(raw) >= 2 and raw[-1] == raw[0]
    if quoted:
        return m.start("val") + 1, m.end("val") - 1, _mask("secret")
    return m.start("val"), m.end("val"), _mask("secret")


def _secret_value(name: str, raw: str) -> bool:
    """Whether the value given to a secret-looking name is a literal secret, not code or prose."""
    quoted = raw[:1] in "\"'`" and len(raw) >= 2 and raw[-1] == raw[0]
    value = raw[1:-1] if quoted else raw
    if (
        not value
        or value.startswith(_PLACEHOLDER_START)
        or value.lower() in _NOT_SECRET
        or any(c.isspace() for c in value)
        or "REDACTED" in value
    ):
        return False
    if quoted:  # a string literal: secret unless it reads like a plain word or slug
        return len(value) >= 6 and (len(value) >= 16 or _digit_alpha(value) or _mixed_case(value))
    if name.upper() == name and any(c.isalpha() for c in name):  # ENV_STYLE=value
        return len(value) >= 4 and not _IDENT_PATH.fullmatch(value)
    # A bare value after a code-style name is usually a variable: require a random look.
    return len(value) >= 8 and _digit_alpha(value) and "/" not in value and "." not in value


def _mixed_case(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)
