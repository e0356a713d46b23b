"""SQLite's errors said as hippo says them: one clear line, what went wrong and what to do."""

from __future__ import annotations

from pathlib import Path

import apsw

from hippo.errors import BusyError, ConfigError, CorruptDatabase, HippoError
from hippo.store.sqlite.files import (
    _filesystem_state,
    _has_magic,
    _why_cannot_open,
    _why_read_only,
    mark_corrupt,
)


def translate(exc: BaseException, path: Path | str) -> HippoError:
    """Turn an apsw error into one clear hippo error (what went wrong, what to do)."""
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return BusyError(f"database {path} is busy (another hippo is writing); try again")
    if isinstance(exc, apsw.NotADBError) and not _has_magic(path):
        return ConfigError(f"{path} is not a SQLite database (it does not start with SQLite's "
                           "header), so not hippo's; choose another --db (or HIPPO_DB); if it "
                           "was hippo's, its header is destroyed: restore it from a backup")
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        mark_corrupt(path, str(exc))
        return CorruptDatabase(f"database {path} is corrupt ({exc}); `hippo doctor --fix` "
                               "salvages every readable row into a new file (`hippo export "
                               "--salvage` exports them)")
    if isinstance(exc, apsw.FullError):
        return HippoError(f"disk full while writing {path}; nothing from this command was stored")
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError)):
        return HippoError(f"database {path} is read-only{_why_read_only(path)}; nothing from "
                          "this command was stored")
    if isinstance(exc, (apsw.CantOpenError, apsw.IOError)):
        # Opening needs the WAL and its index beside the file: say why that failed.
        where = _filesystem_state(path)
        if where == "read-only":
            return HippoError(f"database {path} is on a read-only file system (hippo keeps its "
                              "write-ahead log beside it); mount it read-write")
        if where == "full":
            return HippoError(f"disk full at {path}; free some space and try again; nothing "
                              "from this command was stored")
    if isinstance(exc, apsw.CantOpenError):
        return HippoError(f"cannot open database {path}{_why_cannot_open(path)}")
    if isinstance(exc, apsw.IOError):
        return HippoError(f"I/O error on database {path}: {exc}")
    return HippoError(f"database error on {path}: {exc}")


def skippable(exc: BaseException) -> bool:
    """A cache write a read command may skip: the file is busy (another process writes) or
    cannot be written here (read-only file, directory or file system)."""
    kinds = (apsw.BusyError, apsw.LockedError, apsw.ReadOnlyError, apsw.PermissionsError)
    return (isinstance(exc, (BusyError, *kinds))
            or (isinstance(exc, HippoError) and isinstance(exc.__cause__, kinds)))
