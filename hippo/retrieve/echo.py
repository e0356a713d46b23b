"""Echo transcript search: FTS5 BM25 + exact cosine KNN over chunks, fused by RRF.

Searched only when asked (`hippo echo`). Filters (session, project, time, role) apply inside
both retrievers. Degrades like Brain search: no embedder → lexical only; no FTS → vector only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hippo.retrieve.constants import BM25, VECTOR

if TYPE_CHECKING:
    from hippo.core import Hippo

CANDIDATES = 30


@dataclass(slots=True)
class EchoFilters:
    sessions: Sequence[str] = ()
    projects: Sequence[str | None] | None = None  # None: every project
    since: str | None = None
    until: str | None = None
    roles: Sequence[str] = ()


@dataclass(slots=True)
class EchoResult:
    results: list[dict[str, Any]]
    degraded: list[str] = field(default_factory=list)


def _where(f: EchoFilters) -> tuple[str, list[Any]]:
    parts, params = ["1"], []
    if f.sessions:
        parts.append(f"e.session_key IN ({','.join('?' * len(f.sessions))})")
        params.extend(f.sessions)
    if f.projects is not None:
        named = [p for p in f.projects if p is not None]
        clause = []
        if named:
            clause.append(f"c.project IN ({','.join('?' * len(named))})")
            params.extend(named)
        if any(p is None for p in f.projects):
            clause.append("c.project IS NULL")
        parts.append("(" + (" OR ".join(clause) or "0") + ")")
    if f.since:
        parts.append("c.started_at >= ?")
        params.append(f.since)
    if f.until:
        parts.append("c.started_at <= ?")
        params.append(f.until)
    if f.roles:
        parts.append("(" + " OR ".join("(',' || c.roles || ',') LIKE ?" for _ in f.roles) + ")")
        params.extend(f"%,{r},%" for r in f.roles)
    return " AND ".join(parts), params


def lexical(h: Hippo, query: str, f: EchoFilters, n: int = CANDIDATES) -> list[int] | None:
    """Chunk ids by BM25 (AND, then OR when AND finds too little); None: no usable terms."""
    from hippo.retrieve.ftsquery import build_match

    where, params = _where(f)
    sql = ("SELECT c.id FROM echo_fts JOIN echo_chunks c ON c.id = echo_fts.rowid "
           "JOIN echo_sessions e ON e.id = c.session_id "
           f"WHERE echo_fts MATCH ? AND {where} ORDER BY bm25(echo_fts) LIMIT ?")
    out: list[int] = []
    tried = False
    for mode in ("and", "or"):
        match = build_match(query, mode)  # type: ignore[arg-type]
        if match is None:
            continue
        tried = True
        for (cid,) in h.db.execute(sql, (match, *params, n)):
            if cid not in out:
                out.append(cid)
        if len(out) >= 5:
            break
    return out[:n] if tried else None


def semantic(h: Hippo, vector: Any, f: EchoFilters, n: int = CANDIDATES) -> list[tuple[int, float]]:
    """Chunk ids by exact cosine distance, filters applied in the same query."""
    from hippo.vectors import to_blob

    where, params = _where(f)
    if not f.sessions and not f.since and not f.until and not f.roles and f.projects is None:
        sql = ("SELECT chunk_id, distance FROM echo_vec WHERE embedding MATCH ? AND k = ? "
               "ORDER BY distance")
        return [(int(a), float(b)) for a, b in h.db.execute(sql, (to_blob(vector), n))]
    # Filtered: an exact scan of the matching rows (vec_distance_cosine), still brute force.
    sql = ("SELECT c.id, vec_distance_cosine(v.embedding, ?) AS d FROM echo_vec v "
           "JOIN echo_chunks c ON c.id = v.chunk_id JOIN echo_sessions e ON e.id = c.session_id "
           f"WHERE {where} ORDER BY d LIMIT ?")
    return [(int(a), float(b)) for a, b in h.db.execute(sql, (to_blob(vector), *params, n))]


def search(h: Hippo, query: str, *, filters: EchoFilters | None = None, limit: int = 5,
           context: int = 0, rrf_k: int = 60) -> EchoResult:
    """The best transcript chunks for `query`, with where each came from."""
    from hippo import echo
    from hippo.retrieve.fuse import fuse

    f = filters or EchoFilters()
    degraded: list[str] = []
    rankings: dict[str, list[int]] = {}
    distances: dict[int, float] = {}
    has_vec = bool(h.db.scalar("SELECT 1 FROM sqlite_master WHERE name = 'echo_vec'"))
    if has_vec and query.strip():
        try:
            (qv,) = h.embed([query], store="echo")
            hits = semantic(h, qv, f)
            rankings[VECTOR] = [cid for cid, _ in hits]
            distances = dict(hits)
        except Exception as exc:  # noqa: BLE001 - any embedder failure degrades to lexical
            degraded.append(f"embedder unavailable ({type(exc).__name__}: {exc}); lexical only")
    try:
        lex = lexical(h, query, f)
        if lex is None:
            degraded.append("no usable search terms; vector only")
        else:
            rankings[BM25] = lex
    except Exception as exc:  # noqa: BLE001 - FTS failure degrades to vector only
        degraded.append(f"full-text index unavailable ({exc}); vector only")
    if not rankings:
        return EchoResult([], degraded)
    fused = fuse(rankings, k=rrf_k)[:limit]
    rows = echo.chunks(h.db, [x.id for x in fused])
    results = []
    for x in fused:
        row = rows.get(x.id)
        if row is None:
            continue
        rec = echo.to_record(row)
        rec["score"] = round(x.score, 6)
        rec["ranks"] = dict(x.ranks)
        if x.id in distances:
            rec["distance"] = round(distances[x.id], 6)
        rec["degraded"] = degraded
        if context:
            rec["context"] = echo.neighbours(h.db, row, context)
        results.append(rec)
    return EchoResult(results, degraded)
