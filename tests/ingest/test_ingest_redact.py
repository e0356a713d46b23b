"""Secret redaction: each kind is caught, ordinary code and prose are left alone."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ingest_support import TRANSCRIPTS

from hippo.ingest.readers._common import shorten
from hippo.ingest.redact import redact

OPENAI = "sk-proj-Abc123DEF456ghi789JKL012mno345PQR678stu901VWX"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"my key is {OPENAI} ok", "my key is [REDACTED:openai_key] ok"),
        ("sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl", "[REDACTED:openai_key]"),
        ("sk-ant-api03-AbCdEf123456GhIjKl789012MnOpQr345678-xyz_AA", "[REDACTED:anthropic_key]"),
        ("ghp_1234567890abcdefghijABCDEFGHIJ123456", "[REDACTED:github_token]"),
        ("gho_1234567890abcdefghijABCDEFGHIJ123456", "[REDACTED:github_token]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github_token]"),
        ("aws AKIAIOSFODNN7EXAMPLE here", "aws [REDACTED:aws_access_key] here"),
        ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "[REDACTED:slack_token]"),
        ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google_api_key]"),
        (JWT, "[REDACTED:jwt]"),
        (f"key:\n{PEM}\nnext", "key:\n[REDACTED:private_key]\nnext"),
        (
            "postgres://admin:s3cr3tP4ss@db.example.com:5432/app",
            "postgres://admin:[REDACTED:password]@db.example.com:5432/app",
        ),
        ("FOO_API_KEY=abcd1234efgh", "FOO_API_KEY=[REDACTED:secret]"),
        ('export TOKEN="abc123xyz"', 'export TOKEN="[REDACTED:secret]"'),
        ("PASSWORD: hunter22", "PASSWORD: [REDACTED:secret]"),
        ('{"api_key": "abcdefgh12345"}', '{"api_key": "[REDACTED:secret]"}'),
        ("client_secret = 'Zq8xLmP2vR7tKw'", "client_secret = '[REDACTED:secret]'"),
        (
            "curl -H 'Authorization: Bearer abcdef123456789' https://x",
            "curl -H 'Authorization: Bearer [REDACTED:bearer_token]' https://x",
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "Authorization: Basic [REDACTED:bearer_token]",
        ),
        (f"OPENAI_API_KEY={OPENAI}", "OPENAI_API_KEY=[REDACTED:openai_key]"),
    ],
)
def test_secrets_are_masked(text: str, expected: str) -> None:
    assert redact(text) == (expected, 1)


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b fixed the build",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "the token is stored in the keychain; pass the token to the client",
        "Token: the thing you pass to the API",
        "pip install scikit-learn sk-learn; import sklearn",
        "see task-sk-learn-utils-and-more-words-here",
        "max_tokens=4000 tokenizer = AutoTokenizer.from_pretrained('bert')",
        "SECRET_KEY = settings.SECRET_KEY",
        "password: str = Field(...)",
        "api_key = os.environ['OPENAI_API_KEY']",
        "token = get_token()",
        'api_key: "${OPENAI_API_KEY}"',
        "eos_token = '</s>'",
        "env.OPENAI_API_KEY = 'proxy-handled';",
        'headers = {"Authorization": f"Bearer {token}"}',
        'curl -H "Authorization: Bearer $TOKEN" https://api',
        "https://example.com:8080/path@foo and git@github.com:org/repo.git",
        "postgres://user:${PGPASSWORD}@localhost/db",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
        "input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 78901234",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == (text, 0)


def test_counts_each_secret_and_is_idempotent() -> None:
    text = f"a={OPENAI}\nb=ghp_1234567890abcdefghijABCDEFGHIJ123456\nDB_PASSWORD=hunter22"
    masked, n = redact(text)
    assert n == 3
    assert redact(masked) == (masked, 0)


def test_private_key_halves_are_both_caught() -> None:
    head, tail = PEM[:60], PEM[60:]
    assert redact(f"x {head}")[0] == "x [REDACTED:private_key]"
    assert redact(f"{tail}\nafter")[0] == "[REDACTED:private_key]\nafter"


def test_shorten_masks_a_secret_cut_by_the_limit() -> None:
    text = "x" * 490 + " " + OPENAI + " tail"
    short, found = shorten(text, 500)
    assert found == 1 and "sk-proj" not in short and "Abc123" not in short


@given(st.text(max_size=300))
def test_redact_never_grows_unmasked_text_or_fails(text: str) -> None:
    masked, n = redact(text)
    assert (n == 0) == (masked == text)
    assert redact(masked) == (masked, 0)


def test_real_transcripts_have_no_false_alarms() -> None:
    """The sample transcripts carry no live secrets: only the placeholder the owners left,
    and a test config's literal `secret_key_base` (written three times), which is masked
    as any such literal must be: a real one looks the same."""
    files = sorted(p for p in TRANSCRIPTS.rglob("*") if p.is_file())
    if not files:
        pytest.skip("real transcripts not available")
    masked = [m.group(0) for p in files for m in re.finditer(
        r".{40}\[REDACTED:\w+\]", redact(p.read_text(errors="replace"))[0])]
    assert len(masked) == 3 and all('secret_key_base: \\"[REDACTED:secret]' in m
                                    for m in masked), masked
