"""PostgreSQL's errors said as hippo says them: one line, the URL without its password."""

from __future__ import annotations

import re
from urllib.parse import unquote

import psycopg
from psycopg import errors as pg

from hippo.errors import BusyError, ConfigError, HippoError

# What a read command may skip for a cache write (another writer holds the lock, or the
# role may not write).
SKIPPABLE = (pg.LockNotAvailable, pg.InsufficientPrivilege, pg.ReadOnlySqlTransaction)


# libpq's words for a URL or option it cannot use (78, not a server that is down): a bad
# option value, a port that is not a number ("Servname not supported"), an unknown option.
BAD_CONFIG = re.compile(r"invalid (?:uri|integer value|connection option|port|[a-z_]+ value)"
                        r"|servname not supported|missing \"=\"|unterminated quoted string"
                        r"|invalid percent-encoded")


def _secrets(url: str) -> list[str]:
    """The password a URL carries (in its user part or a `password=` parameter), as
    written and percent-decoded: what a libpq message quoting the URL must not show."""
    found: list[str] = []
    userinfo = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[0]
    if ":" in userinfo:
        found.append(userinfo.split(":", 1)[1])
    found += re.findall(r"(?i)[?&]password=([^&]*)", url)
    found += [unquote(s) for s in found]
    return sorted({s for s in found if s}, key=len, reverse=True)


def _reason(exc: BaseException, url: str = "") -> str:
    """The server's (or libpq's) first line, without a password it may quote."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text.removeprefix("connection failed: ").removeprefix("connection is bad: ")


def connect_error(exc: BaseException, label: str, url: str = "") -> HippoError:
    """Why a connection to `label` (a URL without its password) could not be made; `url`,
    the URL itself, only to keep its password out of the message."""
    reason = _reason(exc, url)
    low = reason.lower()
    if "password authentication failed" in low or "no password supplied" in low \
            or "role" in low and "does not exist" in low:
        return ConfigError(f"PostgreSQL at {label} refused the login ({reason}); check the "
                           "user and password (URL, PGPASSWORD or ~/.pgpass)")
    if "database" in low and "does not exist" in low:
        return ConfigError(f"PostgreSQL at {label}: {reason}; create it (createdb) or name "
                           "another in --db (or HIPPO_DB)")
    if isinstance(exc, psycopg.ProgrammingError) or BAD_CONFIG.search(low):
        return ConfigError(f"not a valid PostgreSQL URL: {label} ({reason})")
    return BusyError(f"cannot reach PostgreSQL at {label} ({reason}); is the server up? "
                     "nothing from this command was stored")


def translate(exc: BaseException, label: str) -> HippoError:
    """A psycopg error met while working, as one clear hippo error."""
    if isinstance(exc, (pg.LockNotAvailable, pg.DeadlockDetected, pg.SerializationFailure)):
        return BusyError(f"database {label} is busy (another hippo is writing); try again")
    if isinstance(exc, pg.QueryCanceled):
        return BusyError(f"database {label} took too long to answer; try again")
    if isinstance(exc, (pg.InsufficientPrivilege, pg.ReadOnlySqlTransaction)):
        return HippoError(f"database {label} may not be written by this role ({_reason(exc)}); "
                          "nothing from this command was stored")
    if isinstance(exc, pg.DiskFull):
        return HippoError(f"the PostgreSQL server of {label} is out of disk; nothing from "
                          "this command was stored")
    if isinstance(exc, psycopg.OperationalError):
        return BusyError(f"lost the connection to PostgreSQL at {label} ({_reason(exc)}); "
                         "nothing from this command was stored; try again")
    return HippoError(f"database error on {label}: {_reason(exc)}")


def skippable(exc: BaseException) -> bool:
    """A cache write a read command may skip (see `SKIPPABLE`)."""
    return isinstance(exc, (BusyError, *SKIPPABLE)) or (
        isinstance(exc, HippoError) and isinstance(exc.__cause__, SKIPPABLE))
