"""The file a statement is about, carried into it (`hippo.extract.subjects`): the agent read a
file, then said "The build script …" or "This module …"."""

from __future__ import annotations

from pathlib import Path

import pytest

from hippo.extract.subjects import carry
from tests.extract import excerpts as X
from tests.extract.test_statements import nothing_invented

BUILD = ("/home/dev/web/assets/build.js", (5,))
PARSER = ("/home/dev/web/lib/log_parser.py", (7,))


@pytest.mark.parametrize("text, reads, expected", [
    ("The build script expects to be run from `assets/` since its entry is `js/app.js`.",
     [BUILD], ("The build script (`assets/build.js`) expects to be run from `assets/` since its "
              "entry is `js/app.js`.")),
    ("This module keeps one connection per thread.", [PARSER],
     "This module (`lib/log_parser.py`) keeps one connection per thread."),
    # two files read: the one whose path shares a word with the phrase
    ("The parser skips blank lines.", [BUILD, PARSER],
     "The parser (`lib/log_parser.py`) skips blank lines."),
])
def test_the_file_read_is_carried(text: str, reads, expected: str) -> None:
    assert carry(text, reads) is not None and carry(text, reads)[0] == expected


@pytest.mark.parametrize("text, reads", [
    ("The build script `build.js` expects the assets folder.", [BUILD]),  # names it already
    ("This module keeps one connection per thread.", [BUILD, PARSER]),  # which one?
    ("The user config is read at startup.", [BUILD]),  # a config, but not that file
    ("The LiveView process cannot reach the sandbox.", [BUILD]),  # no kind of file
    ("The build script expects the assets folder.", []),  # nothing read
])
def test_nothing_carried_when_the_file_is_not_clear(text: str, reads) -> None:
    assert carry(text, reads) is None


def test_a_session_carries_the_file_into_the_statement(cli, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    X.claude_code(folder / "s.jsonl", "dddd4444-0000-4000-8000-000000000001", "/home/dev/web", [
        ("user", "The bundle build fails with: Could not resolve js/app.js"),
        ("call", "Read", "/home/dev/web/assets/build.js"),
        ("result", "const esbuild = require('esbuild')\n" + "// options\n" * 40
         + "esbuild.build({ entryPoints: ['js/app.js'], bundle: true })\n"),
        ("assistant", ("The build script resolves `js/app.js` relative to the working directory, "
                      "so it must be run from `assets/`.")),
    ])
    assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    texts = [m["text"] for m in nothing_invented(cli)]
    assert ("The build script (`assets/build.js`) resolves `js/app.js` relative to the working "
            "directory, so it must be run from `assets/`.") in texts, texts
