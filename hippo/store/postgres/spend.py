"""PostgreSQL: the spend guard's state per provider, in the `guard` table.

Every caller counts inside one `transaction()` (the writer lock), so two processes of a
team never both spend the last call of a cap."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.store.base import Row
    from hippo.store.postgres.database import PgSql

SELECT = ("SELECT day, calls, tokens, consecutive_failures, open_until, last_error "
          "FROM guard WHERE provider = ?")
ENSURE = "INSERT INTO guard(provider, day) VALUES (?, ?) ON CONFLICT (provider) DO NOTHING"
NEW_DAY = ("UPDATE guard SET day = ?, calls = 0, tokens = 0 "
           "WHERE provider = ? AND day IS DISTINCT FROM ?")
COUNT_CALL = "UPDATE guard SET calls = calls + 1, tokens = tokens + ? WHERE provider = ?"
SUCCESS = ("UPDATE guard SET tokens = greatest(0, tokens + ?), consecutive_failures = 0, "
           "open_until = NULL WHERE provider = ?")
FAILURE = ("UPDATE guard SET consecutive_failures = consecutive_failures + 1, last_error = ?, "
           "open_until = CASE WHEN consecutive_failures + 1 >= ? THEN ? ELSE open_until END "
           "WHERE provider = ?")


class PgSpend:
    def __init__(self, db: PgSql) -> None:
        self.db = db

    def state(self, provider: str) -> Row | None:
        return self.db.row(SELECT, (provider,))

    def ensure(self, provider: str, day: str) -> None:
        self.db.execute(ENSURE, (provider, day))

    def start_day(self, provider: str, day: str) -> None:
        self.db.execute(NEW_DAY, (day, provider, day))

    def count_call(self, provider: str, tokens: int) -> None:
        self.db.execute(COUNT_CALL, (int(tokens), provider))

    def succeeded(self, provider: str, tokens: int) -> None:
        self.db.execute(SUCCESS, (int(tokens), provider))

    def failed(self, provider: str, error: str, failures_to_open: int,
               open_until: float) -> None:
        self.db.execute(FAILURE, (error, int(failures_to_open), float(open_until), provider))
