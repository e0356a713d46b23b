"""`hippo setup AGENT`: hippo's hooks and MCP server written into a client's own config
(Claude Code, Codex CLI, Gemini CLI, Cursor), merged with what is there, and taken out
again by `--remove`.

Every file is read and parsed before anything is written, so a file that cannot be parsed
stops the whole setup with nothing changed. Each change keeps a backup of the file first
(`hippo.setup.files`); `--remove` puts back the bytes that were there before when the file
is still what setup wrote, else takes out hippo's entries alone."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hippo.errors import ConfigError, HippoError, UsageError
from hippo.setup import entries, files
from hippo.setup.clients import CLIENTS, SCOPES, Client, Target
from hippo.setup.formats import of

AGENTS = tuple(CLIENTS)


@dataclass(slots=True)
class Change:
    """One file: its bytes before and after (None: no file), and what that is."""

    target: Target
    before: bytes | None
    after: bytes | None
    action: str  # written, created, unchanged, restored, removed, deleted, absent
    fresh: bool = True  # `before` holds none of hippo's entries

    @property
    def differs(self) -> bool:
        return self.after != self.before


def client(agent: str) -> Client:
    if agent not in CLIENTS:
        raise UsageError(f"unknown agent {agent!r}; known: {', '.join(AGENTS)}")
    return CLIENTS[agent]


def project_root(cwd: str) -> Path:
    """The top of the working tree `cwd` is in (the directory itself outside git)."""
    from hippo.project import locate

    return Path(locate(cwd).root or Path(cwd).resolve())


def check_scope(c: Client, scope: str) -> None:
    """A user-scope setup creates the client's config directory only for a client that is
    installed: a missing directory and no client is most likely a typo or a wrong HOME."""
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}; known: {', '.join(SCOPES)}")
    folder = c.user_dir()
    if scope == "user" and not folder.is_dir() and c.installed() is None:
        raise ConfigError(f"{c.name} is not installed (no {' or '.join(c.binaries)} on PATH) "
                          f"and {folder} does not exist; install it first, or use --scope "
                          "project")


def plan(agent: str, scope: str, cwd: str, hippo: list[str]) -> list[Change]:
    """What setup would write (nothing is written)."""
    c = client(agent)
    check_scope(c, scope)
    out = []
    for target in c.targets(scope, project_root(cwd), hippo):
        fmt = of(target.fmt)
        before = files.read(target.path)
        doc = fmt.load(before or b"", str(target.path))
        old = copy.deepcopy(fmt.plain(doc))
        try:
            _put(target, doc, fmt.kind)
        except entries.Misshapen as exc:
            raise ConfigError(f"{target.path}: {exc}; fix or move it, nothing was "
                              "written") from None
        fresh = before is None or not _strip(target, fmt.load(before, str(target.path)))
        if before is not None and fmt.plain(doc) == old:
            out.append(Change(target, before, before, "unchanged", fresh))
        else:
            out.append(Change(target, before, fmt.dump(doc),
                              "written" if before is not None else "created", fresh))
    return out


def _put(target: Target, doc: Any, kind: entries.Kind) -> None:
    if target.hooks:
        entries.put_hooks(doc, target.hooks, kind)
    if target.server:
        entries.put_server(doc, *target.server[:1], "hippo", target.server[1], kind)
    if target.member:
        entries.put_member(doc, *target.member)


def _strip(target: Target, doc: Any) -> bool:
    found = entries.strip_hooks(doc)
    if target.server:
        found = entries.strip_server(doc, target.server[0], "hippo") or found
    if target.member:
        found = entries.strip_member(doc, *target.member) or found
    return found


def plan_remove(agent: str, scope: str, cwd: str, state: files.State) -> list[Change]:
    """What `--remove` would write: the bytes from before setup when the file is still
    what setup wrote; else the file without hippo's entries (and when that equals what
    was there before, those very bytes)."""
    c = client(agent)
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}; known: {', '.join(SCOPES)}")
    out = []
    for target in c.targets(scope, project_root(cwd), ["hippo"]):
        fmt = of(target.fmt)
        before = files.read(target.path)
        doc = fmt.load(before or b"", str(target.path))
        if before is None or not _strip(target, doc):
            out.append(Change(target, before, before, "absent"))
            continue
        record = state.get(target.path) or {}
        original = files.read(Path(record["original"])) if record.get("original") else None
        if record.get("written") == files.digest(before):
            if not record.get("existed"):
                out.append(Change(target, before, None, "deleted"))
                continue
            if original is not None:
                out.append(Change(target, before, original, "restored"))
                continue
        after = fmt.dump(doc)
        if original is not None and _same(fmt, original, doc, str(target.path)):
            after = original
        elif record and not record.get("existed") and not fmt.plain(doc):
            out.append(Change(target, before, None, "deleted"))
            continue
        out.append(Change(target, before, after, "removed"))
    return out


def _same(fmt: Any, data: bytes, doc: Any, path: str) -> bool:
    try:
        return bool(fmt.plain(fmt.load(data, path)) == fmt.plain(doc))
    except ConfigError:
        return False


def apply(changes: list[Change], agent: str, scope: str, state: files.State, *,
          removing: bool = False) -> list[dict[str, Any]]:
    """Write the changes, each file's backup first; one record per file. A file that
    cannot be written puts back the ones this call wrote (and the record), so a setup is
    all or nothing."""
    records: list[dict[str, Any]] = []
    done: list[tuple[Change, list[str]]] = []
    kept = copy.deepcopy(state.files)
    try:
        for ch in changes:
            rec, made = _apply_one(ch, agent, scope, state, removing)
            records.append(rec)
            done.append((ch, made))
    except HippoError as exc:
        for ch, made in reversed(done):
            _put_back(ch, made)
        state.files = kept
        state.save()
        raise HippoError(f"{exc}; nothing was written", exit_code=exc.exit_code) from None
    return records


def _put_back(ch: Change, made: list[str]) -> None:
    if not ch.differs:
        return
    if ch.before is None:
        files.unlink(ch.target.path, made)
    else:
        files.write(ch.target.path, ch.before)


def _apply_one(ch: Change, agent: str, scope: str, state: files.State,
               removing: bool) -> tuple[dict[str, Any], list[str]]:
    path = ch.target.path
    rec: dict[str, Any] = {"event": "setup", "agent": agent, "scope": scope,
                           "file": str(path), "action": ch.action}
    made: list[str] = []
    if ch.differs:
        saved = files.backup(path, ch.before) if ch.before is not None else None
        if saved:
            rec["backup"] = str(saved)
        if ch.after is None:
            files.unlink(path, (state.get(path) or {}).get("made_dirs", []))
        else:
            made = files.make_dirs(path.parent)
            files.write(path, ch.after)
        if removing:
            state.forget(path)
        else:
            _record(state, ch, agent, scope, saved, made)
    elif removing and ch.action == "absent":
        state.forget(path)
    return rec, made


def _record(state: files.State, ch: Change, agent: str, scope: str, saved: Path | None,
            made: list[str]) -> None:
    """What `--remove` will need. A file changed since setup last wrote it (replaced, or
    rewritten by its client) starts a new record: what setup wrote before is not what
    the file held. The bytes before are the original only when they hold nothing of
    hippo's (an older install's entries are never put back)."""
    prior = state.get(ch.target.path)
    if prior is not None and prior.get("written") != files.digest(ch.before):
        state.forget(ch.target.path)
        prior = None
    state.wrote(ch.target.path, ch.after or b"", agent=agent, scope=scope,
                existed=ch.before is not None, saved=saved if ch.fresh else None,
                made_dirs=made if prior is None else prior["made_dirs"])


def dry_run(changes: list[Change]) -> str:
    """The unified diff of every file that would change."""
    return "".join(files.diff(ch.target.path, ch.before, ch.after)
                   for ch in changes if ch.differs)


__all__ = ["AGENTS", "Change", "apply", "client", "dry_run", "plan", "plan_remove"]
