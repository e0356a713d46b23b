"""One error hierarchy; each error carries the process exit code the CLI returns."""

from __future__ import annotations

import os
from enum import IntEnum

TYPE_CHECKING = False  # not typing's: imported by every command, the fast path too
if TYPE_CHECKING:
    from collections.abc import Mapping

# Environment variables whose values are credentials (OPENAI_API_KEY, VOYAGE_API_KEY, ...).
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET")
REDACTED = "[redacted]"


class ExitCode(IntEnum):
    """Documented exit codes (SPEC "Shape")."""

    OK = 0
    ERROR = 1
    USAGE = 2
    PARTIAL = 3
    TEMPFAIL = 75  # busy past the timeout, a job lock held, a spend cap or open circuit
    # schema newer (or, for a read command, older) than this hippo, model mismatch, missing
    # API key, a file that is not hippo's, a directory other users can write, a plugin that
    # does not load
    CONFIG = 78


def scrub(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential from the environment masked, then every secret the
    redactor knows (`hippo.redact`).

    Providers (and proxies in front of them) may quote the key they were sent in an error
    body, and an error about a bad input line may quote the line; such text reaches
    stderr, JSON output and the database only through here. `environ`: the call's
    variables (`hippo.console.environment`), default this process's.
    """
    for name, value in (os.environ if environ is None else environ).items():
        if len(value) >= 8 and name.upper().endswith(SECRET_SUFFIXES) and value in text:
            text = text.replace(value, REDACTED)
    from hippo.redact import redact_text

    return redact_text(text)


class HippoError(Exception):
    """Base error: one line for stderr and an exit code."""

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, *, exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(HippoError):
    """Bad arguments or bad input values (unknown type, importance out of range...)."""

    exit_code = ExitCode.USAGE


class ConfigError(HippoError):
    """Configuration problem the user must fix: newer schema, model mismatch, missing key."""

    exit_code = ExitCode.CONFIG


class BusyError(HippoError):
    """Try again later: database busy past the timeout, lock held, cap reached, circuit open."""

    exit_code = ExitCode.TEMPFAIL


class NoDatabase(HippoError):
    """A read command found no database (missing or empty file): nothing stored, so
    nothing to show. Said on stderr, exit 0; the file is not created."""

    exit_code = ExitCode.OK


class CorruptDatabase(HippoError):
    """SQLite found the file damaged (a bad page, a file cut short). `hippo doctor --fix`
    salvages every readable row into a new file; writes are refused until then."""

    exit_code = ExitCode.ERROR


class NotFoundError(HippoError):
    """A named record does not exist."""

    exit_code = ExitCode.ERROR


class ProviderError(HippoError):
    """A remote or local model provider failed (network, timeout, bad answer)."""

    exit_code = ExitCode.ERROR
