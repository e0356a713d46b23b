"""The MCP server of `hippo mcp`: the tools, their descriptions for the model, and the
translation of hippo errors into MCP tool errors (the CLI's one line, never a traceback).

Built on the official SDK's `MCPServer` (mcp 2.x; 1.x called it FastMCP). Each tool is a
sync function: the SDK runs it on a worker thread, and `Tools.call` serialises them.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at runtime.
import inspect
import re
from collections.abc import Callable
from typing import Annotated, Any

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from hippo import __version__
from hippo.errors import HippoError, scrub
from hippo.layers.hint import REMEMBER_HINT, AgentSettings
from hippo.mcp.tools import Tools
from hippo.memory.records import MAX_ID

INSTRUCTIONS = """\
hippo is this user's long-term memory for coding work: curated memories (rules, decisions,
facts, procedures, tasks) and an archive of past session transcripts, for the project of
the directory the agent runs in plus global ones. Call `search` before answering anything
that depends on how this project or this user works. {remember} Do not store secrets,
one-off command output, or what the code itself already says."""
REMEMBER_PLAIN_INSTRUCTION = ("Call `remember` when you learn something durable a future "
                              "session should know.")

Text = Annotated[str, Field(description="A self-contained statement, one fact or decision "
                                        "per memory, readable without this conversation.")]
# Bounded as the store's ids are (SQLite's INTEGER): a larger one is a validation error.
Id = Annotated[int, Field(description="A memory id, as search or remember returned it.", ge=1,
                          le=MAX_ID)]

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                        open_world_hint=False)
CHANGE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def answer(fn: Callable[[], dict[str, Any]]) -> CallToolResult:
    """A tool's result: compact JSON text, or a tool error with the CLI's one line."""
    try:
        value = fn()
    except HippoError as exc:
        return _error(f"hippo: {exc}")
    except Exception as exc:  # noqa: BLE001 - as the CLI: one line, never a traceback
        return _error(f"hippo: unexpected {type(exc).__name__}: {exc}")
    text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _error(line: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=scrub(line))], is_error=True)


REMEMBER = """\
Store one durable memory for future sessions (authored by the machine).

Re-storing a statement that exists reinforces it instead of duplicating it. Returns
{"action": "added" or "reinforced", "id", ...}. Secrets are masked before storing. Not for
scratch notes, command output, or what the code already says; a session has a bounded
number of writes. A rule or preference you store is found by search at once but joins the
always-loaded rule floor only after a person verifies it."""
REMEMBER_PLAIN = ("Call it when you learn something a later session should know. One "
                  "statement per call, written to stand alone.")


def remember_description(hint: bool) -> str:
    """The `remember` tool's description: when to call it is `hippo.layers.hint`'s one
    text (`[agents] remember_hint = false`: a plain sentence instead)."""
    head, _, rest = REMEMBER.partition("\n\n")
    return f"{head}\n\n{REMEMBER_HINT if hint else REMEMBER_PLAIN}\n\n{rest}"


def build(engine: Tools) -> MCPServer:
    """The server with every tool bound to `engine` (the warm `Tools`)."""
    hint = AgentSettings.from_settings(engine.h.settings).remember_hint
    server = MCPServer("hippo", version=__version__, instructions=INSTRUCTIONS.format(
        remember=REMEMBER_HINT if hint else REMEMBER_PLAIN_INSTRUCTION), log_level="WARNING")
    e = engine

    @server.tool(annotations=READ)
    def search(
        query: Annotated[str, Field(description="What you need to know, in plain words or "
                                                "with the identifiers involved.")],
        limit: Annotated[int, Field(description="At most this many results (1-50).")] = 5,
        type: Annotated[list[str] | None, Field(description="Only these memory types, e.g. "
                                                '["rule", "decision"].')] = None,
        project: Annotated[str | None, Field(description="Another project's memories (plus "
                                                         "global ones) instead of the "
                                                         "current project's.")] = None,
        min_score: Annotated[float, Field(description="Leave out results scoring below "
                                                      "this (0-1; 0.3 keeps what has some "
                                                      "relevance).")] = 0.0,
        all_projects: Annotated[bool, Field(description="Search every project.")] = False,
    ) -> CallToolResult:
        """Search the user's curated memories (rules, decisions, facts, procedures, tasks)
        for the current project and global ones: keywords and meaning together, best first.

        Call it before you decide how to do something in this codebase, when the user
        refers to an earlier decision or convention, or when you are about to repeat a
        fix. Returns {"results": [{id, text, type, project, score 0-1, tags, importance,
        date, provenance}]}; scores compare across queries. An empty list means nothing
        stored matches. Not for the raw transcript of past sessions: use `echo`.
        """
        return answer(lambda: e.search(query, limit=limit, type_=type or (),
                                       project=project, min_score=min_score,
                                       all_projects=all_projects))

    @server.tool(annotations=WRITE, description=remember_description(hint))
    def remember(
        text: Text,
        type: Annotated[str, Field(description="rule, decision, fact, procedure, preference, "
                                               "task, todo, tool, config, people, insight, "
                                               "architecture or observability.")],
        importance: Annotated[float | None, Field(description="0-1; 0.5 by default, 0.8+ "
                                                              "for what must not be "
                                                              "missed.")] = None,
        tags: Annotated[list[str] | None, Field(description="A few lowercase topic tags.")
                        ] = None,
        project: Annotated[str | None, Field(description="Store it under this project "
                                                         "instead of the current one.")
                           ] = None,
        global_memory: Annotated[bool, Field(description="Store it for every project (a "
                                                         "preference of the user's, not of "
                                                         "this codebase).")] = False,
    ) -> CallToolResult:
        return answer(lambda: e.remember(text, type, importance=importance, tags=tags or (),
                                         project=project, global_=global_memory))

    @server.tool(annotations=READ)
    def echo(
        query: Annotated[str, Field(description="Words or identifiers said in the past "
                                                "session.")],
        session: Annotated[str | None, Field(description="Only this session id (from a "
                                                         "memory's provenance).")] = None,
        limit: Annotated[int, Field(description="At most this many chunks (1-50).")] = 5,
        context: Annotated[int, Field(description="Also return N neighbouring chunks on each "
                                                  "side (0-5).")] = 0,
    ) -> CallToolResult:
        """Search the archive of past session transcripts (what was actually said).

        Call it when a memory is not enough: to read the discussion behind a decision, an
        exact error message or command from an earlier session, or what a memory's source
        session said. Returns {"results": [{id, score, session, project, roles,
        started_at, where (file and lines), text, context?}]}, across every project. Not
        the first place to look: `search` the curated memories first.
        """
        return answer(lambda: e.echo(query, session=session, limit=limit, context=context))

    @server.tool(annotations=READ)
    def context(
        route: Annotated[bool, Field(description="Also return the project's procedures "
                                                 "(domain guidance).")] = False,
        topic: Annotated[list[str] | None, Field(description="Guidance for these topics "
                                                             "(tags).")] = None,
        budget: Annotated[int, Field(description="Token budget of the rules.")] = 800,
    ) -> CallToolResult:
        """The rule floor: the standing rules of this project and global ones, as Markdown
        within a token budget (and, with route or topic, the matching procedures).

        Call it once at the start of a task if the rules were not already given to you.
        Returns {"text": Markdown, "tokens", "layers": what was included, left out, or held
        back for a person's review}. Not a search: use `search` for a question.
        """
        return answer(lambda: e.context(route=route, topic=topic or (), budget=budget))

    @server.tool(annotations=READ)
    def get(id: Id) -> CallToolResult:
        """One memory whole: every field, its provenance line, the source transcript chunks
        it was learned from (file, lines, text) and its change history.

        Call it to check where a search result came from before relying on it. Returns the
        full record plus "provenance", "sources" and "history".
        """
        return answer(lambda: e.get(id))

    @server.tool(annotations=CHANGE)
    def supersede(
        old_id: Annotated[int, Field(description="The memory that is out of date.", ge=1,
                                     le=MAX_ID)],
        text: Text,
    ) -> CallToolResult:
        """Replace an outdated memory: store `text` as a new memory (same type, project and
        tags) and mark the old one superseded, so default search returns the new one.

        Call it when you find a memory is no longer true and know what is true now. Returns
        {"old", "new", "action"}. Not for adding detail to a true memory: `remember` that.
        What a person wrote is never changed: `text` is stored beside it as a conflict for
        them to settle (action "conflict"); tell the user.
        """
        return answer(lambda: e.supersede(old_id, text))

    @server.tool(annotations=CHANGE)
    def forget(id: Id) -> CallToolResult:
        """Forget a memory that is wrong or was stored by mistake (a soft delete that a
        person can undo). Prefer `supersede` when you know what replaced it. Only what an
        agent wrote: forgetting what a person wrote is refused (ask the user)."""
        return answer(lambda: e.forget(id))

    @server.tool(annotations=CHANGE)
    def done(id: Id) -> CallToolResult:
        """Mark a task or todo memory done: it leaves default search. Only for task-like
        types (task, todo, observability)."""
        return answer(lambda: e.done(id))

    @server.tool(annotations=CHANGE)
    def verify(id: Id) -> CallToolResult:
        """Record that a memory was reviewed and is still true. This is a person's review:
        it is refused unless the user allowed agents to verify ([mcp] allow_verify); when
        refused, ask the user to run `hippo verify ID` themselves."""
        return answer(lambda: e.verify(id))

    tools = (search, remember, echo, context, get, supersede, forget, done, verify)
    server.middleware.append(ArgumentCheck(
        {fn.__name__: tuple(inspect.signature(fn).parameters) for fn in tools}))
    return server


class ArgumentCheck:
    """Middleware: an argument a tool does not take (`pinned`, `verified_at`, a typo) is a
    tool error naming the ones it takes, instead of being dropped silently; and the SDK's
    multi-line validation report becomes one line."""

    def __init__(self, params: dict[str, tuple[str, ...]]) -> None:
        self.params = params

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call" or not isinstance(ctx.params, dict):
            return await call_next(ctx)
        name = ctx.params.get("name")
        args = ctx.params.get("arguments") or {}
        known = self.params.get(str(name))
        if known is not None and isinstance(args, dict):
            extra = sorted(set(args) - set(known))
            if extra:
                return _error(f"hippo: {name} takes no argument {extra[0]!r}; it takes "
                              f"{', '.join(known) or 'none'}")
        result = await call_next(ctx)  # the wire form: a dict with camelCase keys
        content = result.get("content") if isinstance(result, dict) else None
        if result.get("isError") and content and isinstance(content[0], dict):  # type: ignore[union-attr]
            text = str(content[0].get("text", ""))
            if "validation error" in text:
                content[0] = {"type": "text", "text": scrub(one_line(str(name), text))}
        return result


_PYDANTIC = re.compile(r"^(?P<field>[A-Za-z_][\w.]*)\n\s+(?P<msg>[^\[\n]+)", re.MULTILINE)


def one_line(tool: str, report: str) -> str:
    """`hippo: search: limit: Input should be a valid integer` from pydantic's report."""
    found = [f"{m['field']}: {m['msg'].strip()}" for m in _PYDANTIC.finditer(report)]
    return f"hippo: {tool}: " + ("; ".join(found) if found else report.splitlines()[0])
