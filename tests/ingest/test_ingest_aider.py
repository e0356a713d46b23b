"""aider history reader on the real history file (counts verified by reading it) and a fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from ingest_support import counts, read, real

from hippo.ingest.readers import detect, read_head
from hippo.ingest.readers.aider import READER

HISTORY = "aider/Monochromatic__.aider.chat.history.md"


def test_real_history_counts_and_sessions() -> None:
    path = real(HISTORY)
    assert detect(path, read_head(path)).name == "aider"
    result = read(path)
    # 63 `#### ` lines form 26 inputs, 2 of which answer aider's (Y)es/(N)o questions;
    # 7 unprefixed "SearchReplaceNoExactMatch" blocks are aider's feedback, not replies.
    assert counts(result) == {"user": 24, "assistant": 36, "tool_result": 82}
    assert result.ignored == 2
    sessions = {m.session_id for m in result.messages}
    assert len(sessions) == 19  # one per `# aider chat started at` header
    assert result.session.session_id == "aider-2025-06-02T11:47:49"
    assert result.session.agent == "aider 0.84.0"
    assert (result.end_offset, result.end_line) == (path.stat().st_size, 3732)
    first = next(m for m in result.messages if m.role == "user")
    assert (first.text, first.line_start, first.timestamp) == (
        "What can you say about this package?",
        24,
        "2025-06-02T11:49:34Z",
    )
    assert first.session_id == "aider-2025-06-02T11:49:34"


def test_multiline_input_and_cwd() -> None:
    result = read(real(HISTORY))
    prompt = next(m for m in result.messages if m.line_start == 503)
    assert (prompt.role, prompt.line_end) == ("user", 508)
    assert prompt.text.splitlines()[0] == "look at my CONVENTIONS.md"
    assert len(prompt.text.splitlines()) == 6
    later = next(m for m in result.messages if m.line_start == 97)
    assert later.cwd and later.cwd.endswith(r"monochromatic2025MAY24-pnpmTest\packages\module\es")


def test_fenced_edit_blocks_stay_in_the_reply() -> None:
    result = read(real(HISTORY))
    reply = next(m for m in result.messages if m.line_start == 390)
    assert reply.role == "assistant" and reply.line_end == 441
    assert "<<<<<<< SEARCH" in reply.text and ">>>>>>> REPLACE" in reply.text


@pytest.mark.parametrize("fraction", [0.1, 0.37, 0.5, 0.81])
def test_resume_after_torn_write_equals_full_read(tmp_path: Path, fraction: float) -> None:
    data = real(HISTORY).read_bytes()
    path = tmp_path / ".aider.chat.history.md"
    path.write_bytes(data[: int(len(data) * fraction)])
    first = READER.read(path)
    path.write_bytes(data)
    rest = READER.read(path, first.end_offset, first.end_line)
    assert first.messages + rest.messages == READER.read(path).messages


def test_fixture_roles_and_fence(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(
        "\n# aider chat started at 2025-01-02 03:04:05\n\n"
        "> Aider v0.80.0  \n> Cur working dir: /src/app  \n\n"
        "#### add a heading to README.md  \n\n"
        "Here is the edit:\n\n"
        "README.md\n```markdown\n<<<<<<< SEARCH\n=======\n#### Usage\n> quoted\n>>>>>>> REPLACE\n```\n\n"
        "> Applied edit to README.md  \n"
    )
    result = READER.read(path)
    assert [(m.role, m.kind) for m in result.messages] == [
        ("tool", "tool_result"),
        ("user", "message"),
        ("assistant", "message"),
        ("tool", "tool_result"),
    ]
    assert "#### Usage\n> quoted" in result.messages[2].text
    assert {m.cwd for m in result.messages} == {"/src/app"}
    assert result.session.started_at == "2025-01-02T03:04:05Z"
