"""What `hippo setup` does to a file: read it, keep a backup of it before any change,
write the new one atomically (same mode), remember what it wrote, and show a change as a
unified diff. The record (`<hippo home>/setup/state.json`) is what lets `--remove` put
back the very bytes that were there before, when nobody changed the file since."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from hippo.errors import ConfigError, HippoError


def home() -> Path:
    from hippo.config import home_dir

    return home_dir() / "setup"


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except OSError as exc:
        raise HippoError(f"{path}: cannot read it ({exc.strerror}); make it readable or "
                         "move it") from None


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def diff(path: Path, before: bytes | None, after: bytes | None) -> str:
    """The change as a unified diff (a missing file is /dev/null, as git shows it)."""
    a = (before or b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (after or b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, "/dev/null" if before is None else str(path),
                                      "/dev/null" if after is None else str(path)))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def backup(path: Path, data: bytes) -> Path:
    """A copy of `data` (what `path` held) under hippo's home, never overwritten."""
    from hippo.timeutil import now_iso

    folder = home() / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = now_iso().replace(":", "").replace("-", "").replace(".", "")
    name = f"{stamp}-{str(path).strip('/').replace('/', '_')}"
    target, n = folder / name, 1
    while target.exists():
        n += 1
        target = folder / f"{name}.{n}"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return target


def make_dirs(folder: Path) -> list[str]:
    """Make `folder` and its missing parents; return the ones made, outermost first."""
    made = []
    for d in (*reversed(folder.parents), folder):
        if not d.exists():
            d.mkdir()
            made.append(str(d))
    return made


def write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` at once (a reader sees the old or the new file), keeping
    the old file's permissions. A symlink (dotfiles kept in a repository) stays one: the
    file it points to is what changes."""
    if path.is_symlink():
        path = path.resolve()
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o644
    tmp = path.with_name(f".{path.name}.hippo-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise HippoError(f"{path}: cannot write it ({exc.strerror}); make it writable or "
                         "move it") from None


def unlink(path: Path, made_dirs: list[str]) -> None:
    """Delete `path`, then the directories setup made for it, if they are empty. A symlink
    stays: the file it points to is the one setup wrote, and goes."""
    (path.resolve() if path.is_symlink() else path).unlink(missing_ok=True)
    for d in reversed(made_dirs):
        try:
            os.rmdir(d)
        except OSError:
            break


class State:
    """The record of what setup wrote: per file, the backup of what was there before
    hippo's first change, and the digest of what it wrote last."""

    def __init__(self) -> None:
        self.path = home() / "state.json"
        data = read(self.path)
        try:
            self.files: dict[str, dict[str, Any]] = json.loads(data)["files"] if data else {}
        except (ValueError, KeyError, TypeError):
            self.files = {}  # a damaged record: setup still works, remove strips instead

    def get(self, path: Path) -> dict[str, Any] | None:
        return self.files.get(str(path))

    def wrote(self, path: Path, data: bytes, *, agent: str, scope: str, existed: bool,
              saved: Path | None, made_dirs: list[str]) -> None:
        """Record a write of `data` to `path`; the first one keeps `saved`, the backup of
        what was there before hippo's first change (None: there was no file)."""
        entry = self.files.get(str(path))
        if entry is None:
            entry = {"agent": agent, "scope": scope, "existed": existed,
                     "original": str(saved) if saved else None, "made_dirs": made_dirs}
            self.files[str(path)] = entry
        entry["written"] = digest(data)
        self.save()

    def forget(self, path: Path) -> None:
        if self.files.pop(str(path), None) is not None:
            self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write(self.path, (json.dumps({"files": self.files}, indent=2) + "\n").encode())
