"""The Brain repositories of the store: memories, audit, context, project_dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.core import Hippo
from hippo.memory import brain
from hippo.memory.records import from_input
from hippo.store.context import LayerScope
from hippo.store.filters import MemoryFilter
from hippo.store.lexical import Terms


def _hippo(db_path: Path) -> Hippo:
    return Hippo.open(db_path, embedder="hash", project="p")


def _add(h: Hippo, text: str, **fields: object) -> dict:
    project = fields.pop("project", "p")
    m = from_input({"text": text, "project": project, **fields}, h.types,
                   default_project=project)  # type: ignore[arg-type]
    return h.add([m])[0].record


def test_filter_is_data_the_backend_translates() -> None:
    from hippo.store.clauses import where
    from hippo.store.sqlite.dialect import SQLITE

    assert where(SQLITE, MemoryFilter()) == ("1", [])
    clause, params = where(SQLITE, MemoryFilter(statuses=("active",), projects=("p", None),
                                                since="2026-01-01", tags=("A",), current=True))
    assert params == ["active", "p", "2026-01-01", "a"]
    assert "m.project IS NULL" in clause and "m.superseded_by IS NULL" in clause
    assert clause.endswith("m.valid_to > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))")
    assert where(SQLITE, MemoryFilter(projects=()), alias="x")[0] == "1 AND (0)"


def test_listing_and_rows(db_path: Path) -> None:
    h = _hippo(db_path)
    a = _add(h, "deploy with make release", tags=["ops"])
    b = _add(h, "use tabs", type="preference", project="q")
    mem = h.db.memories
    assert mem.exists(a["id"]) and not mem.exists(999)
    assert mem.get(a["id"])["text"] == a["text"]
    assert [r["id"] for r in mem.listing(MemoryFilter(statuses=("active",)))] == [b["id"], a["id"]]
    assert [r["id"] for r in mem.listing(MemoryFilter(tags=("ops",)), limit=1)] == [a["id"]]
    assert [r["id"] for r in mem.export_rows()] == [a["id"], b["id"]]
    assert mem.active_elsewhere("p") == 1
    assert list(mem.held([a["id"], 999])) == [a["id"]]
    assert mem.references() == []


def test_update_refuses_a_column_it_does_not_know(db_path: Path) -> None:
    h = _hippo(db_path)
    a = _add(h, "a fact")
    with h.db.transaction(), pytest.raises(ValueError, match="not a memory column"):
        h.db.memories.update(a["id"], {"id": 5})


def test_vectors_follow_the_status(db_path: Path) -> None:
    h = _hippo(db_path)
    a = _add(h, "deploy with make release")
    mem, vectors = h.db.memories, h.db.vectors
    assert vectors.has("brain")
    stored = vectors.embeddings([a["id"]]).get(a["id"])
    assert stored is not None and len(stored) % 4 == 0
    (hit, distance), *_ = vectors.nearest(stored, 5, type=a["type"],
                                          project="p")
    assert hit == a["id"] and distance == pytest.approx(0.0, abs=1e-5)
    assert mem.current_active(a["id"])["id"] == a["id"]
    with h.db.transaction():
        brain.update(h.db, a["id"], {"status": "done"}, actor="human", action="done")
    assert vectors.embeddings([a["id"]]) == {} and mem.current_active(a["id"]) is None


def test_links_audit_and_purge(db_path: Path) -> None:
    h = _hippo(db_path)
    a = _add(h, "secret plan", source={"session": "s1"})
    mem = h.db.memories
    with h.db.transaction():
        h.db.execute("INSERT INTO echo_sessions(id, session_key, format, source_path) "
                     "VALUES (1, 's1', 'claude', '/x')")
        h.db.execute("INSERT INTO echo_chunks(id, session_id, seq, source_path, roles, text, "
                     "content_hash, created_at) VALUES (7, 1, 0, '/x', 'user', 't', 'h', 'x')")
        brain.link(h.db, a["id"], [7], actor="human")
    assert mem.chunk_ids(a["id"]) == [7] and mem.linked_to([7, 8]) == [a["id"]]
    assert [s["session_key"] for s in mem.sources(a["id"])] == ["s1"]
    assert mem.citing_session("s1") == [a["id"]] and mem.citing_session("s2") == []
    echo = h.db.chunks
    assert echo.session_id("s1") == 1 and echo.session_span(1) == (7, 7)
    assert [r["id"] for r in echo.after(0)] == [7] and echo.after(7) == []
    assert echo.session(1)["session_key"] == "s1"
    assert [r["id"] for r in echo.segment(1, 7, 7)] == [7]
    assert h.db.audit.once_used([a["id"], 999]) == {a["id"]}
    assert [e["action"] for e in h.db.audit.history(a["id"])] == ["add", "link"]
    with h.db.transaction():
        brain.purge(h.db, a["id"], actor="human")
    assert mem.chunk_ids(a["id"]) == [] and mem.get(a["id"])["text"] == ""
    assert all(e["before"] is None and e["after"] is None
               for e in h.db.audit.history(a["id"])[:-1])


def test_pending_tasks(db_path: Path) -> None:
    h = _hippo(db_path)
    t = _add(h, "finish the port", type="task", author="machine", tags=["pending"])
    _add(h, "other task", type="task", tags=["pending"])
    assert [r["id"] for r in h.db.memories.pending_tasks("p", "pending")] == [t["id"]]
    assert h.db.memories.pending_tasks(None, "pending") == []


def test_context_scope(db_path: Path) -> None:
    h = _hippo(db_path)
    r = _add(h, "always run the tests", type="rule")
    g = _add(h, "deploy with make", type="procedure", tags=["deploy"], project=None)
    m = _add(h, "never push to main", type="rule", author="machine")
    ctx = h.db.context
    assert [x["id"] for x in ctx.rules(LayerScope("p"))] == [r["id"]]
    assert ctx.rules_waiting(LayerScope("p")) == [m["id"]] and h.db.stats.unverified() == 1
    assert [x["id"] for x in ctx.guidance(LayerScope("p", topics=("deploy",)))] == [g["id"]]
    assert ctx.guidance(LayerScope("p", topics=("other",))) == []
    assert ctx.rules(LayerScope(None)) == [] and len(ctx.rules(LayerScope(None, True))) == 1
    assert sorted(ctx.current_texts(LayerScope("p"))) == sorted(x["text"] for x in (r, g, m))
    assert ctx.echo_texts(LayerScope("p")) == []
    assert [x["id"] for x in h.db.lexical.recall(Terms(("deploy",)), LayerScope("p"), 5)] == [g["id"]]


def test_project_dirs(db_path: Path) -> None:
    h = _hippo(db_path)
    dirs = h.db.projects
    assert dirs.directory("/w/a") is None
    with h.db.transaction():
        dirs.record_directory("/w/a", "proj", "/r/.git", "2026-01-01T00:00:00Z")
        dirs.record_directory("/w/a", "proj2", None, "2026-01-02T00:00:00Z")
    assert dirs.directory("/w/a") == {"project": "proj2", "common_dir": None}
    assert dirs.directories(["/w/a", "/w"]) == [{"path": "/w/a", "project": "proj2"}]
    assert dirs.directories([]) == []


def test_concurrent_writers_store_one_memory(db_path: Path) -> None:
    """Write-time dedup under concurrent writers: each writer has its own connection and
    adds the same memory at the same moment; find_same and the insert run in one write
    transaction (the writer lock), so exactly one row results and the rest reinforce it."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    writers = 4
    _hippo(db_path).close()  # the store exists before the race (its schema is not raced)
    stores = [_hippo(db_path) for _ in range(writers)]
    for h in stores:  # every embedding cached, so the writers meet at the write itself
        h.embed(["the staging database is reset every night"])
    start = threading.Barrier(writers)

    def write(h: Hippo) -> list[str]:
        start.wait(timeout=120)  # never hangs the suite if a writer failed to start
        m = from_input({"text": "the staging database is reset every night",
                        "project": "p"}, h.types, default_project="p")
        return [c.action for c in h.add([m])]

    with ThreadPoolExecutor(writers) as pool:  # result() raises what a writer raised
        actions = [a for f in [pool.submit(write, h) for h in stores] for a in f.result()]
    assert sorted(actions) == ["added"] + ["reinforced"] * (writers - 1)
    check = _hippo(db_path)
    rows = check.db.memories.listing(MemoryFilter())
    assert len(rows) == 1
    assert [e["action"] for e in check.db.audit.history(rows[0]["id"])] == (
        ["add"] + ["reinforce"] * (writers - 1))
    for h in [*stores, check]:
        h.close()


def test_ids_are_never_reused_and_a_rollback_takes_none(db_path: Path) -> None:
    """SQLite's AUTOINCREMENT on both backends: a rolled-back insert (a dry run, a killed
    writer) leaves no gap, and the id of a row deleted since is never given again."""
    h = _hippo(db_path)
    a = _add(h, "first")
    with pytest.raises(RuntimeError), h.db.transaction():
        _add(h, "rolled back")
        raise RuntimeError
    b = _add(h, "second")
    assert b["id"] == a["id"] + 1
    with h.db.transaction():
        h.db.memories.delete(b["id"])  # undoing its creation
    assert _add(h, "third")["id"] == b["id"] + 1
    m = from_input({"id": 40, "text": "imported", "project": "p"}, h.types, default_project="p")
    with h.db.transaction():
        brain.insert(h.db, m, None, actor="import", action="import")
    assert _add(h, "after the import")["id"] == 41


def test_lexical_recall_with_topics(db_path: Path) -> None:
    h = _hippo(db_path)
    a = _add(h, "deploy with make release", tags=["ops"])
    _add(h, "deploy docs by hand", tags=["docs"])
    hits = h.db.lexical.recall(Terms(("deploy",)), LayerScope("p", topics=("ops",)), 5)
    assert [x["id"] for x in hits] == [a["id"]]
    assert h.db.lexical.recall(Terms(("deploy", "nothing"), "and"), LayerScope("p"), 5) == []
