"""The body of `hippo search`, free of Typer: both the Typer command (`hippo.cli.search`) and
the fast path (`hippo.cli.fastpath`) call `run`."""

from __future__ import annotations

from typing import Any

from hippo.cli.plain import hippo_for, read_text_arg
from hippo.errors import UsageError

FORMATS = ("table", "json", "markdown")
# At a terminal the text gets the width; --wide adds the rest.
COLUMNS = ("id", "score", "type", "project", "date", "text")
WIDE = ("id", "score", "type", "tier", "project", "created_at", "importance", "tags", "text")
EXPLAIN_COLUMNS = ("id", "score", "bm25", "vector", "fused", "mmr", "fresh", "rerank", "text")


def run(root: dict[str, Any], query: str, *, env: Any = None, all_projects: bool = False,
        format_: str | None = None, budget: int = 800, min_score: float | None = None,
        project: str | None = None, db: str | None = None, embedder: str | None = None,
        json: bool = False, wide: bool = False, **request: Any) -> None:
    """Search and print: `root` holds the flags given before the command name; `request`
    the options that are the search request's (`search_options.REQUEST`).

    `min_score` None: 0 (keep all), but for --format markdown, text for a prompt, the
    prompt hook's floor, so a message about nothing stored prints nothing. `env`: what the
    call runs in (`hippo.console.environment`: streams, variables, cwd; default this process's)."""
    from hippo.app import search as app
    from hippo.cli.search_options import REQUEST
    from hippo.console.environment import current
    from hippo.console.output import want_json

    if format_ is not None and format_ not in FORMATS:
        raise UsageError(f"unknown format {format_!r}; choose {', '.join(FORMATS)}")
    # Text for a prompt: the hook's floor, and nothing of what was never stored
    # (`hippo.retrieve.answerable`).
    for_prompt = format_ == "markdown" and not json
    env = current(env)
    out, err = env.stdout, env.stderr
    text = read_text_arg(query, env)
    options = {REQUEST[name]: value for name, value in request.items()}
    for many in ("types", "tiers", "tags"):
        options[many] = options.get(many) or ()
    h = hippo_for(root, db=db, project=project, embedder=embedder, read=True, env=env)
    try:
        found = app.search(h, text, where=app.scope(every=all_projects), min_score=min_score,
                           prompt=for_prompt, **options)
    finally:
        h.close()
    for note in found.degraded:
        err.write(f"hippo: degraded: {note}\n")
    if _said(found, text, err):
        return
    results = found.results
    if format_ == "markdown" and not json:
        _markdown(results, budget, out, err)
    elif json or format_ == "json" or (format_ is None and want_json(False, env)):
        from hippo.console.output import write_json_lines

        write_json_lines(results, env)
    else:
        _table(results, bool(request.get("explain")), wide, env)


def _quoted(query: str) -> str:
    import shlex

    return shlex.quote(query) if len(query) <= 60 and query.isprintable() else "QUERY"


def _said(found: Any, text: str, err: Any) -> bool:
    """True (and the notes on stderr) when nothing is printed: every result under the
    floor, a question nothing stored answers, or nothing found (where else to look)."""
    from hippo.app import search as app

    for note in found.notes:
        if note.kind == app.UNDER_FLOOR:
            err.write(f"hippo: no result scored {note.floor:g} or more "
                      f"(best {note.best:.2f})\n")
        elif note.kind == app.UNANSWERED:
            err.write(f"hippo: {note.reason}: no memory answers this (nothing printed)\n")
        elif note.kind == app.ECHOED:
            n = note.count
            err.write(f"hippo: no memories match; Echo holds {n} "
                      f"chunk{'' if n == 1 else 's'} of "
                      f"{'every' if note.every else 'this'} project's sessions: "
                      f"try `hippo echo {_quoted(text)}`, or `hippo extract` to learn "
                      "memories from them\n")
        elif note.kind == app.ELSEWHERE:
            n, scope = note.count, note.project
            where = "global memories" if scope is None else f"project {scope!r} or global memories"
            err.write(f"hippo: no match in {where}; {n} active "
                      f"memor{'y is' if n == 1 else 'ies are'} in other projects "
                      "(--all-projects searches every project, -p NAME another one)\n")
    return not found.results


def _markdown(results: list[dict[str, Any]], budget: int, stdout: Any, stderr: Any) -> None:
    from hippo.retrieve.render import markdown

    out = markdown(results, budget)
    if out.text:
        stdout.write(out.text)
        stdout.flush()
    if out.omitted or out.truncated:
        cut = " (first one cut to fit)" if out.truncated else ""
        ids = " ".join(f"#{i}" for i in out.omitted)
        left = f", left out {len(out.omitted)}: {ids}" if out.omitted else ""
        stderr.write(f"hippo: {out.tokens}/{budget} tokens printed{cut}{left}\n")


def _rank(stage: dict[str, Any] | None) -> str:
    return "" if not stage else f"#{stage['rank']}"


def _table(results: list[dict[str, Any]], explain: bool, wide: bool = False,
           env: Any = None) -> None:
    from hippo.console.output import day, table

    rows = []
    for r in results:
        row = {**r, "date": day(r["created_at"]), "project": r["project"] or "global",
               "created_at": day(r["created_at"], wide=True)}
        if r.get("superseded_by"):
            row["text"] = f"{r['text']} (superseded by #{r['superseded_by']})"
        if explain:
            e = r["explain"]
            vector = e["vector"]
            row.update(
                bm25=_rank(e["bm25"]),
                vector=f"#{vector['rank']} d={vector['distance']:.3f}" if vector else "",
                fused=e["fused"]["score"], mmr=_rank(e["mmr"]), fresh=e["freshness"]["value"],
                rerank=_rank(e["rerank"]),
            )
        rows.append(row)
    table(rows, EXPLAIN_COLUMNS if explain else WIDE if wide else COLUMNS, wide=wide, env=env)
