"""Mask secrets in text before anything is stored or echoed, and count them.

One redactor for every write path: ingest runs it on whole messages before chunking;
every Brain write passes through it at `hippo.memory.records.NewMemory` (built by `add`, `add -`,
`import`, the extractor, undo, and any future MCP `remember`) and at `hippo.memory.brain.update`
/ `restore` (`edit --text`, merges); error lines that echo user input go through
`hippo.errors.scrub`, which calls it too. docs/privacy.md lists what is masked.

Known token shapes are masked first, then URL passwords, auth headers, command-line
flags and assignments to secret-looking names (which skip values already masked).
Patterns start with a literal where possible (the regex engine then scans fast) and run
only when a cheap substring test passes. A private key cut in two is still caught (BEGIN
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


def _mixed_case(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def _random(token: str) -> bool:
    """A key body: digits and letters (a slug of words has no digits)."""
    return _digit_alpha(token)


_B64 = r"[A-Za-z0-9_\-]"
_HEX32 = re.compile(r"[0-9a-f]{32}")
_HEX = r"[0-9a-fA-F]"
_Token = tuple[str, str, "re.Pattern[str]", "Callable[[str], bool] | None"]


def _t(kind: str, needle: str, pattern: str, valid: Callable[[str], bool] | None = _random
       ) -> _Token:
    return (kind, needle, re.compile(pattern), valid)


# (kind, prefilter needle, pattern, validator or None). Formats from each vendor's docs
# (and gitleaks' rules); the more specific prefix comes first (sk-ant- before sk-).
_TOKENS: list[_Token] = [
    _t("anthropic_key", "sk-ant-", r"sk-ant-(?:api|admin|sid)\d\d-[A-Za-z0-9_\-]{20,}|"
       r"sk-ant-[A-Za-z0-9_\-]{20,}", _mixed),
    _t("openai_key", "sk-", r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", _mixed),
    _t("stripe_key", "_live_", rf"[spr]k_live_{_B64}{{16,}}"),
    _t("stripe_key", "_test_", rf"[spr]k_test_{_B64}{{16,}}"),
    _t("stripe_key", "whsec_", r"whsec_[A-Za-z0-9]{24,}"),
    _t("github_token", "gh", r"gh[pousr]_[A-Za-z0-9]{36,255}", None),
    _t("github_token", "github_pat_", r"github_pat_[A-Za-z0-9_]{22,255}", None),
    _t("gitlab_token", "gl", rf"gl(?:pat|dt|ptt|rt|soat|cbt|ft|imt|agent|oas)-{_B64}{{20,}}"),
    _t("gitlab_token", "GR1348941", rf"GR1348941{_B64}{{20,}}"),
    _t("aws_access_key", "AKIA", r"AKIA[A-Z0-9]{16}", None),
    _t("aws_access_key", "ASIA", r"ASIA[A-Z0-9]{16}", None),
    _t("slack_token", "xox", r"xox[abeoprs]-[A-Za-z0-9\-]{10,}", None),
    _t("slack_token", "xoxe.", r"xoxe\.xox[bp]-\d-[A-Za-z0-9\-]{20,}", None),
    _t("slack_token", "xapp-", r"xapp-\d-[A-Za-z0-9\-]{20,}", None),
    _t("slack_webhook", "hooks.slack.com",
       r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}", None),
    _t("discord_webhook", "/api/webhooks/",
       r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,}", None),
    _t("google_api_key", "AIza", r"AIza[0-9A-Za-z_\-]{35}", None),
    _t("google_oauth", "GOCSPX-", rf"GOCSPX-{_B64}{{24,}}", None),
    _t("google_oauth", "ya29.", r"ya29\.[A-Za-z0-9_\-]{20,}", None),
    _t("google_oauth", "1//0", r"1//0[A-Za-z0-9_\-]{30,}", None),
    _t("huggingface_token", "hf_", r"hf_[A-Za-z0-9]{30,}", _mixed_case),
    _t("npm_token", "npm_", r"npm_[A-Za-z0-9]{36}", None),
    _t("pypi_token", "pypi-", rf"pypi-AgE{_B64}{{40,}}", None),
    _t("docker_token", "dckr_", rf"dckr_(?:pat|oat)_{_B64}{{20,}}", None),
    _t("digitalocean_token", "_v1_", r"do[opr]_v1_[a-f0-9]{64}", None),
    _t("shopify_token", "shp", rf"shp(?:at|ss|ca|pa)_{_HEX}{{32}}", None),
    _t("sendgrid_key", "SG.", rf"SG\.{_B64}{{22}}\.{_B64}{{43}}", None),
    _t("twilio_key", "SK", rf"SK{_HEX}{{32}}", _random),
    _t("mailgun_key", "key-", r"key-[0-9a-f]{32}", _random),
    # Starts at the literal (fast); `_token` takes in the 32 hex digits before it.
    _t("mailchimp_key", "-us", r"-us\d{1,2}", None),
    _t("linear_key", "lin_", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", None),
    _t("notion_token", "ntn_", r"ntn_[A-Za-z0-9]{40,}", None),
    _t("notion_token", "secret_", r"secret_[A-Za-z0-9]{43}", _mixed_case),
    _t("postman_key", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", None),
    _t("vault_token", "hv", rf"hv[sbr]\.{_B64}{{24,}}", None),
    _t("doppler_token", "dp.", r"dp\.(?:pt|st|ct|scim|audit|sa)\.[A-Za-z0-9]{40,}", None),
    _t("grafana_token", "gl", rf"gl(?:sa|c)_{_B64}{{32,}}", None),
    _t("newrelic_key", "NR", r"NR(?:AK|AA|II|JS)-[A-Z0-9]{27}", None),
    _t("sentry_token", "sntr", rf"sntr[ysu]_{_B64}{{30,}}", None),
    _t("databricks_token", "dapi", r"dapi[a-f0-9]{32}(?:-\d)?", _random),
    _t("square_token", "sq0", rf"sq0(?:atp|csp)-{_B64}{{22,}}", None),
    _t("atlassian_token", "ATATT", r"ATATT3[A-Za-z0-9_\-=]{100,}", None),
    _t("bitbucket_token", "ATBB", r"ATBB[A-Za-z0-9_\-=]{28,}", None),
    _t("age_secret_key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", None),
    _t("groq_key", "gsk_", r"gsk_[A-Za-z0-9]{40,}", None),
    _t("replicate_token", "r8_", r"r8_[A-Za-z0-9]{30,}", _mixed_case),
    _t("perplexity_key", "pplx-", r"pplx-[A-Za-z0-9]{40,}", None),
    _t("xai_key", "xai-", r"xai-[A-Za-z0-9]{60,}", None),
    _t("supabase_token", "sbp_", r"sbp_[a-f0-9]{40}", None),
    _t("tailscale_key", "tskey-", rf"tskey-[a-z]+-{_B64}{{16,}}", None),
    _t("terraform_token", ".atlasv1.", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", None),
    _t("figma_token", "figd_", rf"figd_{_B64}{{40,}}", None),
    _t("onepassword_token", "ops_", r"ops_[A-Za-z0-9_\-=.]{50,}", None),
    _t("pulumi_token", "pul-", r"pul-[a-f0-9]{40}", None),
    _t("planetscale_token", "pscale_", rf"pscale_(?:pw|tkn|oauth)_{_B64}{{30,}}", None),
    _t("netlify_token", "nfp_", r"nfp_[A-Za-z0-9]{36,}", None),
    _t("fly_token", "fo1_", rf"fo1_{_B64}{{40,}}", None),
    _t("telegram_bot_token", ":AA", r"\d{8,10}:AA[A-Za-z0-9_\-]{33}", None),
    _t("azure_storage_key", "AccountKey=", r"AccountKey=[A-Za-z0-9+/]{60,}={0,2}", None),
    _t("jwt", "eyJ", r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*", None),
]

# One substring test per distinct needle (a scan of the text each), in _TOKENS' order.
_BY_NEEDLE: dict[str, list[_Token]] = {}
for _tok in _TOKENS:
    _BY_NEEDLE.setdefault(_tok[1], []).append(_tok)

# scheme://user:password@host: the user may be empty (redis://:pw@host) and the password
# may hold `@` (the authority ends at the LAST `@` before the host's `/`).
_URL_PASSWORD = re.compile(r"://([^:/?#@\s\"'<>]*):([^/\s\"'<>]+)@")
# `scheme://user:PASSWORD@host` in docs and examples names the part, it is no password.
_URL_PLACEHOLDERS = frozenset({"password", "pass", "passwd", "pw", "pwd", "secret"})
_BEARER = re.compile(r"Bearer\s+([A-Za-z0-9._~+/\-]{20,}=*)")
# Matched against a lower-cased copy of the text of the same length (fast, no IGNORECASE);
# values are read from the original.
_AUTH_HEADER = re.compile(
    r"authorization\\*[\"']?\s*[:=]\s*\\*[\"']?\s*(?:bearer|basic|token)\s+([a-z0-9._~+/\-]{8,}=*)"
)
_SECRET_WORDS = (
    r"api[_\-]?key|apikey|secret(?:[_\-]?(?:access[_\-]?)?key)?|token|password|passwd"
    r"|passphrase|private[_\-]?key|access[_\-]?key|credentials?|accountkey|auth[_\-]?key"
)
# A quoted value may be escaped once or more (JSON inside JSON: `\"value\"`).
_VALUE = (r"(?P<val>\\*\"[^\"\n]*?\\*\"|\\*'[^'\n]*?\\*'|`[^`\n]*`"
          r"|[^\s,;'\"`)\]}\\]+)")
# The name may go on past its secret word: `secret_key_base`, `SESSION_TOKEN_PROD`.
_ASSIGN = re.compile(
    rf"(?:{_SECRET_WORDS})(?:[_\-][a-z0-9]+){{0,3}}(?P<q>\\*[\"']?)[ \t]*(?::=|=>|=|:)[ \t]*"
    rf"{_VALUE}"
)
# `DEPLOY_KEY=…`, `signing-key: …`: a weaker hint, checked apart (a pattern that starts with
# a literal is scanned fast; as one more alternative above it made `_ASSIGN` 4x slower).
_KEY_ASSIGN = re.compile(rf"key(?P<q>\\*[\"']?)[ \t]*(?::=|=>|=|:)[ \t]*{_VALUE}")
# --password VALUE, --api-key=VALUE, --token 'VALUE' on a command line.
_FLAG = re.compile(
    r"--[a-z0-9\-]*(?:password|passwd|token|api-?key|secret|access-key|auth-key)"
    rf"(?:[ \t]+|=){_VALUE}"
)
_ASSIGN_NEEDLES = ("key", "secret", "token", "pass", "credential")
_PLACEHOLDER_START = ("$", "{", "<", "%", "[", "*", "(", "os.", "process.", "env.")
_NOT_SECRET = {
    "true", "false", "null", "none", "nil", "undefined", "required", "optional", "str",
    "string", "int", "bool", "boolean", "number", "any", "bytes", "secret", "password",
}
_IDENT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEYISH = re.compile(r"[A-Za-z0-9+/=_\-]{20,}")


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
    for needle, tokens in _BY_NEEDLE.items():
        if needle not in text:
            continue
        for kind, _, pattern, valid in tokens:
            text, n = _splice(text, pattern.finditer(text), partial(_token, kind=kind, valid=valid))
            total += n
    if "://" in text:
        text, n = _splice(text, _URL_PASSWORD.finditer(text), _url_password)
        total += n
    if "Bearer" in text:
        text, n = _splice(text, _BEARER.finditer(text), _bearer)
        total += n
    lowered = _lower(text)
    if "authorization" in lowered:
        text, n = _splice(text, _AUTH_HEADER.finditer(lowered), lambda m: _auth_value(m, text))
        total += n
        lowered = _lower(text) if n else lowered
    if not any(needle in lowered for needle in _ASSIGN_NEEDLES):
        return text, total
    for pattern, edit in ((_ASSIGN, _assignment), (_KEY_ASSIGN, _weak_assignment),
                          (_FLAG, _flag)):
        if pattern is _FLAG and "--" not in text:
            continue
        text, n = _splice(text, pattern.finditer(lowered), partial(edit, text=text))
        total += n
        lowered = _lower(text) if n else lowered
    return text, total


def redact_text(text: str) -> str:
    """`text` with its secrets masked (for writers that do not count them)."""
    return redact(text)[0] if text else text


def _lower(text: str) -> str:
    """Lower case of the same length, so match positions index the original text (İ, the
    Turkish dotted capital I, lower-cases to two characters; such characters stay as they are)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


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
    if kind == "mailchimp_key":
        start = m.start() - 32
        s = m.string
        if start < 0 or not _HEX32.fullmatch(s, start, m.start()) or (
                start > 0 and s[start - 1] in _TOKEN_CHARS) or not _random(s[start : m.end()]):
            return None
        return (start, m.end(), _mask(kind)) if _bounded_end(m) else None
    if not _bounded(m) or (valid is not None and not valid(m.group(0))):
        return None
    return m.start(), m.end(), _mask(kind)


def _bounded_end(m: re.Match[str]) -> bool:
    return m.end() == len(m.string) or m.string[m.end()] not in _TOKEN_CHARS


def _group_mask(m: re.Match[str], group: int, kind: str = "bearer_token") -> tuple[int, int, str]:
    return m.start(group), m.end(group), _mask(kind)


def _url_password(m: re.Match[str]) -> tuple[int, int, str] | None:
    password = m.group(2)
    if (password.startswith(_PLACEHOLDER_START) or "REDACTED" in password
            or password.lower() in _URL_PLACEHOLDERS):
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


def _value_span(m: re.Match[str], text: str) -> tuple[int, int, bool]:
    """(start, end, quoted) of the value proper: quotes and their escapes left out."""
    start, end = m.start("val"), m.end("val")
    raw = text[start:end]
    lead = len(raw) - len(raw.lstrip("\\"))
    if raw[lead : lead + 1] in ("\"", "'", "`") and len(raw) - lead >= 2:
        inner_start, inner_end = start + lead + 1, end - 1
        if text[inner_end] == raw[lead]:
            while inner_end > inner_start and text[inner_end - 1] == "\\":
                inner_end -= 1
            return inner_start, inner_end, True
    return start, end, False


def _assignment(m: re.Match[str], text: str, *, weak: bool = False
                ) -> tuple[int, int, str] | None:
    """Mask the value of `NAME=value`, `"api_key": "value"`, `export TOKEN=...` when literal.
    weak: the name only ends in `_key`/`-key` (`DEPLOY_KEY`, not `sort_key = name`)."""
    start = m.start()
    if weak and not (start >= 2 and text[start - 1] in "_-" and text[start - 2].isalnum()):
        return None
    while start > 0 and text[start - 1] in _NAME_CHARS:
        start -= 1
    name = text[start : m.end("q") - len(m.group("q"))]
    vstart, vend, quoted = _value_span(m, text)
    value = text[vstart:vend]
    if not _secret_value(name, value, quoted, weak=weak):
        return None
    return vstart, vend, _mask("secret")


def _weak_assignment(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    return _assignment(m, text, weak=True)


def _flag(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """`--password VALUE`: a literal that looks random, or any quoted one."""
    vstart, vend, quoted = _value_span(m, text)
    value = text[vstart:vend]
    if not _secret_value("--flag", value, quoted, weak=not quoted):
        return None
    return vstart, vend, _mask("secret")


def _secret_value(name: str, value: str, quoted: bool, *, weak: bool = False) -> bool:
    """Whether the value given to a secret-looking name is a literal secret, not code or prose."""
    if (
        not value
        or value.startswith(_PLACEHOLDER_START)
        or value.lower() in _NOT_SECRET
        or any(c.isspace() for c in value)
        or "REDACTED" in value
        or (not quoted and "(" in value)  # a call: `_TOKEN = re.compile(...)`
    ):
        return False
    if weak:  # `sort_key = name`, `--token-file`: only a random-looking value
        return len(value) >= 8 and _digit_alpha(value) and not _IDENT_PATH.fullmatch(value)
    if quoted:  # a string literal: secret unless it reads like a plain word or slug
        return len(value) >= 6 and (len(value) >= 16 or _digit_alpha(value) or _mixed_case(value))
    if name.upper() == name and any(c.isalpha() for c in name):  # ENV_STYLE=value
        return len(value) >= 4 and not _IDENT_PATH.fullmatch(value)
    # A bare value after a code-style name is usually a variable: require a random look,
    # or the shape of a key (aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY...).
    if _KEYISH.fullmatch(value) and _mixed(value):
        return True
    return len(value) >= 8 and _digit_alpha(value) and "/" not in value and "." not in value
