"""The redactor against the corpus of secret shapes, the findings of issue 17, and the
ordinary text it must leave alone."""

from __future__ import annotations

import json

import pytest
from secrets_corpus import corpus, placements

from hippo.errors import scrub
from hippo.redact import redact

CORPUS = corpus()


def test_the_corpus_has_sixty_shapes_or_more() -> None:
    assert len({s.kind for s in CORPUS}) >= 60
    assert all(s.runs() for s in CORPUS)


@pytest.mark.parametrize("secret", CORPUS, ids=lambda s: s.kind)
def test_no_run_of_a_secret_survives_any_placement(secret) -> None:  # type: ignore[no-untyped-def]
    for where, text in placements(secret).items():
        masked, found = redact(text)
        left = sorted(r for r in secret.runs() if r in masked)
        assert found >= 1 and not left, f"{where}: {masked!r} keeps {left[:1]}"
        assert redact(masked) == (masked, 0)  # idempotent


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # One İ (U+0130, lower-cases to two characters) no longer turns the rules off.
        ("İzmir: PASSWORD=hunter22 and Authorization: Token abcdef1234567890",
         ("İzmir: PASSWORD=[REDACTED:secret] and Authorization: Token "
          "[REDACTED:bearer_token]")),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "aws_secret_access_key = [REDACTED:secret]"),
        ("redis://:s3cretpassw0rd@cache:6379", "redis://:[REDACTED:password]@cache:6379"),
        ("https://bob:p@ssW0rd99@host.example.com/x",
         "https://bob:[REDACTED:password]@host.example.com/x"),
        ('{"body":"password=\\"letmeinnow1\\""}', '{"body":"password=\\"[REDACTED:secret]\\""}'),
        ('{\\"api_key\\": \\"abcdefgh12345\\"}', '{\\"api_key\\": \\"[REDACTED:secret]\\"}'),
        ("xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef",
         "[REDACTED:slack_token]"),
        ("sk_live_51H8abcDEFghiJKLmnoPQRstu", "[REDACTED:stripe_key]"),
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "[REDACTED:huggingface_token]"),
        ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:npm_token]"),
        ("glpat-abcdEFGH1234ijklMNOP", "[REDACTED:gitlab_token]"),
        ("mysql --password=Sup3rS3cret -u root", "mysql --password=[REDACTED:secret] -u root"),
        # the name goes on past its secret word
        ('secret_key_base: "test-only-secret-base-minimum-64-bytes-long-enough",',
         'secret_key_base: "[REDACTED:secret]",'),
        ("SESSION_TOKEN_PROD=abcdefghijklmnopqrstuvwxyz0123",
         "SESSION_TOKEN_PROD=[REDACTED:secret]"),
    ],
)
def test_findings_of_issue_17(text: str, expected: str) -> None:
    assert redact(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f2a9c1d4e5b6a7f8091a2b3c4d5e6f708192a3b fixed the build",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "sort_key = name; primary_key=True; cache_key = f'{user}:{day}'",
        "monkey: 12345678 and turnkey=ready",
        "git clone https://github.com/org/repo@v1 and ssh://git@host:22/x",
        "task_live_update_3 and disk_test_results_42 are job names",
        "the --token-file option and --password-stdin flag",
        "ask-ant-farm and risk-proj-planning-2025 are slugs",
        "İstanbul has no secrets, key lime pie",
        "PWD=/home/dev/proj cd $(pwd)",
        "SHA256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "see docs/api_keys.md and hippo/redact.py for details",
        'json.dumps({"tokens": 1234, "max_tokens": 4000})',
        'token_count: 42, tokenizer: "porter", password_min_length = 12',
        '_TOKEN = re.compile(r"[^\\s,;]+")',
        "postgres://user:PASSWORD@host/db and redis://:pw@host",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_scrub_masks_known_shapes_and_the_environments_credentials(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "zq8Xw2LmP0vR7tKwQ9")
    line = scrub("hippo: line 3: unknown type 'zq8Xw2LmP0vR7tKwQ9' near "
                 + json.dumps({"k": "ghp_" + "a1B2" * 9}))
    assert "zq8Xw2LmP0vR7tKwQ9" not in line and "a1B2a1B2a1B2" not in line
    assert line.startswith("hippo: line 3: unknown type '[redacted]' near ")
