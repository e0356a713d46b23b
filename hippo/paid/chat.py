"""Guarded requests to an OpenAI-compatible chat endpoint, for every job that asks an LLM.

`hippo extract --extractor llm` and `hippo consolidate --merger llm` share this path:
the official `openai` client (OPENAI_BASE_URL, OPENAI_API_KEY), structured output, and the
spend guard of provider `openai-chat` (daily call and token caps, a circuit breaker that all
processes see). What each failure becomes:

- 401/403 (the key), 404 (the model or endpoint): ConfigError, exit 78: nothing later
  can succeed, so the job stops;
- 400/413/422: `Rejected`: the provider is up, this one request is bad;
- 429, 5xx, a timeout, no connection or an unusable body: `ProviderDown` (exit 75), one
  failure counted towards opening the circuit;
- an open circuit or a reached cap: the guard's CircuitOpen / CapReached (exit 75), raised
  before any request is sent.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from hippo.errors import BusyError, ConfigError, HippoError, scrub
from hippo.paid import spend

if TYPE_CHECKING:
    from hippo.config import Settings
    from hippo.extract.settings import ExtractSettings
    from hippo.store import Store

PROVIDER = "openai-chat"
# Keywords that strict structured output may refuse; our own validation checks them.
_UNSUPPORTED = ("minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems")

Messages = list[dict[str, str]]
T = TypeVar("T")


class ProviderDown(BusyError):
    """The chat endpoint failed after the client's retries; try again later (exit 75)."""


class Rejected(HippoError):
    """The endpoint refused this request (HTTP 400/413/422); it is up and other requests may pass."""


class Invalid(HippoError):
    """The model's answer failed the caller's check twice; the message names the first problem."""


def require_key(alternative: str) -> None:
    """ConfigError (exit 78) naming `alternative` when OPENAI_API_KEY is not set."""
    if not os.environ.get("OPENAI_API_KEY"):
        raise ConfigError("OPENAI_API_KEY is not set; export it (and OPENAI_BASE_URL for "
                          f"another server) or use {alternative}")


def wire_schema(node: Any) -> Any:
    """The schema as sent to the server: keywords strict structured output may refuse removed."""
    if isinstance(node, dict):
        return {k: wire_schema(v) for k, v in node.items() if k not in _UNSUPPORTED}
    if isinstance(node, list):
        return [wire_schema(v) for v in node]
    return node


class ChatCounts:
    """What a step that asks one `Chat` (the llm extractor, the llm merger) reports of it:
    the run's summary says `llm_calls` and `llm_retries`."""

    chat: Chat

    @property
    def calls(self) -> int:
        return self.chat.calls

    @property
    def retries(self) -> int:
        return self.chat.retries


class Chat:
    """One job's client: `ask()` sends a guarded structured-output request; counts calls."""

    def __init__(self, db: Store, settings: Settings | None, *, model: str, timeout: float,
                 max_retries: int, temperature: float, model_setting: str) -> None:
        self.db = db
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.model_setting = model_setting  # where the user sets the model, for a 404
        self.limits = spend.limits_for(settings, PROVIDER)
        self.calls = 0
        self.retries = 0  # second asks after an invalid answer (`ask_checked`)

    @classmethod
    def for_extract(cls, db: Store, settings: Settings | None,
                    conf: ExtractSettings) -> Chat:
        """The endpoint settings of `[extract]` (the llm extractor and the llm merger)."""
        return cls(db, settings, model=conf.model, timeout=conf.timeout,
                   max_retries=conf.max_retries, temperature=conf.temperature,
                   model_setting="[extract] model")

    @cached_property
    def client(self) -> Any:
        import openai

        return openai.OpenAI(timeout=self.timeout, max_retries=self.max_retries)

    def ask(self, messages: Messages, *, name: str, schema: dict[str, Any],
            answer_tokens: int) -> str:
        """The assistant's answer to `messages`, asked for as JSON matching `schema`."""
        import openai

        estimate = sum(len(m["content"]) for m in messages) // 4 + answer_tokens
        spend.check(self.db, PROVIDER, tokens=estimate, limits=self.limits)
        self.calls += 1
        try:
            resp = self.client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature,
                response_format={"type": "json_schema", "json_schema": {
                    "name": name, "strict": True, "schema": wire_schema(schema)}},
            )
        except openai.APIStatusError as exc:
            self._status_error(exc)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            what = "timed out" if isinstance(exc, openai.APITimeoutError) else "unreachable"
            self._down(f"{PROVIDER} {what} ({self.client.base_url})", exc)
        except openai.APIError as exc:  # e.g. a 200 whose body is not a chat completion
            self._down(scrub(f"{PROVIDER} gave an unusable response: {exc}"), exc)
        usage = getattr(resp, "usage", None)
        used = int(getattr(usage, "total_tokens", 0) or 0)
        spend.record_success(self.db, PROVIDER, tokens=(used - estimate) if used else 0)
        choices = getattr(resp, "choices", None) or []
        return (choices[0].message.content or "") if choices else ""

    def ask_checked(self, messages: Messages, *, name: str, schema: dict[str, Any],
                    answer_tokens: int, check: Callable[[str], tuple[T, list[str]]],
                    again: str) -> T:
        """`ask`, with the answer checked: `check(answer)` gives (value, problems). When there
        are problems the model sees its answer and `again` with `{problems}` filled in, and
        answers once more; a second invalid answer raises `Invalid`. Request failures raise
        as in `ask`."""
        problems: list[str] = []
        for attempt in range(2):
            if attempt:
                self.retries += 1
            answer = self.ask(messages, name=name, schema=schema, answer_tokens=answer_tokens)
            value, problems = check(answer)
            if not problems:
                return value
            messages = [*messages, {"role": "assistant", "content": answer[:4000]},
                        {"role": "user", "content": again.format(problems="; ".join(problems))}]
        raise Invalid(problems[0])

    def _status_error(self, exc: Any) -> NoReturn:
        code = exc.status_code
        detail = scrub(" ".join(str(getattr(exc, "message", "") or exc).split()))[:200]
        if code in (401, 403):
            spend.record_success(self.db, PROVIDER)
            raise ConfigError(f"{PROVIDER} refused the API key (HTTP {code}); check "
                              "OPENAI_API_KEY") from None
        if code == 404:
            spend.record_success(self.db, PROVIDER)
            raise ConfigError(f"{PROVIDER}: model {self.model!r} or endpoint not found at "
                              f"{self.client.base_url} (HTTP 404); set {self.model_setting}"
                              ) from None
        if code in (400, 413, 422):
            spend.record_success(self.db, PROVIDER)  # the provider is up; this request is bad
            raise Rejected(f"request rejected (HTTP {code}): {detail}") from None
        self._down(f"{PROVIDER} failed with HTTP {code}: {detail}", exc)

    def _down(self, message: str, exc: BaseException) -> NoReturn:
        opened = spend.record_failure(self.db, PROVIDER, message, limits=self.limits)
        hint = ("circuit now open" if opened
                else f"circuit opens after {self.limits.failures_to_open} consecutive failures")
        raise ProviderDown(f"{message}; try again later ({hint})") from exc
