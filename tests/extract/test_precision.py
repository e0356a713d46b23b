"""Precision of the `rules` extractor (issue 30, "Precision has a budget"): what is no memory
though it looks like a statement, by its structure, and the near-misses that stay memories.

- a change-log line that only names an edit ("Added alias X", "`app.js` — Added `Hooks.X`
  (...)", "Template updated with badges"), in a summary's sections and in the agent's lists;
- a file's region described as it was read, cited by its lines ("Rendering (lines 40-58):");
- the agent's next step, mid-edit state or guess between tool calls ("Need to update X",
  "Close task-4, commit, and move on", "Now X is unused", "the fixture may not contain X");
- a name and its state, nothing more ("task-6 done and pushed", "All 3 subtasks closed").
"""

from __future__ import annotations

import pytest

from hippo.extract.changelog import counts_only, edit_only, read_out
from hippo.extract.summary import statements
from tests.extract.test_rules import found


def texts(*chunks) -> list[str]:
    return [t for _, t, _ in found(*chunks)]


# -- change-log lines ---------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "Added aliases for `OrderRef`",
    "Added `@default_page_size 10`, `@lang_by_extension` map",
    "Added route: `get(\"/orders/:id/review\", ReviewController)`",
    ("`assets/js/app.js` — Added `Hooks.Selection` (mouseup capture) and `flash` handler "
    "(2s highlight)"),
    "Template updated with source badges, ref counts, updated empty state text",
    "`data-hook=\"Selection\"` added to the messages div",
    "gqc.4: Registered `Shop.OrderRef` in the domain",
    "Added `retry/2`; Removed `legacy_retry/1`",
])
def test_an_edit_named_and_nothing_said_of_it_is_a_change_log_line(line: str) -> None:
    assert edit_only(line)


@pytest.mark.parametrize("line", [
    "Added `retry/2` that backs off exponentially between attempts",
    "Added `highlight(root)` function - idempotent, skips nodes marked done",
    "Changed `order_id` from `msg[:uuid]` to `msg[:id]` to prefer the database id",
    "Removed `@max_lines 5`, all result lines now preserved",
    "Added retries to the uploader because the API drops 1% of requests",
    "Added: Log before re-throw — never just `throw` or silently ignore",
    "The feed was updated to use ISO dates",
    "Added `retry()` with 3 attempts",
    "`toggle_debug` updates the computer input via `update_inputs`",
    "PostgreSQL stores timestamps as UTC.",
])
def test_an_edit_with_what_it_does_or_why_is_no_change_log_line(line: str) -> None:
    assert not edit_only(line)


SUMMARY = """Summary:
1. Primary Request and Intent:
   - Build the review page.

2. Files and Code Sections:
   - `lib/shop/order.ex`
      - Added `:state` atom attribute (`:open`/`:closed`, default `:open`)
      - Added aliases for `OrderRef`
      - `close/1` sets the state to closed and keeps the refs
   - `lib/shop_web/router.ex` — Added route: `get("/orders/:id/review", ReviewController)`
   - `assets/package.json` (MODIFIED - shop-12)
      - Added `highlight.js` dependency
   - `lib/shop/ref.ex` — New resource (shop-3).
   - `lib/shop/render.ex` — Added `render/2` that keeps `render/1` working for old callers
   - `lib/shop/session_live.ex` (lines 400-458)
      - Loads orders via `load/1`

3. Errors and fixes:
   - Missing `secret_key_base` in tests:
      - Added endpoint config with `secret_key_base` to `config/test.exs`.
"""


def test_a_summary_keeps_what_is_so_and_drops_the_change_log() -> None:
    got = [s.text for s in statements(SUMMARY)]
    assert got == [
        "`lib/shop/order.ex`: `close/1` sets the state to closed and keeps the refs",
        "`lib/shop/render.ex` — Added `render/2` that keeps `render/1` working for old callers",
        ("Missing `secret_key_base` in tests: Added endpoint config with `secret_key_base` to "
        "`config/test.exs`."),
    ], got


def test_the_agent_s_change_log_list_is_not_a_memory_its_explained_item_is() -> None:
    got = texts([("user", "What changed?"), ("assistant", (
        "### Changes in `lib/shop/cart.ex`\n\n"
        "- Added `put_total/2` per row\n"
        "- Template updated with totals and badges\n"
        "- Added `expire/1` that drops carts older than 7 days, because Redis keeps them "
        "forever otherwise"))])
    assert got == [("Changes in `lib/shop/cart.ex`: Added `expire/1` that drops carts older "
                   "than 7 days, because Redis keeps them forever otherwise")], got


# -- regions read by their lines ----------------------------------------------------------
def test_a_region_read_by_its_lines_is_an_exploration_note() -> None:
    assert read_out("Rendering logic (lines 400-458): Loads messages via `load/1`")
    assert read_out("Loads messages via `load/1`", "Rendering logic (line 746)")
    assert not read_out("Compile error at line 171: `line[:idx]` can't be used in a guard")
    assert not read_out("Each tool result shows 10 lines by default")
    report = ("## Exploration report\n\n**Rendering logic (lines 400-458):**\n"
              "- Loads messages via `load_messages/1` filtering by `agent_id`\n"
              "- Calls `Renderer.render/2` with the `cwd` option\n\n## What it means\n\n"
              "Each tool result shows at most 10 lines until it is expanded, through "
              "`@visible_lines`.")
    got = texts([("user", "How does rendering work?"), ("assistant", report)])
    assert got == [("Each tool result shows at most 10 lines until it is expanded, through "
                   "`@visible_lines`.")], got


# -- the agent's next step (or guess) between tool calls -----------------------------------
STEPS = ("Need to update `sync/1` since it references `rows`.",
         "Close task-4, commit, and move to task-5.",
         "Now `Renderer` is unused since the computer handles rendering.",
         "I should do the same for `app.css`.",
         "The parsed messages may not have `agent_id` at the top level.")
KEPT_MIDTURN = ("Default port is 1100.",
                "The parsed messages do not have `agent_id` at the top level.",
                "`mount/3` never calls `attach/2`, so the `__executor__` assign is missing.")


def test_the_agent_s_next_step_between_calls_is_narration() -> None:
    turn = [("user", "Go on.")]
    for said in (*STEPS, *KEPT_MIDTURN):
        turn += [("assistant", said), ("assistant", "Bash: mix test"), ("tool", "ok")]
    got = texts(turn)
    assert got == list(KEPT_MIDTURN), got


def test_the_agent_saying_what_it_is_doing_is_narration() -> None:
    """"I'm doing a final diff review", at a turn's end too; the person's "I'm seeing ..."
    reports a problem and stays."""
    doing = ("I'm doing a final diff review and a lightweight type check before I stop.",
             "I am now reviewing the generated `opencode.json` against the docs.")
    report = "I'm seeing duplicate API calls for the same analytics endpoint."
    got = texts([("user", report), *[("assistant", d) for d in doing]])
    assert got == [report], got


def test_at_the_end_of_its_turn_the_agent_s_imperative_is_kept() -> None:
    """Advice to the person, not a step: "Run `make dev` ..." after the last call."""
    advice = "Run `make dev` to start the API with hot reload."
    got = texts([("user", "How do I start it?"), ("assistant", "Bash: ls"), ("tool", "Makefile"),
                 ("assistant", advice)])
    assert got == [advice], got


# -- a name and its state -----------------------------------------------------------------
@pytest.mark.parametrize("said", [
    "task-6 done and pushed.", "All 3 subtasks closed.", "SessionLive compiles clean.",
    "task-4 is ready.", "All 4 original subtasks are closed.", ("Background task completed successfully — all 15 `OrderLive` tests "
    "pass. This was from a previous run before the commit."),
])
def test_a_name_and_its_state_is_not_a_memory(said: str) -> None:
    assert texts([("user", "Status?"), ("assistant", said)]) == []


def test_a_list_item_that_only_counts_tests_is_not_a_memory() -> None:
    assert counts_only("6 new builder tests, 4 controller tests, 1 LiveView test")
    assert not counts_only("6 tests cover the token expiry")
    got = texts([("user", "Done?"), ("assistant", (
        "### task-7 — Launch the review\n\n"
        "- `TokenStore` — ETS-backed GenServer for one-time tokens with a 120 s TTL\n"
        "- 6 new builder tests, 4 controller tests, 1 LiveView test"))])
    assert got == [("task-7 — Launch the review: `TokenStore` — ETS-backed GenServer for one-time "
                   "tokens with a 120 s TTL")], got


@pytest.mark.parametrize("said", [
    "The cache is ready once `warm/0` has loaded every product.",
    ("All renderer tests pass, but the `OrderLive` tests need the endpoint configured in test "
    "mode."),
    "The `deploy` branch is ready for tags only: never push commits to it.",
])
def test_a_state_that_says_more_is_kept(said: str) -> None:
    assert texts([("user", "Status?"), ("assistant", said)]) == [said]


# -- the person's requests of this session --------------------------------------------------
@pytest.mark.parametrize("said", [
    "Suggest changes to my CONVENTIONS.md",
    "Further improve my CONVENTIONS.md",
    "In CONVENTIONS.md , reorder the lists.",
    "Reorder the sections of `docs/setup.md` by topic.",
    "I have further changed my CONVENTIONS.md",
    "In CONVENTIONS.md",
    "Compare `parse_v1` and `parse_v2` on the fixtures.",
    "Create hello.md with a greeting.",
    "Fix the failing test in `test_auth.py`.",
    "Add a retry button to the upload form.",
    "No, use the other branch.",
])
def test_the_person_s_request_of_this_session_is_not_a_memory(said: str) -> None:
    assert texts([("user", said)]) == []


@pytest.mark.parametrize("said", [
    "In tests, never call the real payment API.",
    "Replace moment with date-fns throughout the dashboard.",
    "For numbered lists, pad the `1.` marker so it is always 4 characters long.",
    "In the api, ports are configured in `config/dev.exs`.",
    "Change the default port to 8080 because 3000 clashes with the dashboard.",
])
def test_the_person_s_standing_word_stays_a_memory(said: str) -> None:
    assert texts([("user", said)]) == [said]


@pytest.mark.parametrize(("said", "kind"), [
    # a verb of how things are done, whatever the verb: a standing word (Python, JS, Go)
    ("Store JWT refresh tokens in an httpOnly cookie.", "preference"),
    ("Validate webhooks by checking the Stripe signature header.", "preference"),
    ("Always hash passwords with bcrypt.", "rule"),
    ("Never swallow errors silently.", "rule"),
    ("Paginate every list endpoint with an opaque cursor.", "preference"),
    # a choice said without a verb
    ("Functional components only — no class components.", "preference"),
    ("No print statements in production code.", "preference"),
    ("Table-driven tests only, not one test function per case.", "preference"),
])
def test_the_person_s_rule_with_any_verb_or_none_is_a_memory(said: str, kind: str) -> None:
    assert [(t, k) for k, t, _ in found([("user", said)])] == [(said, kind)]


def test_what_holds_in_this_session_only_is_not_a_memory() -> None:
    """What the agent can do in this conversation is no fact of the project; near it, a
    statement of the project stays."""
    tools = ("Available tool groups in this session:\n- `web`: search and open pages\n"
             "- `functions`: terminal commands and patching files")
    exposed = ("The graph tools mentioned by `AGENTS.md` are not exposed in this session, so "
               "I'm falling back to `rg` for discovery.")
    kept = "The graph tools are configured in `AGENTS.md` for code discovery."
    assert texts([("user", "What can you do?"), ("assistant", tools)]) == []
    assert texts([("user", "Go."), ("assistant", f"{exposed} {kept}")]) == [kept]


def test_the_agent_s_edit_about_to_be_made_is_narration() -> None:
    """Said before its edit, in the passive: "X will be removed" is "I'll remove X"."""
    plan = "The `// AI! Reorganize this!` comment will be removed."
    how = "The exports of `index.ts` are grouped by their prefix, each group sorted."
    assert texts([("user", "Go."), ("assistant", f"{plan} {how}")]) == [how]


@pytest.mark.parametrize("asked", [
    "Please add `CONVENTIONS.md` to the chat.",
    "Please share the full traceback from `pytest -x`.",
    "Could you paste the output of `npm ls react`?",
    "Please run `make check` and paste what it prints.",
])
def test_the_agent_asking_the_person_for_something_now_is_not_a_memory(asked: str) -> None:
    assert texts([("user", "It fails."), ("assistant", asked)]) == []


def test_the_agent_s_advice_with_please_stays() -> None:
    advice = "Please keep `DATABASE_URL` out of `.env.example`: the file is committed."
    assert texts([("user", "Anything else?"), ("assistant", advice)]) == [advice]


@pytest.mark.parametrize(("said", "kind"), [
    ("Orders move through four states: pending, paid, shipped, delivered.", "fact"),
    ("Pending: the refund endpoint and its webhook.", "task"),
    ("The refund endpoint is still pending review by the payments team.", "task"),
])
def test_pending_is_work_left_only_where_it_leads_or_is_said_of_something(said: str,
                                                                          kind: str) -> None:
    from hippo.extract.cues import IMPERATIVE
    from hippo.extract.statements import Where, typed
    from hippo.extract.units import units

    assert typed(units(said)[0], Where("assistant"), IMPERATIVE) == kind


def test_any_verb_after_a_pronoun_is_a_verb() -> None:
    """A statement whose verb is none the selector lists ("backs", "covers") is no fragment
    when a pronoun is its subject."""
    said = ("**Why Redis?** It backs both the rate limiter and the product cache, so one "
            "service covers both.")
    assert texts([("assistant", said)]) == [
        ("Why Redis? It backs both the rate limiter and the product cache, so one service "
         "covers both.")]


@pytest.mark.parametrize("said", [
    "We deploy with Docker Compose behind nginx.",
    "Payments go through Stripe.",
])
def test_the_person_s_short_statement_of_a_named_thing_is_kept(said: str) -> None:
    assert texts([("user", said)]) == [said]


@pytest.mark.parametrize("said", [
    "Hi! I'm ready to help you with the CodeMie CLI codebase.",
    ("Since your request says “in env var,” I’m checking the local binary for any explicit "
     "environment variable name before deciding whether to set JSON or a raw env var."),
    "function loginUser(credentials: UserCredentials): UserSession {",
])
def test_a_greeting_narration_after_a_clause_and_a_line_opening_a_block_are_not_kept(
        said: str) -> None:
    assert texts([("assistant", said)]) == []
