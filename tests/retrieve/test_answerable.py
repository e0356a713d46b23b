"""The prompt recipe and the prompt hook stay quiet on a question nothing stored answers
(`hippo.retrieve.answerable`), and still answer one asked in other words."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from hippo.retrieve.answerable import content_words, is_name, judge

MEMORIES = [
    {"text": "The orders API stores its data in PostgreSQL 16, one schema per tenant",
     "type": "decision", "project": "shop"},
    {"text": "Checkout calls the payment service through a retrying HTTP client",
     "type": "fact", "project": "shop"},
    {"text": "Run the test suite with `make test` before every push", "type": "rule",
     "project": "shop"},
]


@pytest.fixture
def shop(cli, tmp_path: Path) -> Path:
    r = cli("add", "-", input="\n".join(orjson.dumps(m).decode() for m in MEMORIES))
    assert r.exit_code == 0, r.stderr
    work = tmp_path / "work" / "shop"
    (work / ".git").mkdir(parents=True)
    return work


def test_content_words_leave_out_stopwords_digits_months_and_short_words() -> None:
    assert content_words("What did we deploy on 3 March 2025 to the UI of v2 "
                         "(staging-east)?") == ["deploy", "staging", "east"]
    assert content_words("the Redis redis REDIS") == ["Redis"]


def test_a_name_is_a_capital_inside_a_sentence() -> None:
    q = "Which Redis version? Deploys run on AWS. Kubernetes is not used"
    assert is_name("Redis", q) and is_name("AWS", q)
    assert not is_name("Deploys", q)  # first word of a sentence
    assert not is_name("Kubernetes", q)
    assert not is_name("version", q)
    assert not is_name("Which", q)


def test_judge_names_never_said_or_most_words_never_said() -> None:
    q = "What Redis version does the orders API use?"
    words = content_words(q)
    assert words == ["Redis", "version", "orders", "API", "use"]
    v = judge(words, ["Redis"], q)
    assert v.quiet and v.reason == "nothing stored mentions Redis"
    # ordinary words a conversation may not have used count by their share
    assert not judge(words, ["version", "use"], q).quiet
    assert judge(words, ["version", "orders", "use", "API"], q).quiet
    assert not judge([], [], "").quiet


def test_markdown_recipe_is_quiet_on_a_thing_never_stored(cli, shop: Path) -> None:
    q = "What Redis version does the orders API use?"
    asked = cli("search", q, "--format", "markdown", "-p", "shop")
    assert asked.exit_code == 0 and asked.stdout == ""
    assert asked.stderr == ("hippo: nothing stored mentions Redis: no memory answers this "
                            "(nothing printed)\n")
    # --json (and the table) keep search's answer as it was
    assert len(cli("search", q, "--json", "-p", "shop").records) == 3
    assert cli("search", q, "-f", "markdown", "--json", "-p", "shop").records
    # --min-score 0 keeps everything, the gate included
    assert "PostgreSQL" in cli("search", q, "-f", "markdown", "--min-score", "0",
                               "-p", "shop").stdout


def test_markdown_recipe_answers_a_paraphrase(cli, shop: Path) -> None:
    r = cli("search", "which database do orders get stored in?", "-f", "markdown", "-p", "shop")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("## Relevant memories\n- The orders API stores its data in "
                               "PostgreSQL"), r.stdout


def test_a_word_said_only_in_a_transcript_counts_as_said(cli, shop: Path,
                                                        tmp_path: Path) -> None:
    q = "What Redis version does the orders API use?"
    lines = [{"role": "user", "content": "We cache sessions in Redis 7 next to the orders API",
              "timestamp": "2026-01-05T10:00:00Z", "session_id": "s1", "cwd": str(shop)},
             {"role": "assistant", "content": "Noted: Redis 7 holds the session cache.",
              "timestamp": "2026-01-05T10:00:05Z", "session_id": "s1", "cwd": str(shop)}]
    path = tmp_path / "chats" / "s1.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert cli("ingest", str(path), "--idle-minutes", "0").exit_code == 0
    r = cli("search", q, "-f", "markdown", "-p", "shop")
    assert r.exit_code == 0 and r.stdout.startswith("## Relevant memories\n"), r.stderr


def test_prompt_hook_is_quiet_on_a_thing_never_stored(cli, shop: Path) -> None:
    def hook(prompt: str) -> str:
        payload = orjson.dumps({"session_id": "x", "transcript_path": "", "cwd": str(shop),
                                "hook_event_name": "UserPromptSubmit",
                                "prompt": prompt}).decode()
        r = cli("hook", "claude-code", "--plain", input=payload)
        assert r.exit_code == 0, r.stderr
        return r.stdout

    assert hook("Is the orders API deployed on Kubernetes or on Nomad?") == ""
    assert "PostgreSQL" in hook("which database do orders get stored in?")
    # a prompt that asks for work is not judged: what is stored about the rest helps it
    assert "PostgreSQL" in hook("Add a Redis cache in front of the orders database")


def test_only_a_question_is_judged() -> None:
    from hippo.retrieve.answerable import asks

    assert asks("What Redis version does the orders API use?")
    assert asks("how do I run the tests") and asks("Is it deployed on Kubernetes")
    assert not asks("Add a Redis cache in front of the orders database")
    assert not asks("Thanks, now move the cache to Redis.") and not asks("")


@pytest.mark.parametrize(("question", "kind"), [
    ("What is the production domain name or URL for the orders API?", "a domain"),
    ("What's the staging URL?", "a domain"),
    ("Which hostname does the worker connect to?", "a domain"),
    ("What URL does the plugin call to fetch the review?", "a URL"),
    ("What Redis version is being used?", "a version"),
    ("What version of Node do we run?", "a version"),
    ("What port does the orders API listen on?", "a port"),
    # the value is not what is asked for
    ("How does the storefront hide the orders API's URL?", ""),
    ("What does the proxy do with the backend URL?", ""),
    ("Why was the Node version pinned?", ""),
    ("What frontend framework does the storefront use?", ""),
    # a member of a closed class of well-known things, named as the phrase's head noun
    ("Which browsers does the storefront support?", "a browser"),
    ("What OS does the developer work on?", "an operating system"),
    ("What cloud provider hosts the orders API?", "a cloud provider"),
    ("What is the developer's preferred IDE or code editor?", "an editor"),
    ("Which CI runs the test suite?", "a CI service"),
    ("What browser extension does the team ship?", ""),
    ("What rich text editor library does the storefront use?", ""),
    ("Which cloud storage bucket holds the uploads?", ""),
])
def test_asks_value_reads_the_noun_phrase_a_question_asks_for(question: str,
                                                              kind: str) -> None:
    from hippo.retrieve.answerable import asks_value

    assert asks_value(question) == kind


@pytest.mark.parametrize(("kind", "text", "holds"), [
    ("a domain", "Production runs at https://orders.shop.example", True),
    ("a domain", "the API answers on orders.shop.io behind the CDN", True),
    ("a domain", "start it and open localhost:4000", True),
    ("a domain", "The orders API URL is never exposed to the browser", False),
    ("a domain", "Built with Next.js and Node.js", False),
    ("a domain", "It calls `GET /api/review-context/:token`", False),
    ("a URL", "It calls `GET /api/review-context/:token`", True),
    ("a URL", "See https://orders.shop.example/docs", True),
    ("a URL", "Routes live in `app/api/` and proxy the calls", False),
    ("a version", "We are on PostgreSQL 16", True),
    ("a version", "pinned to 3.12.1 in .tool-versions", True),
    ("a version", "a retry within 30 seconds", False),
    ("a port", "the worker listens on port 8080", True),
    ("a port", "run it at 127.0.0.1:5432", True),
    ("a port", "the port is set in the env file", False),
    ("a browser", "Supports the last two versions of Chrome, Firefox and Safari", True),
    ("a browser", "Playwright runs the suite in chromium and webkit", True),
    ("a browser", "It hides the backend URL from the browser", False),
    ("an operating system", "The team develops on macOS and deploys to Ubuntu 24.04", True),
    ("a cloud provider", "Deployed to AWS with ECS Fargate", True),
    ("a cloud provider", "Only Docker and nginx on one host", False),
    ("an editor", "Neovim with the LSP setup", True),
    ("a CI service", "GitHub Actions runs `pytest` on each push", True),
    ("a CI service", "the tests run before each commit", False),
])
def test_holds_value_reads_the_form_of_a_value(kind: str, text: str, holds: bool) -> None:
    from hippo.retrieve.answerable import holds_value

    assert holds_value(kind, text) is holds


def test_a_question_for_a_value_no_memory_gives_is_unanswered(cli, shop: Path) -> None:
    note = "The storefront calls the orders API through a proxy: its URL stays on the server"
    assert cli("add", note, "-p", "shop").exit_code == 0
    q = "What is the production URL of the orders API?"
    r = cli("search", q, "-f", "markdown", "-p", "shop")
    assert r.exit_code == 0 and r.stdout == "", r.stdout
    assert r.stderr == ("hippo: the question asks for a domain and no memory found gives one: "
                        "no memory answers this (nothing printed)\n")
    assert cli("search", q, "--json", "-p", "shop").records  # --json is not gated
    given = "The orders API's production URL is https://orders.shop.example"
    assert cli("add", given, "-p", "shop").exit_code == 0
    r = cli("search", q, "-f", "markdown", "-p", "shop")
    assert "https://orders.shop.example" in r.stdout, r.stderr
