"""`hippo reindex --embedder X`: re-embed a store with another model, resumably.

New vectors are built into a side vec0 table (`<table>_next`, each row carrying the content
hash it was computed from) in batches committed as they go, while searches keep using the
old vectors and model. When the side table covers every row of the live table, one
transaction copies it over the live table and records the new model in `meta`. A killed
run leaves the side table behind; the next run with the same embedder resumes from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.console.progress import progress
from hippo.embed.cache import embed_texts, store_model, to_blob
from hippo.errors import UsageError
from hippo.maintain.common import OnEvent, batches, failpoint
from hippo.ops.jobs import job
from hippo.store.vectors import STORES

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core import Hippo
    from hippo.embed import Embedder
    from hippo.store import Store

# After a new model the cosine scale differs: the next consolidate re-checks everything.
RESET_ON_SWAP = {"brain": ("consolidate.audit_watermark",)}


class Tables:
    """One store's reindex: its name and the `meta` keys of a reindex in progress."""

    def __init__(self, store: str) -> None:
        self.store = store

    def meta_key(self, what: str) -> str:
        return f"{self.store}.reindex_{what}"


def _pending(db: Store, t: Tables) -> tuple[list[int], list[int]]:
    """Keys whose side-table vector is missing or stale, and side rows no longer live."""
    live = db.reindex.vector_metadata(t.store)
    side = db.reindex.side_metadata(t.store)
    hashes = {k: h for k, h in db.reindex.content_hashes(t.store) if k in live}
    todo = [k for k, meta in live.items()
            if k not in side or side[k] != (hashes.get(k), meta)]
    extra = [k for k in side if k not in live]
    return sorted(todo), sorted(extra)


def _build(db: Store, t: Tables, emb: Embedder, keys: Sequence[int],
           settings: Settings) -> None:
    """Embed `keys` (embed cache first) and write them into the side table, one transaction.

    The texts' token matrices for late interaction are cached in the same model pass, as
    on any write (`warm_for_search`): a reindex to the local model, or `--force` on an
    archive ingested before chunks got them, leaves no search to encode a candidate."""
    live = db.reindex.vector_metadata(t.store, keys)
    rows = [r for r in db.reindex.texts(t.store, keys) if r[0] in live]
    from hippo.retrieve.tokencache import warm_for_search

    warm_for_search(db, settings, emb, [r[1] for r in rows])
    vecs = embed_texts(db, emb, [r[1] for r in rows])
    with db.transaction():
        for (key, _text, chash), vec in zip(rows, vecs):
            db.reindex.write_side(t.store, key, to_blob(vec), live[key], chash)


def run(h: Hippo, store: str, embedder_name: str, *, batch: int = 256, force: bool = False,
        dry_run: bool = False, on_event: OnEvent) -> dict[str, Any]:
    from hippo import embed

    if store not in STORES:
        raise UsageError(f"unknown store {store!r}; choose brain or echo")
    db, t = h.db, Tables(store)
    emb = embed.get(embedder_name, h.settings)
    target = {"model": emb.model_id, "dim": emb.dimensions, "embedder": emb.name}
    old = store_model(db, store)
    with job(db, "reindex", dry_run=dry_run) as current:
        summary: dict[str, Any] = {"store": store, "from": old[0] if old else None,
                                   "to": emb.model_id}
        pending = db.meta.get(t.meta_key("model"))
        if old is None:
            summary["result"] = "no vectors yet; the model is recorded on first use"
            if not dry_run:
                from hippo.embed.cache import ensure_store

                ensure_store(db, store, emb)
        elif old == (emb.model_id, emb.dimensions) and not force and pending is None:
            summary["result"] = f"already uses {emb.model_id}; --force re-embeds anyway"
        else:
            rows = db.reindex.vector_count(store)
            if dry_run:
                reuse = (pending == emb.model_id and db.reindex.has_side_table(store)
                         and db.meta.get(t.meta_key("dim")) == str(emb.dimensions))
                todo = _pending(db, t)[0] if reuse else list(range(rows))
            else:
                _prepare(db, t, target, pending, on_event)
                todo = _pending(db, t)[0]
            summary.update(rows=rows, resumed=rows - len(todo), built=len(todo))
            if dry_run:
                summary["result"] = "dry run: nothing written"
            else:
                _fill(db, t, emb, todo, batch, h.settings)
                _swap(db, t, emb, target, h.settings)
                summary["result"] = "swapped"
        current.summary = summary
    out = {"event": "summary", "job": "reindex", "run_id": None if dry_run else current.id,
           "dry_run": dry_run, **summary}
    on_event(out)
    return out


def _prepare(db: Store, t: Tables, target: dict[str, Any], pending: str | None,
             on_event: OnEvent) -> None:
    """Create (or keep, when resuming with the same model) the side table."""
    with db.transaction():
        same = (pending == target["model"]
                and db.meta.get(t.meta_key("dim")) == str(target["dim"]))
        if pending is not None and not same:
            on_event({"event": "restart", "store": t.store, "was": pending,
                      "now": target["model"]})
        db.reindex.create_side_table(t.store, target["dim"],
                                         drop_old=pending is not None and not same)
        for what, value in target.items():
            db.meta.set(t.meta_key(what), str(value))
    kept = db.reindex.side_count(t.store)
    if kept:
        on_event({"event": "resume", "store": t.store, "kept": kept})


def _fill(db: Store, t: Tables, emb: Embedder, todo: list[int], batch: int,
          settings: Settings) -> None:
    with progress(f"reindex {t.store}", total=len(todo)) as bar:
        for keys in batches(todo, batch):
            _build(db, t, emb, keys, settings)
            bar.advance(len(keys))
            failpoint("reindex.batch")
        # Rows written meanwhile by other commands: catch up until nothing is left.
        for _ in range(3):
            todo = _pending(db, t)[0]
            if not todo:
                break
            bar.total(None)
            for keys in batches(todo, batch):
                _build(db, t, emb, keys, settings)


def _swap(db: Store, t: Tables, emb: Embedder, target: dict[str, Any],
          settings: Settings) -> None:
    """Replace the live table by the side table and record the model, in one transaction."""
    with db.transaction():
        todo, extra = _pending(db, t)  # under the write lock: nothing can change now
        if todo:  # the few rows written since `_fill`: one model pass, tokens included
            _build(db, t, emb, todo, settings)
        for key in extra:
            db.reindex.drop_side_row(t.store, key)
        db.reindex.swap_side_table(t.store, target["dim"])
        for what in ("model", "dim", "embedder"):
            db.meta.set(t.meta_key(what), None)
        db.meta.set(f"{t.store}.embed_model", target["model"])
        db.meta.set(f"{t.store}.embed_dim", str(target["dim"]))
        db.meta.set(f"{t.store}.embedder", target["embedder"])
        for stale in RESET_ON_SWAP.get(t.store, ()):
            db.meta.set(stale, None)
        failpoint("reindex.swap")
