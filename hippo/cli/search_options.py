"""The options of `hippo search`, written once.

The Typer command (`hippo.cli.search`) is built from this table, the Typer-free fast
path (`hippo.cli.fastpath`) reads argv by it, and `hippo.cli.search_run` turns the values
into a search request (`hippo.retrieve.request.SearchRequest`, its fields in `REQUEST`).
Plain tuples: the fast path imports this on every search, so nothing heavy is imported.
"""

from __future__ import annotations

# (parameter, option names, kind, default, help). Kinds as the fast path reads them:
# "flag" (no value; True), "toggle" (--x/--no-x: True/False, else None), "text", "path"
# (a file: not an existing directory, readable if it exists), "count" (an int ≥ 1), "unit"
# (a number in 0..1), "many" (repeatable text, collected in a list). help None: the
# option shared with other commands (`hippo.cli.common`, by parameter name).
OPTIONS: tuple[tuple[str, tuple[str, ...], str, object, str | None], ...] = (
    ("limit", ("--limit", "-n"), "count", None, "At most this many results (default 5)."),
    ("type_", ("--type", "-t"), "many", None, "Only this type; repeatable."),
    ("tier", ("--tier",), "many", None, "Only this tier; repeatable."),
    ("tag", ("--tag",), "many", None, "Must carry this tag; repeatable, all must match."),
    ("since", ("--since",), "text", None, "Created at or after: ISO date or 7d, 12h."),
    ("until", ("--until",), "text", None, "Created at or before: ISO date or 7d, 12h."),
    ("all_projects", ("--all-projects",), "flag", False,
     "Every project, not just the current one and global."),
    ("include_superseded", ("--include-superseded",), "flag", False,
     "Also superseded memories (their superseded_by is set)."),
    ("as_of", ("--as-of",), "text", None,
     ("What was held then: memories valid at this time (ISO date or 7d, 12h), replaced "
      "since or not.")),
    ("explain", ("--explain",), "flag", False,
     "Add every stage's rank and score to each result."),
    ("rerank", ("--rerank", "--no-rerank"), "toggle", None,
     "Rerank with Voyage (needs VOYAGE_API_KEY; default: the rerank setting)."),
    ("format_", ("--format", "-f"), "text", None,
     "table, json or markdown (default: table at a terminal, else json)."),
    ("budget", ("--budget", "-b"), "count", 800, "Token budget of --format markdown."),
    ("min_score", ("--min-score",), "unit", None,
     ("Leave out results scoring below this (scores compare across queries; 0.3 keeps what "
      "has some relevance). Default 0, but 0.3 for --format markdown, as the prompt hook, "
      "which also prints nothing for a question about a thing never stored (0 keeps "
      "all).")),
    ("project", ("--project", "-p"), "text", None, None),
    ("db", ("--db",), "text", None, None),
    ("embedder", ("--embedder",), "text", None, None),
    ("json", ("--json",), "flag", False, None),
    ("wide", ("--wide", "-w"), "flag", False, None),
)

# Parameter → `SearchRequest` field, for the options that are the request's
# (`--all-projects` is its `projects`: None, every project).
REQUEST: dict[str, str] = {
    "limit": "limit", "type_": "types", "tier": "tiers", "tag": "tags", "since": "since",
    "until": "until", "include_superseded": "include_superseded", "as_of": "as_of",
    "explain": "explain",
    "rerank": "rerank",
}
