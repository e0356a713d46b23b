"""The two config formats a client keeps: JSON (Claude Code, Gemini CLI, Cursor, Codex's
hooks.json) and TOML (Codex's config.toml, through tomlkit so comments, order and spacing
stay). Each reads bytes into a tree `hippo.setup.entries` edits, and writes it back."""

from __future__ import annotations

import json
from typing import Any

from hippo.errors import ConfigError
from hippo.setup.entries import JSON, Kind


class Format:
    name = ""
    kind: Kind = JSON

    def load(self, data: bytes, path: str) -> Any:
        raise NotImplementedError

    def dump(self, doc: Any) -> bytes:
        raise NotImplementedError

    def plain(self, doc: Any) -> Any:
        """The tree as plain values, to compare two versions by meaning."""
        return doc


def _refuse(path: str, what: str, why: str) -> ConfigError:
    return ConfigError(f"{path}: not valid {what} ({why}); fix or move it, nothing was "
                       "written")


class JsonFormat(Format):
    name = "json"

    def load(self, data: bytes, path: str) -> Any:
        if not data.strip():
            return {}
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise _refuse(path, "JSON", " ".join(str(exc).split())) from None
        if not isinstance(doc, dict):
            raise _refuse(path, "JSON", "the top level is not an object")
        return doc

    def dump(self, doc: Any) -> bytes:
        # Two spaces, the way Claude Code, Gemini CLI and Cursor write their own files.
        return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class TomlFormat(Format):
    name = "toml"

    def __init__(self) -> None:
        import tomlkit

        self.kind = Kind(table=lambda: tomlkit.table(), tables=lambda: tomlkit.aot(),
                         spaced=lambda table: table.add(tomlkit.nl()))

    def load(self, data: bytes, path: str) -> Any:
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            return tomlkit.parse(data.decode("utf-8"))
        except (UnicodeDecodeError, TOMLKitError) as exc:
            raise _refuse(path, "TOML", " ".join(str(exc).split())) from None

    def dump(self, doc: Any) -> bytes:
        import tomlkit

        return tomlkit.dumps(doc).encode("utf-8")

    def plain(self, doc: Any) -> Any:
        return doc.unwrap()


def of(name: str) -> Format:
    return TomlFormat() if name == "toml" else JsonFormat()
