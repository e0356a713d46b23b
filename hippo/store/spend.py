"""The spend guard's state per provider, in the `guard` table: today's calls and tokens, the
circuit breaker. Every caller counts inside one `transaction()` (the write lock), so two
processes never both spend the last call of a cap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hippo.store.sql import Repository

if TYPE_CHECKING:
    from hippo.store.base import Row

SELECT = ("SELECT day, calls, tokens, consecutive_failures, open_until, last_error "
          "FROM guard WHERE provider = ?")
ENSURE = "INSERT INTO guard(provider, day) VALUES (?, ?) ON CONFLICT (provider) DO NOTHING"
NEW_DAY = ("UPDATE guard SET day = ?, calls = 0, tokens = 0 "
           "WHERE provider = ? AND day IS DISTINCT FROM ?")
COUNT_CALL = "UPDATE guard SET calls = calls + 1, tokens = tokens + ? WHERE provider = ?"
SUCCESS = ("UPDATE guard SET tokens = CASE WHEN tokens + :n > 0 THEN tokens + :n ELSE 0 END, "
           "consecutive_failures = 0, open_until = NULL WHERE provider = :provider")
FAILURE = ("UPDATE guard SET consecutive_failures = consecutive_failures + 1, last_error = ?, "
           "open_until = CASE WHEN consecutive_failures + 1 >= ? THEN ? ELSE open_until END "
           "WHERE provider = ?")


class Spend(Repository):
    """The spend guard's state per provider: today's calls and tokens, the circuit breaker."""

    def state(self, provider: str) -> Row | None:
        """The provider's day, calls, tokens, consecutive_failures, open_until, last_error."""
        return self.db.row(SELECT, (provider,))

    def ensure(self, provider: str, day: str) -> None:
        """Give the provider a state (counting from `day`) if it has none."""
        self.db.execute(ENSURE, (provider, day))

    def start_day(self, provider: str, day: str) -> None:
        """Zero the provider's calls and tokens when its state is of another day."""
        self.db.execute(NEW_DAY, (day, provider, day))

    def count_call(self, provider: str, tokens: int) -> None:
        """Count one more call of `tokens` tokens against today's usage."""
        self.db.execute(COUNT_CALL, (int(tokens), provider))

    def succeeded(self, provider: str, tokens: int) -> None:
        """Close the circuit, reset the failures and add `tokens` (never below 0 in all)."""
        self.db.execute(SUCCESS, {"n": int(tokens), "provider": provider})

    def failed(self, provider: str, error: str, failures_to_open: int,
               open_until: float) -> None:
        """Count a failure; at `failures_to_open` in a row, open the circuit until then."""
        self.db.execute(FAILURE, (error, int(failures_to_open), float(open_until), provider))
