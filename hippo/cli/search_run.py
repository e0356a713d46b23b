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
    call runs in (`hippo.app.environment`: streams, variables, cwd; default this process's)."""
    from hippo.app.environment import current
    from hippo.cli.search_options import REQUEST
    from hippo.output import want_json
    from hippo.retrieve.pipeline import search

    if format_ is not None and format_ not in FORMATS:
        raise UsageError(f"unknown format {format_!r}; choose {', '.join(FORMATS)}")
    # Text for a prompt: the hook's floor, and nothing of what was never stored
    # (`hippo.retrieve.answerable`).
    for_prompt = format_ == "markdown" and not json
    if min_score is None:
        min_score = 0.0
        if for_prompt:
            from hippo.layers.recall import MIN_SCORE

            min_score = MIN_SCORE
    env = current(env)
    out, err = env.stdout, env.stderr
    text = read_text_arg(query, env)
    options = {REQUEST[name]: value for name, value in request.items()}
    for many in ("types", "tiers", "tags"):
        options[many] = options.get(many) or ()
    h = hippo_for(root, db=db, project=project, embedder=embedder, read=True, env=env)
    try:
        found = search(h, text, projects=None if all_projects else ..., **options)
        # Nothing in the default scope (this project and global): say where memories are,
        # so a search from the wrong directory is not mistaken for an empty memory.
        elsewhere = (_elsewhere(h) if not found.results and not all_projects and found.query
                     else 0)
        # An empty Brain beside an Echo full of this project's sessions: hippo has read
        # them but learnt nothing yet, which silence would pass off as "nothing known".
        echoed = _echoed(h, all_projects) if not found.results and found.query else 0
        scope = h.project
        why = (_unanswered(h, text, all_projects) if for_prompt and min_score > 0
               and any(r["score"] >= min_score for r in found.results) else "")
    finally:
        h.close()
    for note in found.degraded:
        err.write(f"hippo: degraded: {note}\n")
    results = [r for r in found.results if r["score"] >= min_score]
    if _withheld(found.results, results, min_score, why, err):
        return
    if not results:
        if echoed:
            err.write(f"hippo: no memories match; Echo holds {echoed} "
                             f"chunk{'' if echoed == 1 else 's'} of "
                             f"{'every' if all_projects else 'this'} project's sessions: "
                             f"try `hippo echo {_quoted(text)}`, or `hippo extract` to learn "
                             "memories from them\n")
        if elsewhere:
            where = "global memories" if scope is None else f"project {scope!r} or global memories"
            err.write(f"hippo: no match in {where}; {elsewhere} active "
                             f"memor{'y is' if elsewhere == 1 else 'ies are'} in other projects "
                             "(--all-projects searches every project, -p NAME another one)\n")
        return
    if format_ == "markdown" and not json:
        _markdown(results, budget, out, err)
    elif json or format_ == "json" or (format_ is None and want_json(False, env)):
        from hippo.output import write_json_lines

        write_json_lines(results, env)
    else:
        _table(results, bool(request.get("explain")), wide, env)


def _quoted(query: str) -> str:
    import shlex

    return shlex.quote(query) if len(query) <= 60 and query.isprintable() else "QUERY"


# Only asked when a search found nothing: is the scope's Brain empty, and its Echo not?
def _echoed(h: Any, every: bool) -> int:
    """Echo chunks of the current project (`every`: of every project) when no memory is in
    scope (else 0)."""
    if h.db.memories.active_in_scope(h.project) or (
            every and h.db.memories.active_elsewhere(h.project)):
        return 0
    return h.db.chunks.count(h.project, every_project=every or h.project is None)


def _withheld(found: list[dict[str, Any]], results: list[dict[str, Any]], min_score: float,
              why: str, err: Any) -> bool:
    """True (and one stderr line why) when what was found is not printed: every result
    under the floor, or a question nothing stored answers."""
    if found and not results:
        best = max(r["score"] for r in found)
        err.write(f"hippo: no result scored {min_score:g} or more (best {best:.2f})\n")
        return True
    if results and why:
        err.write(f"hippo: {why}: no memory answers this (nothing printed)\n")
        return True
    return False


def _unanswered(h: Any, text: str, every: bool) -> str:
    """Why nothing stored answers `text` in the search's scope ("" when something may)."""
    from hippo.layers.recall import unanswered

    return unanswered(h, text, None if every else tuple(dict.fromkeys((h.project, None))))


def _elsewhere(h: Any) -> int:
    from hippo.brain import active_elsewhere

    return active_elsewhere(h.db, h.project)


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
    from hippo.output import day, table

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
