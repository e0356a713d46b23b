"""The spend guard's state per provider: today's calls and tokens, the circuit breaker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hippo.store.base import Row


class Spend(Protocol):
    """The spend guard's state per provider: today's calls and tokens, the circuit breaker."""

    def state(self, provider: str) -> Row | None:
        """The provider's day, calls, tokens, consecutive_failures, open_until, last_error."""
        ...

    def ensure(self, provider: str, day: str) -> None:
        """Give the provider a state (counting from `day`) if it has none."""
        ...

    def start_day(self, provider: str, day: str) -> None:
        """Zero the provider's calls and tokens when its state is of another day."""
        ...

    def count_call(self, provider: str, tokens: int) -> None:
        """Count one more call of `tokens` tokens against today's usage."""
        ...

    def succeeded(self, provider: str, tokens: int) -> None:
        """Close the circuit, reset the failures and add `tokens` (never below 0 in all)."""
        ...

    def failed(self, provider: str, error: str, failures_to_open: int,
               open_until: float) -> None:
        """Count a failure; at `failures_to_open` in a row, open the circuit until then."""
        ...
