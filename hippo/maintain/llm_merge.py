"""The `llm` merger: a chat model writes one statement for a cluster; the literals decide.

`hippo consolidate --merger llm` (or `[maintain] merger = "llm"`) asks the OpenAI-compatible
chat endpoint of `hippo extract --extractor llm` (same `[extract]` model, timeout and
retries, same `openai-chat` spend guard) for one statement that says what every member
says. The answer is checked before it is used: it must keep every literal of the members
(numbers, versions, paths, flags, identifiers; see `literals.literals`) and add none, keep a
negation, and stay no longer than the members together. An invalid answer is asked for once
more; then, or when the request is rejected, that cluster keeps the rule-based statement. When
the endpoint is down, the circuit open or the day's cap reached, the rest of the run keeps
the rule-based statements: a merge never waits for a model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hippo.maintain.literals import literals, negated, words
from hippo.paid.chat import Chat, ChatCounts, Invalid, ProviderDown, Rejected, require_key
from hippo.paid.spend import CapReached, CircuitOpen

if TYPE_CHECKING:
    from hippo.core import Hippo

ANSWER_TOKENS = 400  # added to the prompt's estimate when asking the guard
MAX_CHARS = 2000
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1, "maxLength": MAX_CHARS}},
    "required": ["text"],
    "additionalProperties": False,
}
SYSTEM = """You merge near-duplicate memories of a coding agent into ONE statement.
The numbered statements say the same thing in different words (later ones are newer). Write
the single statement that keeps every fact any of them states: every name, number, version,
path, file, flag, command and identifier exactly as written, and any negation. Add nothing
that none of them says. One or two sentences, self-contained, in the statements' language.
Answer with JSON {"text": "..."}."""


def prompt(records: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    first = records[0]
    ordered = sorted(records, key=lambda r: (r["created_at"], r["id"]))
    lines = "\n".join(f"{n}. ({r['created_at'][:10]}) {r['text']}"
                      for n, r in enumerate(ordered, 1))
    head = f"Type: {first['type']}\nProject: {first['project'] or 'global'}\n\nStatements:\n"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": head + lines}]


def check(answer: str, records: Sequence[dict[str, Any]]) -> tuple[str, list[str]]:
    """The merged statement in `answer`, and what is wrong with it (empty when it may be used)."""
    try:
        doc = json.loads(answer)
    except ValueError:
        return "", ["the answer is not JSON"]
    text = doc.get("text") if isinstance(doc, dict) else None
    if not isinstance(text, str) or not text.strip():
        return "", ['the answer has no "text" string']
    text = " ".join(text.split())
    texts = [r["text"] for r in records]
    problems = []
    limit = min(MAX_CHARS, sum(len(t) for t in set(texts)))
    if len(text) > limit:
        problems.append(f"the statement is {len(text)} characters, more than the "
                        f"{limit} of the statements together")
    # A literal counts as kept (or as said before) wherever its token appears: `API` for `api`.
    dropped = frozenset().union(*(literals(t) for t in texts)) - words(text)
    added = literals(text) - frozenset().union(*(words(t) for t in texts))
    if dropped:
        problems.append(f"it drops {', '.join(sorted(dropped))}")
    if added:
        problems.append(f"it adds {', '.join(sorted(added))}, which no statement says")
    if negated(text) != any(negated(t) for t in texts):
        problems.append("it changes whether the statement is negated")
    return text, problems


class LlmMerger(ChatCounts):
    """Merged statements for one consolidate run; counts calls and fallbacks."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self.down: str | None = None  # why the rest of the run keeps rule-based statements
        self.fallbacks = 0

    @classmethod
    def for_run(cls, h: Hippo) -> LlmMerger:
        from hippo.extract.settings import ExtractSettings

        require_key("--merger rules")
        return cls(Chat.for_extract(h.db, h.settings, ExtractSettings.from_settings(h.settings)))

    def statement(self, records: Sequence[dict[str, Any]]) -> tuple[str | None, str | None]:
        """(the model's statement, None), or (None, why the rule-based one stays)."""
        if self.down:
            return self._fallback(self.down)
        try:
            return self.chat.ask_checked(
                prompt(records), name="statement", schema=SCHEMA, answer_tokens=ANSWER_TOKENS,
                check=lambda answer: check(answer, records),
                again="That statement cannot be used: {problems}. Answer again."), None
        except Rejected as exc:
            return self._fallback(str(exc))
        except Invalid as exc:
            return self._fallback(f"the model's statement was invalid twice ({exc})")
        except (ProviderDown, CircuitOpen, CapReached) as exc:  # no more asking this run
            self.down = str(exc)
            return self._fallback(self.down)

    def _fallback(self, why: str) -> tuple[None, str]:
        self.fallbacks += 1
        return None, why
