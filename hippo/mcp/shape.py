"""What a model sees of a memory: its useful fields and one line of provenance."""

from __future__ import annotations

from typing import Any

SNIPPET = 600  # characters of a source chunk `get` returns (the rest: `echo`)


def provenance(rec: dict[str, Any]) -> str:
    """One line: who wrote it, when, and where it came from (session, file and lines)."""
    src = rec.get("source") or {}
    bits = [f"{rec['author']}-written {str(rec['created_at'])[:10]}"]
    if src.get("session"):
        where = f"session {src['session']}"
        if src.get("file"):
            lines = src.get("lines")
            where += f" ({src['file']}" + (f" lines {lines[0]}-{lines[1]})" if lines else ")")
        bits.append(f"from {where}")
    elif src.get("via"):
        bits.append(f"via {src['via']}")
    if rec.get("confirmed_at"):
        bits.append(f"confirmed {str(rec['confirmed_at'])[:10]}")
    if rec.get("verified_at"):
        bits.append("verified by a person")
    return "; ".join(bits)


def compact(rec: dict[str, Any]) -> dict[str, Any]:
    """The record's useful fields for a model: no nulls, no defaults worth nothing."""
    out: dict[str, Any] = {"id": rec["id"], "text": rec["text"], "type": rec["type"],
                           "project": rec["project"] or "global"}
    if "score" in rec:
        out["score"] = round(float(rec["score"]), 3)
    if rec.get("tags"):
        out["tags"] = rec["tags"]
    out["importance"] = rec["importance"]
    out["date"] = str(rec["created_at"])[:10]
    for key in ("pinned", "canonical"):
        if rec.get(key):
            out[key] = True
    if rec.get("status", "active") != "active":
        out["status"] = rec["status"]
    if rec.get("superseded_by"):
        out["superseded_by"] = rec["superseded_by"]
    out["provenance"] = provenance(rec)
    return out


def snip(text: str | None) -> str | None:
    """`text` cut to SNIPPET characters, an ellipsis marking the cut."""
    if text is None or len(text) <= SNIPPET:
        return text
    return text[:SNIPPET] + "…"
