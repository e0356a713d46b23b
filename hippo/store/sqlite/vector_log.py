"""SQLite: the vector log (schema step 0008), what a warm process's in-memory index syncs
from (`hippo.warm.index`): every vector write records its memory's id under the next
sequence number, in the same transaction; `sync` reads what changed since a number, or
hands every vector over when the file is not the one the caller knew."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import apsw

# What a warm index holds is current when none of these changed: the file (its first
# step's stamp), its schema (a reindex swaps the table), the Brain's model, the log.
LOG_STATE = (
    "SELECT (SELECT applied_at FROM _migrations WHERE name = '0001_core'), "
    "(SELECT schema_version FROM pragma_schema_version), "
    "(SELECT value FROM meta WHERE key = 'brain.embed_model'), "
    "(SELECT value FROM meta WHERE key = 'brain.embed_dim'), "
    "(SELECT count(*) FROM sqlite_master WHERE name = 'memories_vec'), "
    "(SELECT coalesce(max(seq), 0) FROM vector_log)"
)
LOG_SINCE = "SELECT memory_id FROM vector_log WHERE seq > ? ORDER BY seq"
# The log's last entries up to a sequence number, with each one's vector now: a warm index
# checks that the entries it saw last are still the file's (a copy written back over the
# file in place can have reached the same or a higher number by other writes).
LOG_TAIL = "SELECT memory_id, seq FROM vector_log WHERE seq > ? AND seq <= ? ORDER BY seq"
LOG_WINDOW = ("SELECT l.memory_id, l.seq, v.embedding FROM vector_log l LEFT JOIN memories_vec v "
              "ON v.memory_id = l.memory_id WHERE l.seq > ? AND l.seq <= ? ORDER BY l.seq")
TAIL_ROWS = 16  # (each costs a vec0 lookup, ~5 µs, on every search of a warm process)
VEC_ROW = "SELECT embedding, project, type, tier, created FROM memories_vec WHERE memory_id = ?"
VEC_ALL = "SELECT memory_id, embedding, project, type, tier, created FROM memories_vec"
VEC_COUNTS = "SELECT project, count(*) FROM memories_vec GROUP BY project"
CHANGES_MOST = 20_000  # more changed ids than this: reload everything instead


class VectorSync(NamedTuple):
    """What `sync` found: `status` "busy" (this connection is inside
    a transaction: nothing read), "nolog" (an unmigrated file), "changes" (`changed`: each
    changed id's (id, blob or None, project, type, tier, created)) or "loaded" (every
    vector was handed to `load`). `window`: the log's entries in the TAIL_ROWS before the
    caller's `seq` as the file has them now, each (id, seq, blob or None); `tail`: those
    before the new `seq`, each (id, seq), for the caller's next check."""

    status: str
    ident: tuple[Any, ...] = ()
    seq: int = 0
    changed: tuple[tuple[Any, ...], ...] = ()
    window: tuple[tuple[Any, ...], ...] = ()
    tail: tuple[tuple[int, int], ...] = ()


def sync(db: Any, known: tuple[Any, ...] | None, seq: int,
         load: Callable[[tuple[Any, ...], dict[str, int], Iterable[tuple[Any, ...]]], None]
         ) -> VectorSync:
    """In one read transaction (a consistent view): when the store is still `known`
    (`VectorSync.ident`), the vectors changed since log entry `seq`; otherwise every
    vector, handed to `load(ident, count by project, rows)` while the transaction is open."""
    if db.conn.in_transaction:  # what it sees may never be committed
        return VectorSync("busy")
    db.execute("BEGIN")
    try:
        try:
            row: tuple[Any, ...] = db.execute(LOG_STATE).fetchall()[0]
        except apsw.SQLError:  # no vector_log: a file without schema step 0008
            return VectorSync("nolog")
        ident, has_table, last = row[:4], row[4], int(row[5])
        if ident == known and has_table and last >= seq:  # (less: a file copied back)
            window = tuple(db.execute(LOG_WINDOW, (seq - TAIL_ROWS, seq)))
            tail = tuple((int(i), int(q)) for i, q, _ in window) if last == seq else \
                _tail(db, last)
            if last == seq:
                return VectorSync("changes", ident, last, (), window, tail)
            changed = [r[0] for r in db.execute(LOG_SINCE, (seq,))]
            if len(changed) <= CHANGES_MOST:
                rows = [(i, *(db.execute(VEC_ROW, (i,)).fetchone() or (None,) * 5))
                        for i in changed]
                return VectorSync("changes", ident, last, tuple(rows), window, tail)
        tail = _tail(db, last)
        counts = dict(db.execute(VEC_COUNTS)) if has_table else {}
        load(ident, counts, db.execute(VEC_ALL) if counts else ())
        return VectorSync("loaded", ident, last, tail=tail)
    finally:
        db.execute("COMMIT")


def _tail(db: Any, seq: int) -> tuple[tuple[int, int], ...]:
    """The log's entries numbered (seq - TAIL_ROWS, seq], as the file has them now."""
    return tuple((int(i), int(q)) for i, q in db.execute(LOG_TAIL, (seq - TAIL_ROWS, seq)))

