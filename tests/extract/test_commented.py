"""A command or a setting in a code block, with the comment that says what it is for, is a
statement (`hippo.extract.commented`); program code, directives and notes to self are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.extract.commented import MAX_COMMENTED, commented
from tests.extract import excerpts as X
from tests.extract.test_statements import absent, by_text, nothing_invented


def test_a_command_and_its_comment_at_the_end_or_above() -> None:
    block = ["bun install", "bun run build          # production build", "",
             "# run the migrations", "bunx prisma migrate dev", "bunx prisma generate"]
    assert commented(block, "bash") == ["production build: `bun run build`",
                                        "run the migrations: `bunx prisma migrate dev`"]
    assert commented(block, "") == commented(block, "bash")  # no language: a shell block


def test_a_setting_with_its_comment_in_program_code_and_config() -> None:
    ts = ["const options = {", "  // don't refetch when the tab gains focus",
          "  revalidateOnFocus: false,", "  dedupingInterval: 30000, // thirty seconds apart",
          "  fetcher: fetchJson, // the shared fetcher", "};"]
    # a literal is a setting; a variable (`fetchJson`) is code
    assert commented(ts, "ts") == [
        "don't refetch when the tab gains focus: `revalidateOnFocus: false`",
        "thirty seconds apart: `dedupingInterval: 30000`"]
    yaml = ["pool:", "  size: 5        # connections per worker", "  driver: asyncpg  # the driver"]
    assert commented(yaml, "yaml") == ["connections per worker: `size: 5`",
                                       "the driver: `driver: asyncpg`"]


@pytest.mark.parametrize(("block", "lang"), [
    # program code, even commented: code is not a statement
    (["# The session factory is created once per process.",
      "SessionLocal = sessionmaker(bind=engine)"], "python"),
    (["// Get the user's timezone", "const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;"],
     "ts"),
    (["  sessionId: string; // the session's id"], "ts"),  # a type, not a value
    # control flow, directives, notes to self, questions, one word, a drawn tree
    (["if [ -z \"$TOKEN\" ]; then  # no token given"], "bash"),
    (["make test  # noqa", "make lint  # TODO make this faster", "make fmt  # why twice?",
      "make docs  # docs"], "bash"),
    (["├── api/  # the HTTP handlers"], ""),
    # prose, data and output blocks have no comments
    (["## Setup  # the steps"], "markdown"), (["npm test  # passes"], "console"),
])
def test_what_is_not_a_commented_command_or_setting(block: list[str], lang: str) -> None:
    assert commented(block, lang) == []


def test_a_block_gives_a_few_at_most() -> None:
    block = [f"make target{i}  # build target number {i}" for i in range(10)]
    assert len(commented(block, "make")) == MAX_COMMENTED


GO_SESSION = "019e2b7c-0a41-7d55-8e21-5c3f9a0b2e33"
GO = [
    ("user", "How do I run the worker against a local NATS?"),
    ("assistant", ("Start the dependencies, then the worker:\n\n```bash\n"
                  "docker compose up -d nats clickhouse   # local NATS and ClickHouse\n"
                  "# hot reload on every save\nair -c .air.toml\n```\n\n"
                  "The consumer reads its settings from the environment:\n\n```go\n"
                  "// Pull batches of 50 so one slow job does not starve the rest\n"
                  "batch := js.PullSubscribe(subject, durable, nats.PullMaxWaiting(128))\n"
                  "```")),
    ("user", "Thanks, that works."),
]


def test_an_agents_commented_commands_become_tool_memories(extract_turns) -> None:
    mems = extract_turns(GO)
    got = by_text(mems)
    assert got.get("Local NATS and ClickHouse: `docker compose up -d nats clickhouse`") == "tool"
    assert got.get("Hot reload on every save: `air -c .air.toml`") == "tool"
    absent(mems, "PullSubscribe", "slow job")  # Go code with a comment is still code
    assert all(m["project"] == "ingest-worker" for m in mems)


@pytest.fixture
def extract_turns(cli, tmp_path: Path):
    def run(turns) -> list[dict]:
        folder = tmp_path / "in"
        folder.mkdir()
        X.codex(folder / f"rollout-2026-04-07T09-00-00-{GO_SESSION}.jsonl", GO_SESSION,
                "/home/dev/ingest-worker", turns)
        assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
        assert cli("extract").exit_code == 0
        return nothing_invented(cli)
    return run
