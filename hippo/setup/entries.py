"""hippo's entries in a client's config tree, added and taken out again: hook groups, an MCP
server, a name in a list. One implementation for JSON (dicts and lists) and for TOML
(tomlkit's tables and arrays of tables, which keep comments and order): a `Kind` makes the
new containers, so everything the user had stays where it was."""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Callable, MutableMapping, MutableSequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Kind:
    """How a format makes a new table and a new array of tables (JSON: dict and list)."""

    table: Callable[[], MutableMapping[str, Any]] = dict
    tables: Callable[[], MutableSequence[Any]] = list
    spaced: Callable[[Any], None] = lambda table: None  # a blank line after a new table


JSON = Kind()


class Misshapen(ValueError):
    """A key hippo writes under holds a value of another shape (a list where a table
    belongs, ...): the file is refused rather than that value replaced."""

    def __init__(self, key: str, shape: str) -> None:
        super().__init__(f"{key} is not {shape}")


def tokens(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # an unbalanced quote: still look at its words
        return command.split()


def is_hippo_hook(command: Any) -> bool:
    """A hook command that runs `hippo ... hook ...` (by any path, or `python -m hippo`)."""
    if not isinstance(command, str):
        return False
    words = tokens(command)
    if "hook" not in words:
        return False
    before = words[:words.index("hook")]
    return any(os.path.basename(w) == "hippo" for w in before) or \
        any(a == "-m" and b == "hippo" for a, b in itertools.pairwise(before))


def _handlers(group: Any) -> list[Any]:
    inner = group.get("hooks") if isinstance(group, MutableMapping) else None
    return list(inner) if isinstance(inner, MutableSequence) else []


def _ours(handler: Any) -> bool:
    return isinstance(handler, MutableMapping) and is_hippo_hook(handler.get("command"))


def hook_commands(doc: Any) -> list[tuple[str, str]]:
    """(event, command) of every hippo hook in the tree's `hooks` table."""
    table = doc.get("hooks") if isinstance(doc, MutableMapping) else None
    if not isinstance(table, MutableMapping):
        return []
    found = []
    for event, groups in table.items():
        if isinstance(groups, MutableSequence):
            found += [(str(event), str(h["command"])) for g in groups for h in _handlers(g)
                      if _ours(h)]
    return found


def _strip_event(groups: MutableSequence[Any]) -> int | None:
    """Take hippo's handlers out of one event's groups; a group left with none goes too.
    Returns where the first one was (so a new group takes its place), else None."""
    first = None
    for i in range(len(groups) - 1, -1, -1):
        inner = groups[i].get("hooks") if isinstance(groups[i], MutableMapping) else None
        if not isinstance(inner, MutableSequence) or not any(_ours(h) for h in inner):
            continue
        first = i
        for j in range(len(inner) - 1, -1, -1):
            if _ours(inner[j]):
                del inner[j]
        if not inner:
            del groups[i]
    return first


def put_hooks(doc: MutableMapping[str, Any], hooks: dict[str, dict[str, Any]],
              kind: Kind = JSON) -> None:
    """Every event's hippo group in `doc["hooks"]`: where hippo's was (so a second run
    changes nothing), else after the user's; their hooks stay as they were."""
    table = doc.get("hooks")
    if table is None:
        table = doc["hooks"] = kind.table()
    elif not isinstance(table, MutableMapping):
        raise Misshapen("hooks", "a table")
    for event, group in hooks.items():
        groups = table.get(event)
        if groups is None:
            groups = table[event] = kind.tables()
        elif not isinstance(groups, MutableSequence):
            raise Misshapen(f"hooks.{event}", "a list")
        at = _strip_event(groups)
        new = _build(group, kind)
        if at is None or at >= len(groups):
            groups.append(new)
        else:
            groups.insert(at, new)


def _build(value: Any, kind: Kind) -> Any:
    if isinstance(value, dict):
        out = kind.table()
        for k, v in value.items():
            out[k] = _build(v, kind)
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        many = kind.tables()
        for v in value:
            many.append(_build(v, kind))
        return many
    return value


def strip_hooks(doc: MutableMapping[str, Any]) -> bool:
    """Take every hippo hook out; an event (and `hooks`) emptied by that goes too."""
    table = doc.get("hooks")
    if not isinstance(table, MutableMapping):
        return False
    changed = False
    for event in list(table):
        groups = table[event]
        if isinstance(groups, MutableSequence) and _strip_event(groups) is not None:
            changed = True
            if not groups:
                del table[event]
    if changed and not table:
        del doc["hooks"]
    return changed


def _walk(doc: MutableMapping[str, Any], where: tuple[str, ...], kind: Kind | None
          ) -> MutableMapping[str, Any] | None:
    """The table at `where` (made when `kind` is given and it is missing)."""
    node: Any = doc
    for n, key in enumerate(where):
        nxt = node.get(key)
        if not isinstance(nxt, MutableMapping):
            if kind is None:
                return None
            if nxt is not None:
                raise Misshapen(".".join(where[:n + 1]), "a table")
            nxt = node[key] = kind.table()
        node = nxt
    return node


def server(doc: Any, where: tuple[str, ...], name: str) -> Any:
    """The server entry `name` under `where`, or None."""
    table = _walk(doc, where, None) if isinstance(doc, MutableMapping) else None
    return table.get(name) if table is not None else None


def put_server(doc: MutableMapping[str, Any], where: tuple[str, ...], name: str,
               spec: dict[str, Any], kind: Kind = JSON) -> None:
    table = _walk(doc, where, kind)
    assert table is not None
    if name in table and _plain(table[name]) == spec:
        return  # the same server: leave it (and its formatting) alone
    table[name] = new = _build(spec, kind)
    kind.spaced(new)


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def strip_server(doc: MutableMapping[str, Any], where: tuple[str, ...], name: str) -> bool:
    """Take the server out; the tables emptied by that go too."""
    path: list[MutableMapping[str, Any]] = [doc]
    for key in where:
        nxt = path[-1].get(key)
        if not isinstance(nxt, MutableMapping):
            return False
        path.append(nxt)
    if name not in path[-1]:
        return False
    del path[-1][name]
    for parent, key, table in zip(path[-2::-1], where[::-1], path[:0:-1]):
        if table:
            break
        del parent[key]
    return True


def has_member(doc: Any, key: str, value: str) -> bool:
    found = doc.get(key) if isinstance(doc, MutableMapping) else None
    return isinstance(found, MutableSequence) and value in found


def put_member(doc: MutableMapping[str, Any], key: str, value: str) -> None:
    """`value` in the list `doc[key]` (made when missing)."""
    found = doc.get(key)
    if found is None:
        doc[key] = [value]
    elif not isinstance(found, MutableSequence):
        raise Misshapen(key, "a list")
    elif value not in found:
        found.append(value)


def strip_member(doc: MutableMapping[str, Any], key: str, value: str) -> bool:
    found = doc.get(key)
    if not isinstance(found, MutableSequence) or value not in found:
        return False
    found.remove(value)
    if not found:
        del doc[key]
    return True
