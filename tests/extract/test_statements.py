"""Issue 30's acceptance on hand-made excerpts in each transcript format hippo reads.

Claude Code, Codex CLI, Gemini CLI, aider and generic JSON/JSONL, about Python, Go and
JavaScript/TypeScript projects, each run through `hippo ingest` and `hippo extract`: what
becomes a memory (the person's stack and conventions, the agent's findings with their cause,
a cause with its fix, lists under their heading, definitions), what does not (narration,
status, questions, pleasantries, code, tool output, harness text), the subject carried into
the statement, nothing invented, a re-run adding nothing, `undo` of the run, secrets masked.
Texts are exact where the behaviour is designed (`hippo/extract/units.py`,
`statements.py`), loose where the wording is heuristic.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.extract import excerpts as X

# -- Claude Code, a Python service ------------------------------------------------------------
CC_SESSION = "9f1c2a4e-1111-4a5b-9c3d-0123456789ab"
CC_STACK = ("The API is a FastAPI service on Python 3.12 with SQLAlchemy 2 and Alembic for "
            "migrations.")
CC_RULE = ("Never call `session.commit()` inside a repository function; the request handler "
           "owns the transaction.")
CC_CAUSE = ("The test hangs because the `db_session` fixture never closes the pool. It keeps "
            "one connection checked out per test, so the sixth test waits forever for a free "
            "connection.")
CC_FIX = "Fix: close the pool in the fixture's teardown with `engine.dispose()`."
CC_TOOL_SAYS = "The connection pool is created once per process and shared by every worker thread."
CC = [
    ("injected", ("<system-reminder>\nAlways use tabs for indentation in every Python file.\n"
                 "</system-reminder>")),
    ("user", f"{CC_STACK} {CC_RULE}"),
    ("assistant", "Let me check the config."),
    ("call", "Read", "/home/dev/ledger-api/app/db.py"),
    ("result", CC_TOOL_SAYS),
    ("assistant", "Now I'll run the tests."),
    ("call", "Bash", "pytest -q tests/test_refunds.py"),
    ("result", ("FAILED tests/test_refunds.py::test_partial_refund - TimeoutError\n"
               "1 failed, 41 passed in 3.2s")),
    ("assistant", f"{CC_CAUSE}\n\n{CC_FIX}"),
    ("user", "Thanks!"),
    ("assistant", "All 42 tests pass."),
    ("user", ("<task-notification>\nBackground command finished. The staging database is always "
             "reset at midnight, so never keep fixtures there.\n</task-notification>")),
    ("user", "Got it. What does the `--reload` flag do?"),
    ("assistant", ("## Settings\n\n- `DATABASE_URL` is read from the environment at startup\n"
                  "- The pool size defaults to 5 and is set by `DB_POOL_SIZE`\n\n"
                  "```python\n# The session factory is created once per process.\n"
                  "SessionLocal = sessionmaker(bind=engine)\n\nasync def get_session():\n"
                  "    yield SessionLocal()\n```")),
]

# -- Codex CLI, a Go worker ---------------------------------------------------------------------
CX_SESSION = "019e2b7c-0a41-7d55-8e21-5c3f9a0b1d22"
CX_STACK = ("The worker is a Go 1.22 service that pulls jobs from NATS JetStream and writes them "
            "to ClickHouse.")
CX_RULE = "Use `errgroup` for every fan-out in the worker: a bare `go` statement loses the error."
CX_CAUSE = ("The ack times out because the consumer is created with `AckExplicit` but the handler "
            "returns before it calls `msg.Ack()`.")
CX_THIS = "This leaves every message pending until the 30 s ack wait expires."
CX_TOOL_SAYS = "The consumer always acks after the handler returns."
CX_FLAGS = ("Both flags of the consumer matter here:\n\n"
            "`--max-inflight` — caps the messages one consumer holds unacknowledged at once\n"
            "`--ack-wait` — how long JetStream waits for an ack before it redelivers\n\nDone.")
CX = [
    ("injected", ("# AGENTS.md instructions for /home/dev/ingest-worker\n\n<INSTRUCTIONS>\n"
                 "Always run `go vet ./...` before committing.\n</INSTRUCTIONS>")),
    ("injected", ("<environment_context>\n  <cwd>/home/dev/ingest-worker</cwd>\n"
                 "  <shell>bash</shell>\n</environment_context>")),
    ("developer", "You must never use panics for control flow in this repository."),
    ("user", f"{CX_STACK} {CX_RULE}"),
    ("assistant", "I'll check the consumer setup."),
    ("call", "exec_command", "go test ./internal/consumer/..."),
    ("result", ("--- FAIL: TestConsumerAck (30.00s)\n    consumer_test.go:41: timed out waiting "
               "for ack\nFAIL"), 1),
    ("assistant", f"{CX_CAUSE} {CX_THIS}"),
    ("call", "exec_command", "go test ./..."),
    ("result", f"ok  \texample.com/ingest-worker/internal/consumer\t0.412s\n{CX_TOOL_SAYS}"),
    ("assistant", CX_FLAGS),
    ("user", "Sounds good. Can you also add a retry with backoff?"),
    ("assistant", "Now I'll add the retry."),
]

# -- Gemini CLI, a TypeScript monorepo --------------------------------------------------------
GM_SESSION = "5b0e8d1c-3f7a-4c2e-9d6b-7a8f1e2c3d4b"
GM_STACK = ("This is a TypeScript monorepo: a Vite and React 18 front end in `apps/web` and a "
            "Fastify API in `apps/api`, both built with pnpm workspaces.")
GM_PREF = "Please use pnpm, not npm."
GM_CAUSE = ("PostgreSQL returns `timestamp without time zone` columns as naive strings, and "
            "`new Date()` reads them as local time, so an event at midnight UTC lands on the "
            "previous day in New York.")
GM_FIX = ("The fix is to select the columns as `timestamptz` so the driver returns an ISO string "
          "with an offset.")
GM_TOOL_SAYS = "Dates are always stored in UTC and rendered in the browser's zone."
GM_HEADING = "How the API caches event lists"
GM_ITEMS = (
    ("The list endpoint caches each page in Redis for 60 seconds under a key built from the "
    "organisation id, the page cursor and the active filters, so two users of one organisation "
    "share a page."),
    ("A write to any event of an organisation deletes every cached page of that organisation "
    "through a `SCAN` over its key prefix, which keeps a stale page from outliving the write by "
    "more than one request."),
)
GM = [
    ("user", f"{GM_STACK} {GM_PREF}"),
    ("assistant", "Let me look at the date handling."),
    ("call", "run_shell_command", "grep -rn 'new Date' apps/api/src"),
    ("result", "apps/api/src/events.ts:12:  const start = new Date(row.starts_at)\n"
               + GM_TOOL_SAYS),
    ("assistant", f"{GM_CAUSE} {GM_FIX}"),
    ("user", "Nice."),
    ("assistant", f"## {GM_HEADING}\n\n- {GM_ITEMS[0]}\n- {GM_ITEMS[1]}\n\nAll checks pass."),
    ("user", "Perfect, thanks. Should we also cache the detail view?"),
]

# -- aider, a JavaScript static site ------------------------------------------------------------
AD_STACK = ("The site is plain JavaScript with ES modules and no bundler; we deploy it to Netlify "
            "from the `dist` folder.")
AD_RULE = "Always write dates as ISO 8601 strings in the JSON feed."
AD_CAUSE = ("The feed was empty because `buildFeed()` kept only posts with `draft === false`, and "
            "a post without front matter has `draft` undefined.")
AD_TOOL_SAYS = "The feed builder sorts posts by their `date` field before it writes `feed.json`."
AD_FOLLOW = ("`rss.js` builds its items from the same `buildFeed()` output, so it picks up the "
             "fix with no change.")
AD = [
    ("user", f"{AD_STACK}\n{AD_RULE}"),
    ("result", f"Added src/feed.js to the chat.\n{AD_TOOL_SAYS}"),
    ("assistant", (f"{AD_CAUSE}\n\nsrc/feed.js\n```javascript\n<<<<<<< SEARCH\n"
                  "  .filter(post => post.draft === false)\n=======\n"
                  "  .filter(post => !post.draft)\n>>>>>>> REPLACE\n```")),
    ("result", ("Applied edit to src/feed.js\nCommit 3f2a1b9 fix: include posts without front "
               "matter")),
    ("user", "Thanks! Does the RSS feed need the same fix?"),
    ("assistant", f"No. {AD_FOLLOW}"),
]

# -- generic JSON document, a Python CLI --------------------------------------------------------
GJ_SESSION = "csvtidy-0412"
GJ_STACK = "The CLI is built on Typer and ships as a single wheel."
GJ_IT = "It reads its defaults from `pyproject.toml` under `[tool.csvtidy]`."
GJ_FINDING = ("`--strict` makes the parser reject any row whose column count differs from the "
              "header's, because `csv.DictReader` otherwise fills the missing fields with `None`.")
GJ_TOOL_SAYS = "The --strict flag always rejects rows with missing columns."
GJ = [
    ("system", "You are a helpful assistant. Always answer in English."),
    ("user", "Hi! Quick one about the CLI."),
    ("assistant", "Sure, happy to help."),
    ("user", f"{GJ_STACK} {GJ_IT}"),
    ("assistant", "Let me look at how the options are parsed."),
    ("call", "shell", "python -m csvtidy --help"),
    ("result", f"Usage: csvtidy [OPTIONS] FILE\n  {GJ_TOOL_SAYS}"),
    ("assistant", GJ_FINDING),
    ("user", "Great, got it."),
    ("user", "Why does `--encoding` default to utf-8?"),
]

WRITERS: dict[str, Callable[[Path], Path]] = {
    "claude-code": lambda d: X.claude_code(d / f"{CC_SESSION}.jsonl", CC_SESSION,
                                           "/home/dev/ledger-api", CC),
    "codex": lambda d: X.codex(d / f"rollout-2026-04-07T09-00-00-{CX_SESSION}.jsonl", CX_SESSION,
                               "/home/dev/ingest-worker", CX),
    "gemini-cli": lambda d: X.gemini(d / f"session-2026-04-07T09-00-{GM_SESSION[:8]}.json",
                                     GM_SESSION, GM),
    "aider": lambda d: X.aider(d / ".aider.chat.history.md", "/home/dev/blog-site", AD),
    "generic-json": lambda d: X.generic(d / "csvtidy.json", GJ_SESSION, "/home/dev/csvtidy", GJ),
}


# Words the extractor's own templates add (as in test_summary.py).
TEMPLATE = {"before", "committing", "run", "failed", "with", "it", "passed", "after",
            "editing", "closed", "committed", "on", "of", "at", "fixed", "in"}


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"\w+", text)}


@pytest.fixture
def extract(cli, tmp_path: Path) -> Callable[..., list[dict]]:
    """Write the excerpts of the named formats into one folder, `hippo ingest` it and
    `hippo extract`; the memories written (each checked: nothing invented)."""

    def run(*formats: str) -> list[dict]:
        folder = tmp_path / "in"
        folder.mkdir(exist_ok=True)
        for name in formats:
            WRITERS[name](folder)
        res = cli("ingest", str(folder), "--idle-minutes", "0")
        assert res.exit_code == 0, res.stderr
        res = cli("extract")
        assert res.exit_code == 0, res.stderr
        return nothing_invented(cli)

    return run


def nothing_invented(cli) -> list[dict]:
    """Every word of every memory is in the chunks it cites (`hippo show`), bar TEMPLATE."""
    mems = cli("list", "--all-projects", "--status", "all", "--limit", "0", "--json").records
    for m in mems:
        shown = cli("show", str(m["id"]), "--json").records[0]
        cited = " ".join(p["text"] for p in shown["provenance"] if p.get("text"))
        assert cited, m
        missing = _words(m["text"]) - _words(cited) - TEMPLATE
        assert not missing, (m["text"], missing)
        assert "\n" not in m["text"] and len(m["text"]) <= 400
    return sorted(mems, key=lambda m: m["id"])


def by_text(mems: list[dict]) -> dict[str, str]:
    return {m["text"]: m["type"] for m in mems}


def absent(mems: list[dict], *parts: str) -> None:
    """None of `parts` is in any memory (case-insensitive)."""
    said = "\n".join(m["text"].lower() for m in mems)
    found = [p for p in parts if p.lower() in said]
    assert not found, (found, [m["text"] for m in mems])


def test_claude_code_python_session(extract) -> None:
    mems = extract("claude-code")
    got = by_text(mems)
    assert got.get(CC_STACK) in {"fact", "config"}
    assert got.get(CC_RULE) == "rule"
    # the cause, the sentence after it that says "It ...", and the fix: one insight
    assert got.get(f"{CC_CAUSE} {CC_FIX}") == "insight"
    # a short list under its heading, kept whole, carrying the heading
    (settings,) = [t for t in got if t.startswith("Settings: ")]
    assert settings.startswith("Settings: `DATABASE_URL` is read from the environment at "
                               "startup; The pool size defaults to 5 and is set by "
                               "`DB_POOL_SIZE`")
    # the suite's last run, as one state (the tool's count line, not its output)
    assert got.get("`pytest -q tests/test_refunds.py`: 1 failed, 41 passed") == "observability"
    assert len(mems) == 5, list(got)
    absent(mems, "Let me", "Now I'll", "check the config", "42 tests", "Thanks", "Got it",
           "--reload", CC_TOOL_SAYS, "created once per process", "SessionLocal",
           "tabs for indentation", "staging database", "task-notification", "TimeoutError")
    assert all(m["project"] == "ledger-api" for m in mems)


def test_codex_go_session(extract) -> None:
    mems = extract("codex")
    got = by_text(mems)
    assert got.get(CX_STACK) in {"fact", "config"}
    assert CX_RULE in got  # its type: test_a_convention_is_a_rule_not_a_tool
    # "This ..." joined to the finding it points back to
    assert got.get(f"{CX_CAUSE} {CX_THIS}") == "insight"
    # a definition list ("`flag` — what it does") under its intro, kept whole
    assert f"Both flags of the consumer matter here: {CX_FLAGS.split(chr(10))[2]}; " \
           f"{CX_FLAGS.split(chr(10))[3]}" in got
    assert len(mems) == 4, list(got)
    absent(mems, "AGENTS.md", "go vet", "environment_context", "panics", "I'll check",
           "Now I'll", "retry", CX_TOOL_SAYS, "timed out waiting", "Done.")
    assert all(m["project"] == "ingest-worker" for m in mems)


def test_gemini_cli_typescript_session(extract) -> None:
    mems = extract("gemini-cli")
    got = by_text(mems)
    assert got.get(GM_STACK) in {"fact", "config"}
    assert got.get(GM_PREF) == "preference"
    # "The fix is ..." joined to the cause: one insight
    assert got.get(f"{GM_CAUSE} {GM_FIX}") == "insight"
    # long items under a heading: one memory each, `Heading: item`
    for item in GM_ITEMS:
        assert got.get(f"{GM_HEADING}: {item}") in {"fact", "config"}
    assert len(mems) == 5, list(got)
    absent(mems, "Let me", "date handling", GM_TOOL_SAYS, "const start", "checks pass",
           "Nice", "Perfect", "detail view")


def test_aider_javascript_session(extract) -> None:
    mems = extract("aider")
    got = by_text(mems)
    assert got.get(AD_STACK) in {"fact", "config"}
    assert got.get(AD_RULE) == "rule"
    assert got.get(AD_CAUSE) == "insight"
    assert AD_FOLLOW in got  # "No." before it is chatter, left out
    assert len(mems) == 4, list(got)
    absent(mems, AD_TOOL_SAYS, "Added src/feed.js", "Aider v", "Applied edit", "Commit 3f2a1b9",
           "SEARCH", "REPLACE", "post.draft)", "Thanks", "need the same fix?")
    assert all(m["project"] == "blog-site" for m in mems)


def test_generic_json_python_session(extract) -> None:
    mems = extract("generic-json")
    got = by_text(mems)
    # "It ..." joined to the sentence before it, which names what "it" is
    assert got.get(f"{GJ_STACK} {GJ_IT}") in {"fact", "config"}
    assert got.get(GJ_FINDING) in {"insight", "fact", "tool"}
    assert len(mems) == 2, list(got)
    absent(mems, "helpful assistant", "English", "Hi!", "Quick one", "happy to help", "Let me",
           GJ_TOOL_SAYS, "Usage:", "got it", "utf-8")
    assert all(m["project"] == "csvtidy" for m in mems)


def test_generic_jsonl_harness_text_is_not_the_person(extract, tmp_path: Path) -> None:
    """Text a harness put in the user's turn (AGENTS.md, a system reminder, a caveat, a
    task notification) is nobody's statement; the person's own words around it are."""
    own = "Use `slog` for all logging in the worker, never `log.Printf`."
    (tmp_path / "in").mkdir()
    X.generic(tmp_path / "in" / "harness.jsonl", "gw-harness", "/home/dev/gateway", [
        ("user", ("# AGENTS.md instructions for /home/dev/gateway\n\n<INSTRUCTIONS>\nAlways "
                 "run `golangci-lint run` before every commit.\n</INSTRUCTIONS>")),
        ("user", ("Caveat: The messages below were generated by the user while running local "
                 "commands. The gateway always proxies to port 8080.")),
        ("user", ("<task-notification>\n<status>completed</status>\nThe benchmark shows the "
                 "gateway adds 2 ms of latency per request.\n</task-notification>")),
        ("user", (f"{own}<system-reminder>Always reply in French to every message."
                 "</system-reminder>")),
        ("assistant", "Understood."),
    ])
    mems = extract()
    assert [m["text"] for m in mems] == [own], [m["text"] for m in mems]
    assert mems[0]["type"] in {"rule", "preference"}
    absent(mems, "golangci-lint", "port 8080", "latency", "French")


# -- types by structure, commands and conventions ---------------------------------------------
def test_a_convention_is_a_rule_not_a_tool(extract) -> None:
    """"Use `errgroup` for every fan-out": a standing instruction of the person naming a
    package, not a command (`errgroup` is run by nobody)."""
    got = by_text(extract("codex"))
    assert got.get(CX_RULE) in {"rule", "preference"}, got.get(CX_RULE)


GO_CONVENTIONS = (
    "Keep handlers thin: business logic lives in `internal/service`.",
    "Wrap every error with `fmt.Errorf` and `%w` so callers can match it.",
    "Don't add new dependencies without asking me first.",
    "Prefer table-driven tests with `t.Run` subtests.",
)


def test_the_person_s_conventions_are_kept(extract, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    X.generic(tmp_path / "in" / "conventions.jsonl", "gw-conv", "/home/dev/gateway", [
        ("user", "Some conventions for this repo before you start."),
        *[("user", c) for c in GO_CONVENTIONS],
        ("assistant", "Understood, I'll follow these."),
    ])
    got = by_text(extract())
    missing = [c for c in GO_CONVENTIONS if c not in got]
    assert not missing, (missing, got)
    assert {got[c] for c in GO_CONVENTIONS} <= {"rule", "preference", "decision"}, got
    assert "Understood, I'll follow these." not in got


def test_a_command_and_what_it_is_for_is_a_tool_memory(extract, tmp_path: Path) -> None:
    """A command in a one-line code block after the sentence that says what it is for is
    kept with it (a block longer than a line is not); a command is a `tool` memory, even
    when it has a flag."""
    (tmp_path / "in").mkdir()
    X.claude_code(tmp_path / "in" / "3c5d7e9f-3333-4b1a-9c2d-fedcba987654.jsonl",
                  "3c5d7e9f-3333-4b1a-9c2d-fedcba987654", "/home/dev/ledger-api", [
        ("user", "How do I run it locally?"),
        ("assistant", ("Start the API locally with:\n\n```bash\nuv run uvicorn app.main:app "
                      "--reload\n```")),
        ("user", "And the web app?"),
        ("assistant", ("Run `pnpm --filter web dev` to start the Vite dev server with hot "
                      "reload.")),
    ])
    got = by_text(extract())
    start = [t for t in got if t.startswith("Start the API locally with")
             and "`uv run uvicorn app.main:app --reload`" in t]
    assert start and got[start[0]] in {"tool", "procedure"}, got
    assert got.get("Run `pnpm --filter web dev` to start the Vite dev server with hot "
                   "reload.") in {"tool", "procedure"}, got


def test_lists_carry_their_heading_or_intro(extract, tmp_path: Path) -> None:
    """A list under an intro or a heading: a short one whole, nested items under their
    parent, what remains as a task; "The function ..." joined to what it points back to."""
    (tmp_path / "in").mkdir()
    X.codex(tmp_path / "in" / "rollout-2026-04-08T10-00-00-019e2b7c-0a41-7d55-8e21-5c3f9a0b1d99"
            ".jsonl", "019e2b7c-0a41-7d55-8e21-5c3f9a0b1d99", "/home/dev/ingest-worker", [
        ("user", "Give me the layout and what is left."),
        ("assistant", ("The worker reads three environment variables:\n\n"
                      "- `NATS_URL` points at the JetStream server\n"
                      "- `CLICKHOUSE_DSN` is the ClickHouse connection string\n"
                      "- `BATCH_SIZE` caps the rows per insert")),
        ("assistant", ("The package layout:\n\n- `internal/queue`\n"
                      "  - owns the JetStream consumer and its ack policy\n"
                      "  - backs off exponentially between redeliveries\n"
                      "- `internal/store` writes batches to ClickHouse")),
        ("assistant", ("`decodeJob()` rejects a payload without a `tenant_id` before it touches "
                      "the store. The function also drops fields it does not know.")),
        ("assistant", ("### Remaining\n\n1. Wire the retry into `cmd/worker/main.go`\n"
                      "2. Document `--max-retries` in the README")),
    ])
    got = by_text(extract())
    assert got.get("The worker reads three environment variables: `NATS_URL` points at the "
                   "JetStream server; `CLICKHOUSE_DSN` is the ClickHouse connection string; "
                   "`BATCH_SIZE` caps the rows per insert") in {"config", "fact"}
    assert got.get("The package layout: `internal/queue`: owns the JetStream consumer and its "
                   "ack policy; backs off exponentially between redeliveries; `internal/store` "
                   "writes batches to ClickHouse") in {"fact", "config"}
    assert got.get("`decodeJob()` rejects a payload without a `tenant_id` before it touches the "
                   "store. The function also drops fields it does not know.") in {"fact",
                                                                                  "insight"}
    assert got.get("Remaining: Wire the retry into `cmd/worker/main.go`; Document "
                   "`--max-retries` in the README") == "task"
    assert len(got) == 4, got
