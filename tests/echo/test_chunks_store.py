"""`store.chunks` and `store.watermarks`: the Echo store's repositories on their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.ingest.chunk import Chunk
from hippo.store import connect
from hippo.store.chunks import EXPORT_FIELDS, RECORD_FIELDS, to_export, to_record
from hippo.store.watermarks import Watermark

T0, T1 = "2026-01-02T03:04:05.000Z", "2026-01-02T03:09:00.000Z"


def _chunk(i: int) -> Chunk:
    return Chunk(f"user: turn {i}", ["user", "assistant"], i, i + 1, [f"m{i}"], T0, T1, "s1")


def _session(db, key: str = "s1", path: str = "/t/a.jsonl") -> int:  # type: ignore[no-untyped-def]
    return db.chunks.add_session(key, fmt="claude-code", source_path=path, project="p",
                                 cwd="/w", parent_key=None, agent="claude", started_at=T0)


def test_a_session_is_created_once_and_chunks_continue_its_sequence(db_path: Path) -> None:
    db = connect(db_path)
    with db.transaction():
        assert db.chunks.find_session("s1") is None
        sid = _session(db)
        assert _session(db) == sid == db.chunks.find_session("s1")
        first = db.chunks.add(sid, [_chunk(0), _chunk(1)], ["a", "b"], None,
                              source_path="/t/a.jsonl", project="p")
        more = db.chunks.add(sid, [_chunk(2)], ["c"], None, source_path="/t/a.jsonl",
                             project="p")
        db.chunks.update_session(sid, messages=3, ended_at=T1, started_at=None, cwd=None,
                                 project=None, agent=None, parent_key="parent")
    rows = db.chunks.get([*first, *more, 999])
    assert sorted(rows) == [*first, *more]
    assert [rows[i]["seq"] for i in (*first, *more)] == [0, 1, 2]
    assert rows[first[0]]["session"] == "s1" and rows[first[0]]["session_id"] == sid
    assert db.row("SELECT messages, ended_at, parent_key, cwd FROM echo_sessions") == {
        "messages": 3, "ended_at": T1, "parent_key": "parent", "cwd": "/w"}
    assert db.chunks.session_messages(sid) == [(["m0"], "a"), (["m1"], "b"), (["m2"], "c")]
    near = db.chunks.neighbours(rows[first[1]], 1)
    assert [r["text"] for r in near] == ["a", "c"]
    assert list(near[0]) == list(RECORD_FIELDS) and near[0]["roles"] == ["user", "assistant"]


def test_ids_delete_and_export(db_path: Path) -> None:
    db = connect(db_path)
    with db.transaction():
        a = db.chunks.add(_session(db), [_chunk(0)], ["a"], None, source_path="/t/a.jsonl",
                          project="p")
        b = db.chunks.add(_session(db, "s2", "/t/b.jsonl"), [_chunk(0), _chunk(1)], ["b", "c"],
                          None, source_path="/t/b.jsonl", project=None)
    assert db.chunks.ids_of_file("/t/b.jsonl") == b
    assert db.chunks.ids_of_session("s1") == a
    exported = list(db.chunks.export())
    assert [r["id"] for r in exported] == [*a, *b]
    assert list(exported[0]) == list(EXPORT_FIELDS)
    assert exported[1]["session"] == "s2" and exported[1]["message_ids"] == ["m0"]
    with db.transaction():
        db.chunks.delete(b[:1])
        db.chunks.delete(a, secure=True)
        db.chunks.delete_session("s1")
        db.lexical.compact("echo")
    assert sorted(db.chunks.get([*a, *b])) == b[1:]
    assert db.chunks.find_session("s1") is None and db.chunks.find_session("s2") is not None


def test_records_keep_the_field_order_and_parse_roles_and_ids() -> None:
    row = {f: None for f in RECORD_FIELDS} | {"roles": "user,tool", "message_ids": '["x"]',
                                              "session_id": 7}
    rec = to_record(row)
    assert list(rec) == list(RECORD_FIELDS) and rec["roles"] == ["user", "tool"]
    assert rec["message_ids"] == ["x"] and "session_id" not in rec
    assert list(to_export(row)) == list(EXPORT_FIELDS)
    assert to_export({**row, "roles": "", "message_ids": None})["message_ids"] == []
    with pytest.raises(ValueError):
        to_export({**row, "message_ids": "[not json"})


def test_watermarks_save_replace_list_and_delete(db_path: Path) -> None:
    db = connect(db_path)
    mark = Watermark("/t/a.jsonl", 10, 2, "10:ab", 10, 1.5, "codex", None, False)
    with db.transaction():
        db.watermarks.save(mark)
        db.watermarks.save(Watermark("/t/b.jsonl", 5, 1, None, 5, 2.0, "aider", None, True))
        mark.offset, mark.complete = 20, True
        db.watermarks.save(mark)
    marks = db.watermarks.all()
    assert marks["/t/a.jsonl"] == mark and marks["/t/b.jsonl"].complete is True
    assert sorted(db.watermarks.offsets()) == [("/t/a.jsonl", 20), ("/t/b.jsonl", 5)]
    with db.transaction():
        db.watermarks.delete("/t/a.jsonl")
    assert list(db.watermarks.all()) == ["/t/b.jsonl"]
