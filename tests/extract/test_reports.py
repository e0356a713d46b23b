"""The person's report of a problem, said first in the agent's cause-and-fix that answers it
(`hippo.extract.rules.report`): "The chart shows events on the previous day: PostgreSQL
stores UTC … Fix: …", one memory; the question that may follow it is left out; a question
or a long message is not a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extract import excerpts as X
from tests.extract.test_statements import nothing_invented

REPORT = "The revenue chart shows midnight events on the wrong day."
CAUSE = ("PostgreSQL stores timestamps as UTC and `new Date(ts)` shifts them to local time. "
         "Fix: format with `formatInTimeZone(ts, tz, 'yyyy-MM-dd')` from `date-fns-tz`.")


def _memories(cli, tmp_path: Path, prompt: str) -> list[str]:
    folder = tmp_path / "in"
    folder.mkdir()
    X.claude_code(folder / "s.jsonl", "eeee5555-0000-4000-8000-000000000001", "/home/dev/dash",
                  [("user", prompt), ("assistant", CAUSE), ("user", "That fixed it, thanks.")])
    assert cli("ingest", str(folder), "--idle-minutes", "0").exit_code == 0
    assert cli("extract").exit_code == 0
    return [m["text"] for m in nothing_invented(cli)]


@pytest.mark.parametrize("prompt", [REPORT, f"{REPORT} What happened? Can you fix it?"])
def test_the_report_comes_first_in_the_cause_and_fix(cli, tmp_path: Path, prompt: str) -> None:
    texts = _memories(cli, tmp_path, prompt)  # the question after a report is left out
    joined = [t for t in texts if t.startswith(REPORT[:-1] + ": ")]
    assert len(joined) == 1 and "formatInTimeZone" in joined[0], texts
    assert REPORT not in texts  # the report is in the insight, not a memory beside it


@pytest.mark.parametrize("prompt", [
    "Why does the revenue chart show midnight events on the wrong day?",  # a question
    "The revenue chart shows midnight events on the wrong day. " * 6,  # not a short report
])
def test_a_question_or_a_long_message_is_no_report(cli, tmp_path: Path, prompt: str) -> None:
    texts = _memories(cli, tmp_path, prompt)
    assert not any(t.startswith(prompt[:30]) and "Fix:" in t for t in texts), texts
