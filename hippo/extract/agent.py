"""The `agent` extractor: the user's own agent CLI, run headless, writes the summary.

Opt-in: only with `[extract] agent_command` set (e.g. `claude -p --output-format json
--no-session-persistence`, `codex exec -`, `gemini -p ""`; without it, exit 78 naming the
setting). A session's compaction summaries are read as the `rules` extractor reads them;
the part no summary covers (the chunks after the last one) goes to the agent, a window of
`[extract] window_chars` at a time, on stdin, with a request for a summary in the
sections of Claude Code's compaction prompt, each item citing its `[chunk N]` blocks. The
answer is read by the summary extractor (`hippo.extract.summary`), so its memories carry
the same provenance (the chunks each item cites, else the window's).

Every run is counted by the spend guard (provider `agent-cli`: calls, and tokens estimated
from characters, corrected by the usage the CLI reports) before it starts. Input and output
are masked (`hippo.redact`). The child runs in `<hippo home>/agent-extract` with
`HIPPO_AGENT_RUN=1`, so hippo's own hooks in that headless session do nothing. A CLI that
fails (not logged in, a non-zero exit, an error result, a timeout) stops the run with one
line (`AgentFailed`, exit 75): nothing of the session in progress is written and the
watermark stays before it, so the next run tries it again.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo.errors import ConfigError, ExitCode, HippoError, scrub
from hippo.extract.base import Candidate, EchoChunk, Extractor, SessionChunks
from hippo.extract.blocks import messages
from hippo.extract.llm import windows
from hippo.extract.rules import PENDING_TAGS, SUMMARY_TAGS, _Found, _summaries
from hippo.extract.summary import statements
from hippo.paid import spend

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core import Hippo
    from hippo.extract.settings import ExtractSettings
    from hippo.store import Store

PROVIDER = "agent-cli"
RUNNING = "HIPPO_AGENT_RUN"  # set in the child: hippo's hooks inside it do nothing
# (`hippo.cli.hook_learn.AGENT_RUN`, the same name)
ANSWER_TOKENS = 2000  # added to the prompt's estimate when asking the guard
EXAMPLE = "claude -p --output-format json --no-session-persistence"
MAX_LINE = 300  # characters of the CLI's error kept in the one line

PROMPT = """\
Summarise part of a coding-agent session for a long-term memory. Use no tools; answer with
the summary only, as Markdown.

Use these numbered sections (leave one empty when nothing fits):
1. Primary Request and Intent
2. Key Technical Concepts: decisions with their reasons, conventions, facts about tools,
   configuration and architecture
3. Files and Code Sections: where things live and what they do (no code)
4. Errors and fixes: each error with its fix, in one bullet
5. Problem Solving
6. Pending Tasks: only what is still left to do
7. Current Work
8. Optional Next Step

Each bullet must read alone: name the file, command, tool or setting it is about, and turn
relative dates into dates. End every bullet with the [chunk N] ids of the blocks it comes
from. Never copy a secret, token or password.
"""

_REFS = re.compile(r"\s*\[chunks?\s*((?:\d+\s*,?\s*)+)\]")


class AgentFailed(HippoError):
    """The agent CLI did not answer (not logged in, failed, timed out): try again later."""

    exit_code = ExitCode.TEMPFAIL


def command(conf: ExtractSettings, settings: Settings | None) -> list[str]:
    """The configured command as argv; exit 78 naming the setting when there is none."""
    where = f" in {settings.file}" if settings is not None else ""
    if not conf.agent_command.strip():
        raise ConfigError(f"--extractor agent needs [extract] agent_command{where} (e.g. "
                          f'agent_command = "{EXAMPLE}"); or use --extractor rules')
    try:
        argv = shlex.split(conf.agent_command)
    except ValueError as exc:
        raise ConfigError(f"[extract] agent_command{where} is not a command line: "
                          f"{exc}") from None
    return argv


def uncovered(chunks: Sequence[EchoChunk]) -> list[EchoChunk]:
    """The chunks after the last one holding a compaction summary (all, without one)."""
    last = max((i for i, c in enumerate(chunks) if "summary" in c.roles), default=-1)
    return list(chunks[last + 1:])


def prompt(session: SessionChunks, chunks: Sequence[EchoChunk]) -> str:
    from hippo.redact import redact_text

    head = (f"Project: {session.project or 'unknown'}\nSession: {session.key} "
            f"({session.format}), started {session.started_at or 'unknown'}\n\nTranscript:\n")
    body = "\n\n".join(f"[chunk {c.id}] {c.started_at or ''}\n{c.text}" for c in chunks)
    return redact_text(f"{PROMPT}\n{head}{body}\n")


def answer_of(stdout: str) -> tuple[str, str | None, int]:
    """(answer, error, tokens used) from what the CLI printed: Claude Code's JSON result
    (`result`, `is_error`, `usage`), Gemini CLI's (`response`, `error`), the last agent
    message of Codex's JSON lines, else the text itself."""
    import json

    text = stdout.strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
        used = sum(int(v) for k, v in usage.items()
                   if k.endswith("tokens") and isinstance(v, int) and not isinstance(v, bool))
        error = data.get("error")
        if data.get("is_error") or error:
            said = error.get("message") if isinstance(error, dict) else error
            return "", str(said or data.get("result") or "an error result"), used
        for key in ("result", "response"):
            if isinstance(data.get(key), str):
                return data[key], None, used
        return "", "a JSON answer without a result", used
    said = _codex_message(text)
    return (said if said is not None else text), None, 0


def _codex_message(text: str) -> str | None:
    import json

    found = None
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            return None if found is None else found
        item = event.get("item") if isinstance(event, dict) else None
        if isinstance(item, dict) and item.get("type") == "agent_message":
            found = str(item.get("text") or "")
    return found


def cited(answer: str) -> tuple[str, list[tuple[str, list[int]]]]:
    """The answer without its `[chunk N]` citations, and each line's cleaned text with the
    ids it cited."""
    lines: list[tuple[str, list[int]]] = []
    for line in answer.splitlines():
        ids = [int(n) for m in _REFS.finditer(line) for n in re.findall(r"\d+", m.group(1))]
        lines.append((_REFS.sub("", line), ids))
    return "\n".join(text for text, _ in lines), lines


class AgentExtractor(Extractor):
    """Compaction summaries, and the agent CLI's summary of what none covers."""

    name = "agent"
    remote = True

    def __init__(self, db: Store, settings: Settings | None, conf: ExtractSettings) -> None:
        self.db = db
        self.conf = conf
        self.argv = command(conf, settings)
        self.limits = spend.limits_for(settings, PROVIDER)
        self.calls = 0

    @classmethod
    def from_settings(cls, h: Hippo, conf: ExtractSettings) -> AgentExtractor:
        return cls(h.db, h.settings, conf)

    def extract(self, session: SessionChunks) -> list[Candidate]:
        found = _Found()
        _summaries(messages(session.chunks), {c.id: c.text for c in session.chunks}, found)
        for part in windows(uncovered(session.chunks), self.conf.window_chars):
            self._window(session, part, found)
        return found.collapsed()

    def _window(self, session: SessionChunks, chunks: list[EchoChunk], found: _Found) -> None:
        from hippo.redact import redact_text

        allowed = [c.id for c in chunks]
        text, lines = cited(redact_text(self.ask(prompt(session, chunks))))
        for stmt in statements(text):
            where = [i for p in stmt.probes if p for line, ids in lines if p in line
                     for i in ids if i in allowed]
            found.add(stmt.type, stmt.text, stmt.importance,
                      list(dict.fromkeys(where)) or allowed,
                      PENDING_TAGS if stmt.pending else SUMMARY_TAGS, 0.5)

    def ask(self, text: str) -> str:
        """The agent's answer to `text` (on its stdin), guarded and checked."""
        import subprocess

        estimate = len(text) // 4 + ANSWER_TOKENS
        spend.check(self.db, PROVIDER, tokens=estimate, limits=self.limits)
        self.calls += 1
        name = Path(self.argv[0]).name
        try:
            done = subprocess.run(self.argv, input=text, capture_output=True, text=True,
                                  timeout=self.conf.agent_timeout, cwd=_workdir(),
                                  env={**os.environ, RUNNING: "1"}, check=False)
        except FileNotFoundError:
            spend.record_success(self.db, PROVIDER, tokens=-estimate)  # nothing was run
            raise ConfigError(f"[extract] agent_command: {self.argv[0]!r} is not an "
                              "installed command") from None
        except subprocess.TimeoutExpired:
            self._failed(f"agent command {name} gave no answer in "
                         f"{self.conf.agent_timeout:g} s")
        answer, error, used = answer_of(done.stdout)
        if done.returncode != 0 or error:
            why = error or _last_line(done.stderr) or _last_line(done.stdout) or "no output"
            self._failed(f"agent command {name} failed (exit {done.returncode}): {why}")
        spend.record_success(self.db, PROVIDER, tokens=(used - estimate) if used else 0)
        return answer

    def _failed(self, message: str) -> None:
        line = scrub(" ".join(message.split()))[:MAX_LINE]
        opened = spend.record_failure(self.db, PROVIDER, line, limits=self.limits)
        hint = ("circuit now open" if opened else
                f"circuit opens after {self.limits.failures_to_open} consecutive failures")
        raise AgentFailed(f"{line}; nothing of this session stored, it is tried again on "
                          f"the next run ({hint})")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _workdir() -> Path:
    """Where the child runs: hippo's own directory, not a project's (no project's
    instruction files load into the summarising session)."""
    from hippo.config import home_dir

    path = home_dir() / "agent-extract"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path
