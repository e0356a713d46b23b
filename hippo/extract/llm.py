"""The `llm` extractor: any OpenAI-compatible chat endpoint through the official client.

Honours OPENAI_BASE_URL and OPENAI_API_KEY; the model, timeout and the client's own retries
come from `[extract]`. Every request goes through `hippo.paid.chat` (spend guard of provider
`openai-chat`: daily call and token caps, circuit breaker shared by all processes). The
answer is requested as structured output AND validated here; an invalid answer is asked for
once more, then the session is skipped (SkipSession) with nothing stored; so is a request
the endpoint rejects. A provider that is down (429, 5xx, timeout, no connection), an open
circuit or a reached cap stops the run (exit 75) before anything of the session in progress
is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.extract import schema
from hippo.extract.base import Candidate, EchoChunk, Extractor, SessionChunks, SkipSession
from hippo.paid.chat import Chat, ChatCounts, Invalid, Rejected, require_key

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.core import Hippo
    from hippo.extract.settings import ExtractSettings
    from hippo.store import Store

ANSWER_TOKENS = 1500  # added to the prompt's estimate when asking the guard
CONFIDENCE = 0.6

SYSTEM = """You extract durable memories from one coding-agent session transcript.
A memory is ONE self-contained statement that will still be useful in later sessions and is
understandable without the transcript: name the project, tool, file, command or person it is
about; resolve pronouns; turn relative dates ("tomorrow", "by Friday") into absolute dates
using the timestamps; do not copy sentences verbatim unless they already stand alone.

Extract: decisions (and why), rules and conventions the user sets, the user's preferences,
open tasks and todos (with deadlines), facts about tools, commands, configuration, paths,
versions and architecture, procedures that worked. Prefer what the USER says; take the
assistant's words only for a decision or conclusion it states explicitly. Lines starting with
"tool:" are tool output and lines like "assistant: Bash: ..." are tool calls: never extract
their contents as statements. Blocks starting "summary:" are a compaction summary the agent
wrote of the conversation before it: a good source of errors and their fixes, where things
live and pending tasks (a task is pending only if the newest summary still lists it). Ignore
injected system or harness text, greetings, questions, one-off requests that were carried
out in the session, and status reports.

types: rule (standing instruction), decision, preference, task, todo, fact, tool, config,
procedure, architecture, people, insight. importance: 0..1 (0.9+ only for rules that must
never be broken). tags: a few lowercase keywords. evidence: the ids N of the [chunk N]
blocks that state the memory (at least one).
Answer with JSON {"memories": [...]}; {"memories": []} when nothing qualifies."""


def windows(chunks: Sequence[EchoChunk], max_chars: int) -> list[list[EchoChunk]]:
    """Consecutive runs of chunks of at most `max_chars` characters (a bigger chunk alone)."""
    out: list[list[EchoChunk]] = []
    size = 0
    for chunk in chunks:
        if out and size + len(chunk.text) <= max_chars:
            out[-1].append(chunk)
            size += len(chunk.text)
        else:
            out.append([chunk])
            size = len(chunk.text)
    return out


def prompt(session: SessionChunks, chunks: Sequence[EchoChunk]) -> list[dict[str, str]]:
    head = (f"Project: {session.project or 'unknown'}\nSession: {session.key} "
            f"({session.format}), started {session.started_at or 'unknown'}\n\nTranscript:\n")
    body = "\n\n".join(f"[chunk {c.id}] {c.started_at or ''}\n{c.text}" for c in chunks)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": head + body}]


class LlmExtractor(ChatCounts, Extractor):
    """Structured-output extraction through an OpenAI-compatible chat endpoint."""

    name = "llm"
    remote = True

    def __init__(self, db: Store, settings: Settings | None, conf: ExtractSettings) -> None:
        self.conf = conf
        self.chat = Chat.for_extract(db, settings, conf)

    @classmethod
    def from_settings(cls, h: Hippo, conf: ExtractSettings) -> LlmExtractor:
        require_key("--extractor rules")
        return cls(h.db, h.settings, conf)

    def extract(self, session: SessionChunks) -> list[Candidate]:
        out: list[Candidate] = []
        for part in windows(session.chunks, self.conf.window_chars):
            out += self._window(session, part)
        return out

    def _window(self, session: SessionChunks, chunks: list[EchoChunk]) -> list[Candidate]:
        allowed = [c.id for c in chunks]
        try:
            memories = self.chat.ask_checked(
                prompt(session, chunks), name="memories", schema=schema.SCHEMA,
                answer_tokens=ANSWER_TOKENS, check=lambda answer: schema.check(answer, allowed),
                again="That answer is invalid: {problems}. Answer again with JSON that matches "
                      "the schema exactly, citing only [chunk N] ids shown above.")
        except Rejected as exc:
            raise SkipSession(str(exc)) from None
        except Invalid as exc:
            raise SkipSession(f"the model's answer was invalid twice ({exc})") from None
        return [Candidate(m["type"], m["text"].strip(), float(m["importance"]),
                          list(dict.fromkeys(int(e) for e in m["evidence"])),
                          [t.strip().lower() for t in m["tags"] if t.strip()],
                          CONFIDENCE) for m in memories]
