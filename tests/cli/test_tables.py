"""What a person reads at 80 and 120 columns (a real pty): the text gets the width, wraps
between words, and no id, date or score is split or cut."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import orjson
import pytest

from tests.cli.terminal import at_terminal

TEXTS = [
    ("Staging deploys run from the deploy directory with make stage, never from a laptop "
    "checkout, because the release script reads credentials from the build host only"),
    ("We chose apsw over the standard sqlite3 module because the stdlib cannot load "
    "extensions on every platform we support, and sqlite-vec is an extension"),
    ("Run the linters and the whole test suite before every commit; the pre-commit gate "
    "rejects a change that leaves a failing test or an unformatted file behind"),
]
DAY = re.compile(r"\b\d{4}-\d\d-\d\d\b")
STAMP = re.compile(r"\d\d:\d\d:\d\d\.\d{3}|\d{4}-\d\d-\d\dT\d\d")
UUID = "4c2ddfdc-b619-4525-8d03-1950fb1b0257"


def _env() -> dict[str, str]:
    return {**os.environ, "HIPPO_EMBEDDER": "hash"}


def _check_screen(text: str, cols: int, texts: list[str]) -> None:
    lines = text.splitlines()
    assert lines, "nothing printed"
    assert max(len(line) for line in lines) <= cols, max(lines, key=len)
    assert "…" not in text  # wrapped, never cut
    words = Counter(text.split())
    for t in texts:  # every word is on the screen whole (a word split in two is not)
        for word, n in Counter(t.split()).items():
            assert words[word] >= n, (word, cols)


@pytest.fixture
def seeded(cli, db_path: Path) -> Path:
    lines = "".join(orjson.dumps({"text": t, "type": "fact"}).decode() + "\n" for t in TEXTS)
    assert cli("add", "-", input=lines).exit_code == 0
    return db_path


@pytest.mark.parametrize("cols", [80, 120])
def test_list_gives_the_text_the_width(seeded: Path, cols: int) -> None:
    s = at_terminal(["--db", str(seeded), "list"], cols, _env())
    assert s.rc == 0, s.text
    _check_screen(s.text, cols, TEXTS)
    assert len(DAY.findall(s.text)) == len(TEXTS)  # one whole day per memory, no time
    assert not STAMP.search(s.text)
    rows = [line for line in s.lines if re.match(r"\d+ ", line)]
    assert sorted(int(r.split()[0]) for r in rows) == [1, 2, 3]  # ids whole, one row each
    # At 80 columns a memory takes at most 4 rows (it took 11 with the bordered table).
    assert len(s.lines) <= 1 + 4 * len(TEXTS)


@pytest.mark.parametrize("cols", [80, 120])
def test_list_wide_shows_every_field_without_milliseconds(seeded: Path, cols: int) -> None:
    s = at_terminal(["--db", str(seeded), "list", "--wide"], cols, _env())
    assert s.rc == 0, s.text
    _check_screen(s.text, cols, TEXTS)
    for field in ("tier", "importance", "author", "updated_at"):
        assert field in s.text
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", s.text)  # to the second, whole
    assert not re.search(r"\.\d{3}Z", s.text)


@pytest.mark.parametrize("cols", [80, 120])
def test_search_gives_the_text_the_width(seeded: Path, cols: int) -> None:
    s = at_terminal(["--db", str(seeded), "search", "deploy commit extensions stage"], cols,
                    _env())
    assert s.rc == 0, s.text
    found = [t for t in TEXTS if t.split()[0] in s.text]
    assert found
    _check_screen(s.text, cols, found)
    assert re.search(r"\b0\.\d{3}\b", s.text)  # scores whole
    assert not STAMP.search(s.text)


@pytest.mark.parametrize("cols", [80, 120])
def test_echo_hides_the_session_id_and_renders_escaped_line_breaks(
        cli, tmp_path: Path, db_path: Path, cols: int) -> None:
    said = ("the migration failed on the users table\\n\\nbecause the index was "
            "built before the column existed")  # literal backslash-n, as a tool's JSON has
    session = tmp_path / "session.jsonl"
    lines = [{"type": "user", "sessionId": UUID, "uuid": f"u{i}", "cwd": str(tmp_path),
              "timestamp": f"2026-11-30T10:0{i}:00.123Z",
              "message": {"role": "user", "content": said + f" attempt {i}"}}
             for i in range(3)]
    session.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    r = cli("ingest", str(session), "--idle-minutes", "0", "--format", "claude-code")
    assert r.exit_code == 0, r.stderr
    s = at_terminal(["--db", str(db_path), "echo", "migration failed users table"], cols,
                    _env())
    assert s.rc == 0, s.text
    assert "\\n" not in s.text
    _check_screen(s.text, cols, [said.replace("\\n\\n", " ") + " attempt"])
    assert UUID not in s.text and not STAMP.search(s.text)
    assert "2026-11-30" in s.text
    wide = at_terminal(["--db", str(db_path), "echo", "migration", "--wide"], 200, _env())
    assert UUID in wide.text and "session.jsonl:" in wide.text


@pytest.mark.parametrize("cols", [80, 120])
def test_stats_at_a_terminal_is_a_table_not_a_dict(seeded: Path, cols: int) -> None:
    s = at_terminal(["--db", str(seeded), "stats", "--no-layers"], cols, _env())
    assert s.rc == 0, s.text
    assert "{'" not in s.text and "':" not in s.text  # no Python repr
    assert max(len(line) for line in s.lines) <= cols
    assert re.search(r"^\s*memories\s+3\s*$", s.text, re.MULTILINE)
    for section in ("brain", "echo", "embed_cache"):
        assert re.search(rf"^{section}\s*$", s.text, re.MULTILINE), section
