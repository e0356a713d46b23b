"""`hippo doctor`: check that the store (one file, or a schema on a PostgreSQL server) is
consistent, and repair what can be repaired."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hippo.core import Hippo


@dataclass(slots=True)
class Check:
    name: str
    ok: bool
    detail: str = ""
    fixed: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": "check", "check": self.name, "ok": self.ok}
        if self.detail:
            out["detail"] = self.detail
        if self.fixed:
            out["fixed"] = self.fixed
        return out


def _fts(h: Hippo, table: str, fix: bool) -> Check:
    found = h.db.health.check_fulltext(table)  # busy (a writer, not a broken index): 75
    if not found.checked:  # FTS5 runs its check as a write: nothing known either way
        return Check(f"fts:{table}", True, "not checked: the database is read-only here")
    if found.error is None:
        return Check(f"fts:{table}", True)
    check = Check(f"fts:{table}", False, f"integrity-check failed: {found.error}")
    if fix:
        with h.db.transaction():
            h.db.health.rebuild_fulltext(table)
        check.fixed = "rebuilt the index from its table"
    return check


def _no_table(store: str, rows: int, what: str) -> Check:
    """A store without its vector table: sound only while it holds nothing to embed."""
    return Check(f"vectors:{store}", rows == 0, f"{rows} {what}, no vector table" if rows else "")


def _gaps(h: Hippo, store: str, unembedded: str,
          orphans: str) -> tuple[Check, list[int], list[int]]:
    """The store's rows without a vector and vectors without a row, and the check of them."""
    missing = h.db.reindex.unembedded(store)
    stale = h.db.reindex.orphan_vectors(store)
    check = Check(f"vectors:{store}", not missing and not stale,
                  f"{len(missing)} {unembedded}, {len(stale)} {orphans}"
                  if missing or stale else "")
    return check, missing, stale


def _brain_vectors(h: Hippo, fix: bool) -> Check:
    if not h.db.vectors.has("brain"):
        return _no_table("brain", h.db.stats.memory_count(active=True), "active memories")
    check, missing, stale = _gaps(h, "brain", "active memories without a vector",
                                  "vectors of inactive or missing memories")
    if fix and (missing or stale):
        from hippo.memory import brain

        recs = [brain.get(h.db, i) for i in missing]
        vectors = h.embed([r["text"] for r in recs]) if recs else []
        with h.db.transaction():
            for mid in stale:
                brain.vec_drop(h.db, mid)
            for rec, vec in zip(recs, vectors):
                brain.vec_put(h.db, rec["id"], rec, vec)
        check.fixed = f"embedded {len(missing)}, removed {len(stale)}"
    return check


def _echo_vectors(h: Hippo, fix: bool) -> Check:
    if not h.db.vectors.has("echo"):
        return _no_table("echo", h.db.chunks.count(every_project=True), "chunks")
    check, missing, stale = _gaps(h, "echo", "chunks without a vector", "orphan vectors")
    if fix and (missing or stale):
        from hippo.embed.cache import to_blob
        from hippo.timeutil import epoch

        rows = h.db.reindex.chunks_to_embed(missing) if missing else []
        vectors = h.embed([r["text"] for r in rows], store="echo") if rows else []
        with h.db.transaction():
            for cid in stale:
                h.db.reindex.drop_chunk_vector(cid)
            for r, v in zip(rows, vectors):
                h.db.reindex.put_chunk_vector(r["id"], to_blob(v), r["project"] or "",
                                              r["session_id"], epoch(r["started_at"]))
        check.fixed = f"embedded {len(rows)}, removed {len(stale)}"
    return check


# The stores whose searches score texts by late interaction (`hippo.retrieve.late`).
_SCORED = ("brain", "echo")


def _token_matrices(h: Hippo, fix: bool) -> Check:
    """Texts whose token matrix is not cached. Not a fault: a search encodes the ones it
    meets, a model pass each (seconds for transcript chunks). Texts written before writes
    cached them (Echo chunks before December 2026), or with `late_pool = 0`, lack one;
    `--fix` encodes them now."""
    from hippo.embed.cache import store_model
    from hippo.retrieve import tokencache
    from hippo.retrieve.params import load_params

    if load_params(h.settings).late_pool <= 0:
        return Check("token-matrices", True)
    missing: dict[str, list[str]] = {}
    for store in _SCORED:
        recorded = store_model(h.db, store)
        if recorded is None or h.db.meta.get(f"{store}.embedder") != "local":
            continue  # no vectors yet, or a model without token vectors
        missing[store] = h.db.health.texts_without_token_matrix(
            store, recorded[0] + tokencache.TOKENS_SUFFIX)
    count = sum(len(rows) for rows in missing.values())
    if not count:
        return Check("token-matrices", True)
    chunks, mems = len(missing.get("echo", [])), len(missing.get("brain", []))
    parts = [f"{chunks} transcript chunk{'s' * (chunks != 1)}",
             f"{mems} memor{'y' if mems == 1 else 'ies'}"]
    check = Check("token-matrices", True, f"{' and '.join(parts)} without a cached token "
                  "matrix: a search encodes each one it meets; --fix encodes them now")
    if fix:
        from hippo.console.progress import progress

        done = 0
        with progress("token matrices", total=count) as bar:
            for store, rows in missing.items():
                emb = h.embedder(store)
                for start in range(0, len(rows), 256):
                    part = rows[start : start + 256]
                    done += tokencache.warm_caches(h.db, emb, part)  # repeated texts: encoded once
                    bar.advance(len(part))
        check.fixed = f"encoded {done}"
    return check


def _token_repeats(h: Hippo, fix: bool) -> Check:
    """Token matrices cached before near-copies of a repeated token were dropped (December
    2026) are valid, only larger (up to twice, for transcript chunks). `--fix` compacts
    them from their stored planes: no model, about a millisecond each."""
    from hippo.retrieve import tokencache, tokenmatrix
    from hippo.store.embed_cache import TOKENS_DISTINCT_KEY

    if h.db.meta.get(TOKENS_DISTINCT_KEY) is not None:
        return Check("token-repeats", True)
    count = h.db.health.token_matrix_count(tokencache.TOKENS_SUFFIX)
    what = f"{count} token matri{'x' if count == 1 else 'ces'}"
    check = Check("token-repeats", True, f"{what} cached before December 2026 may keep "
                  "near-copies of repeated tokens (up to half their size); --fix compacts "
                  "them, no model needed" if count else "")
    if not fix:
        return check
    import struct

    from hippo.console.progress import progress

    compacted = saved = 0
    last = ("", "")
    with progress("token matrices", total=count) as bar:
        while True:
            rows = h.db.health.token_matrices_after(tokencache.TOKENS_SUFFIX, last, 500)
            if not rows:
                break
            last = (rows[-1]["model"], rows[-1]["content_hash"])
            with h.db.transaction():
                for r in rows:
                    blob = bytes(r["vector"])
                    try:
                        small = tokenmatrix.TokenMatrix.from_blob(blob).distinct().to_blob()
                    except (ValueError, struct.error):
                        continue  # damaged: a search encodes it again when it meets it
                    if len(small) < len(blob):
                        h.db.health.replace_token_matrix(r["model"], r["content_hash"], small)
                        compacted += 1
                        saved += len(blob) - len(small)
            bar.advance(len(rows))
    with h.db.transaction():
        h.db.meta.set(TOKENS_DISTINCT_KEY, "1")
    if count:
        check.fixed = (f"compacted {compacted} of {count} ({saved / 1e6:.1f} MB, reused by "
                       "later writes)")
    return check


def _provenance(h: Hippo, fix: bool) -> Check:
    dangling = h.db.health.dangling_provenance()
    check = Check("provenance", dangling == 0,
                  f"{dangling} provenance links point at missing Echo chunks" if dangling else "")
    if fix and dangling:
        with h.db.transaction():
            h.db.health.drop_dangling_provenance()
        check.fixed = f"removed {dangling} links (the memories keep their source record)"
    return check


def _provenance_sessions(h: Hippo, fix: bool) -> Check:
    """Links whose chunk belongs to a session the memory's `source` does not name: the
    chunk id was reused (before migration 0007) or the link is wrong; either way `show`
    would present another session's text as this memory's evidence."""
    rows = h.db.health.foreign_provenance()
    check = Check("provenance-sessions", not rows,
                  f"{len(rows)} provenance links point at a chunk of another session than "
                  f"their memory's source.session (e.g. memory {rows[0]['memory_id']} -> "
                  f"chunk {rows[0]['chunk_id']} of session {rows[0]['session_key']})"
                  if rows else "")
    if fix and rows:
        from hippo.memory import brain

        with h.db.transaction():
            for r in rows:
                brain.link(h.db, r["memory_id"], [r["chunk_id"]], actor="doctor", add=False)
        check.fixed = f"removed {len(rows)} links (the memories keep their source record)"
    return check


def _reference_cycles(h: Hippo) -> Check:
    """Chains of superseded_by or consolidated_into that lead back to where they began
    (`hippo supersede` refuses them; an import or an old hippo could write them)."""
    from hippo.memory.screen import cycles

    rows = h.db.memories.references()
    problems = []
    for column in ("superseded_by", "consolidated_into"):
        edges = {r["id"]: r[column] for r in rows if r[column] is not None}
        for loop in cycles(edges):
            problems.append(f"{column} cycle {' -> '.join(map(str, [*loop, loop[0]]))}")
    detail = "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)"
                                         if len(problems) > 5 else "")
    return Check("reference-cycles", not problems, detail + ("; break one with `hippo "
                 "supersede ID --clear` or `hippo edit`" if problems else ""))


def _watermarks(h: Hippo, fix: bool) -> Check:
    bad = []
    for path, offset in h.db.watermarks.offsets():
        try:
            size = os.path.getsize(path)
        except OSError:
            continue  # a file that is gone is history, not an inconsistency
        if offset > size:
            bad.append(path)
    check = Check("watermarks", not bad,
                  f"{len(bad)} watermarks beyond the end of their file (e.g. {bad[0]})"
                  if bad else "")
    if fix and bad:
        from hippo.ingest.forget import drop_file

        with h.db.transaction():
            for path in bad:
                # As ingest does for a replaced file: drop what was read; the next run re-reads.
                drop_file(h.db, path)
                h.db.watermarks.delete(path)
        check.fixed = f"{len(bad)} files reset; the next ingest reads them from the start"
    return check


def _models(h: Hippo) -> Check:
    from hippo.embed.cache import store_model
    from hippo.store.vectors import STORES

    problems = []
    for store in STORES:
        recorded = store_model(h.db, store)
        if not h.db.vectors.has(store):
            continue
        if recorded is None:
            problems.append(f"{store}: vectors but no recorded model")
            continue
        if not h.db.reindex.declares(store, recorded[1]):
            problems.append(f"{store}: table dimension differs from recorded {recorded[1]}")
    return Check("embedding-model", not problems, "; ".join(problems))


def _integrity(h: Hippo, fix: bool) -> tuple[Check, list[str]]:
    """SQLite's own check of the file, before hippo reads anything from it, and the schema
    steps it lacks. A damaged file is marked (writes refuse it); `fix` salvages every
    readable row into a new file that takes its place, the old one kept aside."""
    from hippo.config import is_server
    from hippo.errors import CorruptDatabase
    from hippo.store import clear_corrupt, connect, corrupt_marker, mark_corrupt

    if is_server(h.settings.database):
        return _server_integrity(h, fix)
    path = h.settings.db_path
    h.close()
    waiting: list[str] = []
    try:
        db = connect(path, busy_timeout_ms=int(h.settings["busy_timeout_ms"]), mode="read",
                     migrate=False)
        try:
            found = db.health.integrity(5)
            waiting = db.health.pending_migrations() if found == ["ok"] else []
        finally:
            db.close()
    except CorruptDatabase as exc:
        found = [str(exc.__cause__ or exc)]
    if found == ["ok"]:
        check = Check("sqlite-integrity", True)
        if corrupt_marker(path).exists():
            check = Check("sqlite-integrity", False, f"marked corrupt earlier ({corrupt_marker(path)}) "
                          "but SQLite's integrity check passes now; --fix clears the mark")
            if fix:
                clear_corrupt(path)
                check.fixed = "cleared the corrupt mark"
    else:
        detail = "; ".join(found)[:400]
        mark_corrupt(path, detail)
        check = Check("sqlite-integrity", False, f"{detail} (writes are refused until --fix "
                      "salvages every readable row into a new file)", data={"damaged": True})
        if fix:
            from hippo.store import rebuild

            report, aside = rebuild(path)
            kept = ", ".join(f"{n} {t}" for t, n in report.counts.items()
                             if t in ("memories", "echo_chunks", "audit"))
            lost = report.problems()
            check.fixed = (f"salvaged every readable row ({kept}) into a new file; the damaged "
                           f"one is kept as {aside}" + (f"; {len(lost)} unreadable, each on "
                                                        "stderr" if lost else ""))
            check.data["problems"] = lost
    if fix:
        h.read = False  # repairs write: the reopened file gets its missing schema steps
    elif waiting:
        return check, waiting
    return check, []


def _server_integrity(h: Hippo, fix: bool) -> tuple[Check, list[str]]:
    """A PostgreSQL store has no file of hippo's to check or salvage: the server checks its
    own pages (data checksums, amcheck) and keeps its own log. What hippo checks is that
    every table of its schema is there, and which schema steps are pending."""
    from hippo.store import connect

    h.close()
    db = connect(h.settings.database, busy_timeout_ms=int(h.settings["busy_timeout_ms"]),
                 mode="read", migrate=False)
    try:
        found = db.health.integrity(5)
        waiting = db.health.pending_migrations() if found == ["ok"] else []
    finally:
        db.close()
    if found != ["ok"]:
        return Check("schema-tables", False, "; ".join(found)[:400] + " (restore the "
                     "schema from a backup, or export what is readable and import it into "
                     "a new one)", data={"damaged": True}), []
    check = Check("sqlite-integrity", True, "not applicable: a PostgreSQL store has no "
                  "SQLite file (the server checks its own pages; --fix salvages only a file)")
    if fix:
        h.read = False  # repairs write: the store gets its missing schema steps
    elif waiting:
        return check, waiting
    return check, []


def run(h: Hippo, *, fix: bool = False) -> list[Check]:
    """Every check in order; with `fix`, repairs are applied and reported."""
    integrity, waiting = _integrity(h, fix)
    checks = [integrity]
    if integrity.data.get("damaged") and not integrity.fixed:
        return checks  # nothing below is trustworthy on a damaged file
    if waiting:  # without --fix the file stays as it is: nothing below reads an old schema
        checks.append(Check("schema", False, f"{len(waiting)} schema steps pending "
                            f"({', '.join(waiting)}); --fix (or any write command) applies them"))
        return checks
    fk = h.db.health.foreign_key_violations()
    checks.append(Check("foreign-keys", not fk, f"{fk} violations" if fk else ""))
    checks += [_fts(h, "memories_fts", fix), _fts(h, "echo_fts", fix), _models(h),
               _brain_vectors(h, fix), _echo_vectors(h, fix), _token_matrices(h, fix),
               _token_repeats(h, fix), _provenance(h, fix), _provenance_sessions(h, fix),
               _reference_cycles(h), _watermarks(h, fix)]
    return checks
