"""What a person sees at a terminal: the table of `hippo search` / `hippo list`."""

from __future__ import annotations

import pytest

from hippo.console.output import table

ROWS = [
    {"id": 3, "score": 0.95, "type": "procedure", "project": "web", "date": "2026-12-01",
     "importance": 0.5, "tags": ["deploy"],
     "text": "Staging deploys run from the deploy/ directory with make stage"},
    {"id": 12, "score": 0.3125, "type": "decision", "project": "web", "date": "2023-05-07",
     "importance": 0.9, "tags": [],
     "text": "We chose apsw over sqlite3 because stdlib cannot load extensions"},
]
COLUMNS = ("id", "score", "type", "project", "date", "importance", "tags", "text")


@pytest.mark.parametrize("width", [80, 120, 200])
def test_short_fields_stay_on_one_line_and_the_text_wraps(
        width: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    table(ROWS, COLUMNS)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= width
    for field in ("2026-12-01", "2023-05-07", "procedure", "decision", "0.950", "0.312"):
        assert field in out, (field, width)  # never folded across two lines
    if width >= 120:  # the text is all there, wrapped between words
        words = " ".join(out.replace("│", " ").split())
        for word in ROWS[0]["text"].split() + ROWS[1]["text"].split():
            assert word in words, (word, width)
    if width >= 200:  # room enough: one line per memory
        assert sum("Staging deploys run from the deploy/ directory" in line
                   for line in lines) == 1
