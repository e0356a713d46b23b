"""`hippo show`: the full record of memories, with provenance and audit history."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from hippo.cli.common import DbOpt, JsonOpt, open_hippo, parse_ids

_WORD = re.compile(r"\w{2,}")
# Words too common to tell one line from another.
_COMMON = frozenset((
    "the", "and", "for", "with", "that", "this", "from", "are", "was", "were", "is", "be",
    "to", "of", "in", "on", "at", "by", "it", "its", "as", "or", "an", "not", "but", "you",
    "your", "we", "our", "they", "their", "has", "have", "had", "will", "would", "can",
    "could", "should", "all", "any", "some", "into", "then", "than", "also", "just", "so",
    "do", "does", "did"))
EXTRA_LINE_COST = 1.5  # a further line must bring two more of the memory's words
# A transcript line can be a whole paragraph: past this length it is cut into sentences.
LONG_LINE = 240
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
EVIDENCE_UNITS = 3  # at most this many consecutive lines (or sentences) are shown


def show(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(help="Memory ids.")],
    history: Annotated[bool, typer.Option(help="Include the audit history.")] = True,
    db: DbOpt = None,
    json: JsonOpt = False,
) -> None:
    """Show memories: every field, where each came from, and what changed it.

    The chain of validity: what the memory replaced (`replaces`) and what replaced it
    (`replaced_by`), when, and on what evidence (the run, the replacing memory's chunks).

    A memory learnt from a transcript shows the lines of its source chunk it was taken
    from (the whole chunk is `hippo echo`'s, or in --json's provenance).

    \b
    Examples:
      hippo show 7
      hippo show 7 12 --no-history --json
    """
    from hippo.app import memory
    from hippo.console.output import want_json, write_json_lines

    h = open_hippo(ctx, db=db, read=True)
    out = []
    for memory_id in parse_ids(ids):
        shown = memory.get(h, memory_id, history=history)
        rec = shown.record
        rec["provenance"] = shown.sources
        for src in rec["provenance"]:
            if src.get("text"):
                src["evidence"] = evidence(src["text"], rec["text"])
        rec.update(shown.chain)
        if shown.history is not None:
            rec["history"] = shown.history
        out.append(rec)
    if want_json(json):
        write_json_lines(out)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    for rec in out:
        t = Table(show_header=False, title=f"memory {rec['id']}", title_justify="left")
        t.add_column("field", style="bold")
        t.add_column("value", overflow="fold")
        for key, value in rec.items():
            if key in ("provenance", "history", "replaces", "replaced_by"):
                continue
            t.add_row(key, "" if value is None else str(value))
        console.print(t)
        for src in rec["provenance"]:
            console.print(f"  source chunk {src['chunk_id']}: {src['source_path']} "
                          f"lines {src['line_start']}-{src['line_end']} ({src['session_key']})",
                          markup=False)
            for line in src.get("evidence") or []:  # transcript text is never rich markup
                console.print(f"    > {line}", markup=False)
        _print_chain(console, rec)
        for ev in rec.get("history", []):
            console.print(f"  {ev['at']}  {ev['action']:<12} by {ev['actor']}"
                          + (f"  run {ev['run_id']}" if ev["run_id"] else ""), markup=False)


def _print_chain(console: Any, rec: dict[str, Any]) -> None:
    """What the memory replaced and what replaced it, when, and on what evidence."""
    for old in rec["replaces"]:
        run = f", run {old['run_id']}" if old["run_id"] else ""
        console.print(f"  replaces #{old['id']} (valid until {old['valid_to']}{run}): "
                      f"{old['text']}", markup=False)
    new = rec["replaced_by"]
    if new:
        why = [f"by {new['by']}"] if new["by"] else []
        why += [f"run {new['run_id']}"] if new["run_id"] else []
        why += [f"source chunk{'s' * (len(new['chunks']) > 1)} "
                + ", ".join(map(str, new["chunks"]))] if new["chunks"] else []
        console.print(f"  replaced by #{new['id']} at {new['at']}"
                      + (f" ({'; '.join(why)})" if why else "") + f": {new['text'] or ''}",
                      markup=False)


def _units(text: str) -> list[str]:
    """The chunk's lines, a long one cut into its sentences."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        out += [p for p in _SENTENCE.split(line) if p] if len(line) > LONG_LINE else [line]
    return out


def evidence(chunk: str, memory: str) -> list[str]:
    """The lines of a source chunk a memory was taken from: the run of at most
    EVIDENCE_UNITS consecutive lines (or sentences of a long line) that holds most of the
    memory's words, the shortest such run first. Extraction records the chunk, not the
    line, so the lines are found again by their words; none in common: the chunk's start."""
    units = _units(chunk)
    want = _words(memory)
    if not units:
        return []
    words = [_words(u) & want for u in units]
    best: tuple[float, int] = (0.0, 0)  # (words covered less the extra lines' cost, -start)
    span = (0, 1)
    for start in range(len(units)):
        covered: set[str] = set()
        for end in range(start, min(start + EVIDENCE_UNITS, len(units))):
            covered |= words[end]
            score = (len(covered) - EXTRA_LINE_COST * (end - start), -start)
            if score > best:
                best, span = score, (start, end + 1)
    if best[0] <= 0:
        return [_clip(units[0])]
    return [_clip(u) for u in units[span[0]:span[1]]]


def _words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _COMMON}


def _clip(line: str, width: int = 400) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


__all__: list[Any] = ["evidence", "show"]
