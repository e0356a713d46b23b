"""Which project a directory belongs to: the name of its git repository's main working tree.

Read from the files git keeps, without running git (every CLI start needs the project): a
linked worktree's `.git` is a file `gitdir: <repo>/.git/worktrees/<name>` whose `commondir`
names the repository's git dir (`git rev-parse --git-common-dir`); the main working tree is
`core.worktree` when set, else the directory holding that `.git`; a bare repository gives
its own name. Worktrees are usually gone by the time their sessions are ingested, so each
one seen is recorded (`project_dirs`), and ingest falls back to the record, then to the
layouts in `guess`. The rule is documented in docs/projects.md.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from hippo.store import Store

# A recording waits this long at most for another writer: it must never slow a command.
RECORD_BUSY_MS = 20


class Location(NamedTuple):
    """Where a directory is: its project, the top of its working tree, its repository.

    A NamedTuple: a frozen dataclass costs 1.5 ms at import, on every CLI start."""

    project: str | None
    root: str | None = None  # top of the working tree holding the path (None: not in git)
    common_dir: str | None = None  # the repository's git dir, as `--git-common-dir`
    linked: bool = False  # in a linked worktree (`git worktree add`), not the main one
    repo: str | None = None  # the main working tree (a bare repository: its git dir)


def locate(path: str | os.PathLike[str], base: str | None = None) -> Location:
    """The project of `path` and how it was found (a missing path: its last component).
    `base`: the directory a relative `path` is relative to (a call's cwd; default the
    process's).

    A recorded cwd from another machine may not exist here, or be a Windows path.
    """
    raw = str(path)
    if "\\" in raw and "/" not in raw:
        return Location(PureWindowsPath(raw).name or None)
    start = Path(raw).expanduser()
    if base is not None and not start.is_absolute():
        start = Path(base) / start
    if not start.is_dir():
        return Location(start.name or None)
    try:
        start = start.resolve()
    except OSError:
        pass
    for d in (start, *start.parents):
        dotgit = os.path.join(d, ".git")
        try:
            mode = os.stat(dotgit).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            return Location(d.name or None, str(d), dotgit, False, str(d))
        gitdir = _gitdir(dotgit) if stat.S_ISREG(mode) else None
        if gitdir is None:  # not a gitfile git would accept: still the top of something
            return Location(d.name or None, str(d))
        common = _common_dir(gitdir)
        if common is None:  # a submodule, or `gitdir: ./.bare`: a repository of its own
            return Location(d.name or None, str(d), gitdir, False, str(d))
        repo = main_tree(common)
        return Location(PurePath(repo).name or d.name or None, str(d), common, True, repo)
    return Location(start.name or None)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(65536)
    except (OSError, ValueError):  # ValueError: a NUL byte in a path read from a file
        return None


def _gitdir(dotgit: str) -> str | None:
    """The git dir a `.git` file points at (relative paths are relative to its directory)."""
    text = _read(dotgit)
    if not text or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:"):].strip()
    if not target or "\0" in target:
        return None
    return os.path.normpath(os.path.join(os.path.dirname(dotgit), target))


def _common_dir(gitdir: str) -> str | None:
    """The repository's git dir when `gitdir` is a linked worktree's, else None."""
    text = _read(os.path.join(gitdir, "commondir"))
    if text is not None and text.strip():
        return os.path.normpath(os.path.join(gitdir, text.strip()))
    p = PurePath(gitdir)
    if text is None and p.parent.name == "worktrees" and not os.path.isdir(gitdir):
        return str(p.parent.parent)  # the repository moved or was deleted: read the path
    return None


def main_tree(common: str) -> str:
    """The main working tree of the repository whose git dir is `common`.

    `core.worktree` when its config sets it (submodules do); else the directory holding a
    `.git`; a bare repository has none: `repo.git` names `repo`, a hidden git dir inside
    a directory (`proj/.bare`) names that directory, any other its own name.
    """
    worktree = _core_worktree(_read(os.path.join(common, "config")) or "")
    if worktree:
        return os.path.normpath(os.path.join(common, worktree))
    c = PurePath(common)
    if c.name == ".git" or (c.name.startswith(".") and c.parent.name):
        return str(c.parent)
    if c.name.endswith(".git") and len(c.name) > len(".git"):
        return str(c.with_name(c.name[:-len(".git")]))
    return common


def _core_worktree(config: str) -> str | None:
    """`core.worktree` from a git config file's text (enough of git's syntax for it)."""
    section = ""
    for line in config.splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s[1:s.find("]")].strip().lower() if "]" in s else ""
            continue
        if section != "core" or "=" not in s:
            continue
        key, value = s.split("=", 1)
        if key.strip().lower() == "worktree":
            value = value.split(" #")[0].split(" ;")[0].strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            return value or None
    return None


# -- paths nobody recorded -----------------------------------------------------------------
WORKTREE_SUFFIX = "-worktrees"


def guess(path: str) -> str | None:
    """The repository a worktree path names by its layout, or None (docs/projects.md).

    `<repo>-worktrees/<task>`, `<repo>/.worktrees/<task>`, `<repo>/.claude/worktrees/<task>`
    and `<repo>/.git/worktrees/<task>`; the first (outermost) match wins, anywhere above.
    """
    pure: PurePath = (PureWindowsPath(path) if "\\" in path and "/" not in path
                      else PurePosixPath(path))
    parts = pure.parts
    for i, part in enumerate(parts[:-1]):  # a layout needs a task directory below it
        if part.endswith(WORKTREE_SUFFIX) and len(part) > len(WORKTREE_SUFFIX):
            return part[:-len(WORKTREE_SUFFIX)]
        if part == ".worktrees" and i >= 2:
            return parts[i - 1]
        if part == "worktrees" and i >= 3 and parts[i - 1] in (".claude", ".git"):
            return parts[i - 2]
    return None


# -- the record of worktrees seen ------------------------------------------------------------
def remember(db: Store, loc: Location) -> bool:
    """Record a linked worktree's project, best effort: a busy or read-only database, or
    one without the table, costs nothing and never fails the command. True when written."""
    if not loc.linked or not loc.root or not loc.project:
        return False
    try:
        row = db.projects.directory(loc.root)
        if row and row["project"] == loc.project and row["common_dir"] == loc.common_dir:
            return False
        from hippo.timeutil import now_iso

        with db.waiting(RECORD_BUSY_MS):
            db.projects.record_directory(loc.root, loc.project, loc.common_dir, now_iso())
        return True
    except Exception:  # noqa: BLE001 - a record is a convenience; the command goes on
        return False


def recorded(db: Store, path: str) -> str | None:
    """The project recorded for the longest recorded directory that holds `path`."""
    p = PurePosixPath(os.path.normpath(path)) if path.startswith("/") else None
    if p is None:
        return None
    candidates = [str(p), *(str(a) for a in p.parents)]
    try:
        rows = db.projects.directories(candidates)
    except Exception:  # noqa: BLE001 - an older connection without the table
        return None
    best = max(rows, key=lambda r: len(r["path"]), default=None)
    return best["project"] if best else None


def of_session(db: Store, cwd: str) -> str | None:
    """A session's project from its recorded cwd (docs/projects.md, "Ingest").

    A directory that exists is what it is now (and a worktree is recorded); one that is gone
    takes the record of it, then the layout its path shows, then its last component.
    """
    loc = locate(cwd)
    if loc.root is not None:
        remember(db, loc)
        return loc.project
    if os.path.exists(cwd):
        return loc.project
    return recorded(db, cwd) or guess(cwd) or loc.project
