"""The `rules` extractor on hand-written sessions: cues, roles, filler, limits, dedup."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hippo.extract import EchoChunk, SessionChunks
from hippo.extract.blocks import is_tool_call, messages, prose_lines, sentences
from hippo.extract.rules import RulesExtractor, scan


def session(*chunks: str | Sequence[tuple[str, str]]) -> SessionChunks:
    """Each argument is one chunk: a text of `role: text` blocks, or (role, text) pairs."""
    out = []
    for i, c in enumerate(chunks, start=1):
        text = c if isinstance(c, str) else "\n\n".join(f"{r}: {t}" for r, t in c)
        out.append(EchoChunk(i, i - 1, "/t/s.jsonl", ("user",), i, i, (f"m{i}",), None, text))
    return SessionChunks(1, "s1", "alpha", "generic-jsonl", None, out)


def found(*chunks: str | Sequence[tuple[str, str]]) -> list[tuple[str, str, float]]:
    return [(c.type, c.text, c.importance) for c in RulesExtractor().extract(session(*chunks))]


@pytest.mark.parametrize("sentence, mtype, text", [
    ("ok so we decided to use Postgres for the event store",
     "decision", "We decided to use Postgres for the event store"),
    ("Let's go with uv instead of poetry.", "decision", "Let's go with uv instead of poetry."),
    ("We switched from Jest to Vitest last week.", "decision",
     "We switched from Jest to Vitest last week."),
    ("We'll use ruff for linting.", "decision", "We'll use ruff for linting."),
    ("From now on, run the linter before every commit.", "rule",
     "From now on, run the linter before every commit."),
    ("Never commit directly to main.", "rule", "Never commit directly to main."),
    ("Don't ever push with --force to the release branch.", "rule",
     "Don't ever push with --force to the release branch."),
    ("Fix the import and make sure to keep the public API stable.", "rule",
     "Make sure to keep the public API stable."),
    ("I prefer small commits with clear messages.", "preference",
     "I prefer small commits with clear messages."),
    ("Please use pnpm, not npm.", "preference", "Please use pnpm, not npm."),
    ("TODO: add retries to the uploader.", "todo", "TODO: add retries to the uploader."),
    ("Remind me to rotate the staging keys.", "todo", "Remind me to rotate the staging keys."),
    ("We still need to write the migration guide.", "task",
     "We still need to write the migration guide."),
    ("The next step is wiring the webhook to the queue.", "task",
     "The next step is wiring the webhook to the queue."),
    ("The release notes have to be done by Friday.", "task",
     "The release notes have to be done by Friday."),
    ("Let's focus on NextAuth.js next session.", "task",
     "Let's focus on NextAuth.js next session."),
    ("Run `make test-fast` for the unit tests.", "tool",
     "Run `make test-fast` for the unit tests."),
    ("the config lives in ~/.config/alpha/settings.toml", "config",
     "The config is at ~/.config/alpha/settings.toml."),
    ("Also look at my eslint config packages/config/eslint/index.ts", "config",
     "The eslint config is at packages/config/eslint/index.ts."),
    ("Set ALPHA_API_URL to the staging host when testing.", "config",
     "Set ALPHA_API_URL to the staging host when testing."),
    ("We're on Python 3.11 everywhere.", "config", "We're on Python 3.11 everywhere."),
])
def test_cues_in_user_text(sentence: str, mtype: str, text: str) -> None:
    got = found([("user", sentence)])
    assert [(t, s) for t, s, _ in got] == [(mtype, text)]


def test_importance_follows_cue_strength() -> None:
    text = "From now on, always squash merges. Let's rename the flag to --dry."
    got = {t: imp for t, _, imp in found([("user", text)])}
    assert got["rule"] == pytest.approx(0.9)
    assert got["decision"] == pytest.approx(0.55)
    emphatic = found([("user", "NEVER log the API token!")])
    assert emphatic[0][2] == pytest.approx(0.8)


@pytest.mark.parametrize("sentence", [
    "Should we always use the cache?",  # a question
    "If we decide to use Redis, the config changes.",  # a conditional
    "I've never seen this error before",  # "never" that is no rule
    "hi",
    "show tools",
    "delete js",
    "I like it.",
    "What is this repo doing?",
])
def test_questions_conditionals_and_chit_chat_are_no_statements(sentence: str) -> None:
    assert found([("user", sentence)]) == []


def test_the_agents_instructions_are_not_the_persons_rules() -> None:
    got = found([
        ("user", "can you look at the flaky test"),
        ("assistant", ("Always run tests with -x. I prefer small diffs. TODO: clean up. "
                       "We decided to pin numpy below 2 until the ABI settles.")),
        ("assistant", "The root cause was a race between the two workers."),
    ])
    assert [(t, s) for t, s, _ in got] == [
        ("decision", "We decided to pin numpy below 2 until the ABI settles."),
        ("insight", "The root cause was a race between the two workers."),
    ]


def test_tool_calls_tool_output_and_injected_text_yield_nothing() -> None:
    got = found(
        [("user", ("<system-reminder>Always use the TodoWrite tool. From now on be brief."
                   "</system-reminder>"))],
        [("assistant", "Bash: echo 'we decided to always deploy on Fridays'"),
         ("tool", "We decided to use MySQL. Never commit secrets. TODO: fix"),
         ("assistant", "TodoWrite: {\"todos\":[{\"content\":\"always run make test\"}]}"),
         ("user", "Bash: make test  # from now on")],
        [("user", ("Caveat: The messages below were generated by the user while running "
                   "local commands. From now on, never respond to them."))],
        [("user", "# AGENTS.md instructions\nAlways use pnpm. Never use npm.")],
    )
    assert got == []


def test_code_quotes_and_diffs_are_not_prose() -> None:
    text = ("Here is the file:\n```python\n# TODO: we decided to always do this\nx = 1\n```\n"
            "> never quote me\n<<<<<<< SEARCH\nalways\n=======\nnever\n>>>>>>> REPLACE\n"
            "    indented code: always\nWe decided to keep the old parser.")
    assert found([("user", text)]) == [("decision", "We decided to keep the old parser.", 0.8)]


def test_repeats_in_a_session_collapse_with_all_their_chunks() -> None:
    ex = RulesExtractor()
    cands = ex.extract(session([("user", "Never commit directly to main.")],
                               [("assistant", "Noted.")],
                               [("user", "never commit directly to main")]))
    assert len(cands) == 1
    assert cands[0].evidence == [1, 3]


def test_split_message_is_joined_so_fences_stay_closed() -> None:
    # One long assistant message split over two chunks (same role, lines and message id).
    a = EchoChunk(1, 0, "/t", ("assistant",), 5, 9, ("m1",), None,
                  "assistant: Plan:\n```\nalways_run = True")
    b = EchoChunk(2, 1, "/t", ("assistant",), 5, 9, ("m1",), None,
                  "assistant: never = False\n```\nWe decided to ship on Monday.")
    msgs = messages([a, b])
    assert len(msgs) == 1 and msgs[0].chunk_ids == [1, 2]
    cands = RulesExtractor().extract(SessionChunks(1, "s", None, "x", None, [a, b]))
    assert [(c.text, c.evidence) for c in cands] == [("We decided to ship on Monday.", [1, 2])]


@pytest.mark.parametrize("role, text, call", [
    ("assistant", "Bash: git status", True),
    ("assistant", "exec_command: rg -n foo", True),
    ("assistant", "mcp__github__create_issue: {}", True),
    ("assistant", "TodoWrite: {}", True),
    ("user", "Bash: make test", True),
    ("assistant", "Note: this is prose.", False),
    ("assistant", "Decision: we ship on Monday.", False),
    ("tool", "Bash: whatever", False),
])
def test_tool_call_detection(role: str, text: str, call: bool) -> None:
    assert is_tool_call(role, text) is call


def test_sentences_keep_abbreviations_and_file_names() -> None:
    line = "Use e.g. `hello.py` for it. Then run it. Version 1.2 is out!"
    assert sentences(line) == ["Use e.g. `hello.py` for it.", "Then run it.",
                               "Version 1.2 is out!"]
    # a code span ends no sentence; a sentence after one does
    spaced = ("The block failed because the markers are padded (e.g., `1.  ` with two "
              "spaces), while the search assumed one space.")
    assert sentences(spaced) == [spaced]
    assert sentences("Run `make test`. Then `make lint`.") == ["Run `make test`.",
                                                               "Then `make lint`."]
    assert list(prose_lines("- **Always** lint\n## Heading\n| a | b |\n")) == ["Always lint",
                                                                               "Heading"]


def test_scan_prefers_the_strongest_cue() -> None:
    hit = scan("From now on we decided to always use uv.", "user")
    assert hit is not None and hit[0].type == "rule"
    assert scan("We decided to use uv.", "tool") is None


@pytest.mark.parametrize("sentence", [
    "Build a small TODO app with Next.js.",  # a TODO app is not a todo (a request, too)
    "These photos remind me of home.",  # not a request to be reminded
    "Never saw this coming.",  # "never" not followed by an instruction
    "Let's make sure the tests pass.",  # a one-off request
    "I'll be sure to keep you posted.",  # a promise
])
def test_look_alikes_are_not_cues(sentence: str) -> None:
    assert found([("user", sentence)]) == []


@pytest.mark.parametrize("sentence", [
    "Owning a dog must be great fun.",  # epistemic must
    "Exploring new cities is always so much fun.",  # descriptive always
])
def test_look_alikes_that_are_statements_keep_no_cue_type(sentence: str) -> None:
    """A statement the person makes is kept, but a cue's look-alike gives it no cue's type."""
    assert [(t, s) for t, s, _ in found([("user", sentence)])] == [("fact", sentence)]


@pytest.mark.parametrize("sentence, mtype", [
    ("TODO(alice): drop the v1 endpoint.", "todo"),
    ("Can you remind me to renew the cert on Monday?", None),  # a question: skipped
    ("Please remind me to renew the cert.", "todo"),
    ("Tests must be green before merging.", "rule"),
    ("Keep functions small and never mutate arguments.", "rule"),
])
def test_near_misses_that_are_cues(sentence: str, mtype: str | None) -> None:
    assert [t for t, _, _ in found([("user", sentence)])] == ([mtype] if mtype else [])
