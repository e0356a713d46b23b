"""Settings: flag > environment (HIPPO_*) > config file > default, with the origin of each.

No I/O happens at import; `load()` reads the environment and the TOML file once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hippo.errors import ConfigError

APP = "hippo"


@dataclass(frozen=True, slots=True)
class Option:
    """One known setting: its env var, default and a one-line description."""

    name: str
    env: str | None
    default: Any
    help: str


# Every top-level setting hippo knows. Nested tables ([search], [types.X], [guard.X],
# [ingest]) are passed through as mappings to the module that owns them.
OPTIONS: tuple[Option, ...] = (
    Option("db", "HIPPO_DB", None, "database file (default: <home>/hippo.db)"),
    Option("embedder", "HIPPO_EMBEDDER", "local", "embedding provider for new databases"),
    Option("project", "HIPPO_PROJECT", None,
           "current project (default: the git repository's main working tree name, or the "
           "cwd name)"),
    Option("busy_timeout_ms", "HIPPO_BUSY_TIMEOUT_MS", 5000, "wait this long for a busy database"),
    Option("openai_embed_model", "HIPPO_OPENAI_EMBED_MODEL", "text-embedding-3-small",
           "model for the openai embedder"),
    Option("openai_embed_dimensions", "HIPPO_OPENAI_EMBED_DIMENSIONS", 1536,
           "vector size of the openai embedder"),
    Option("rerank", "HIPPO_RERANK", False, "rerank search results with Voyage"),
    Option("voyage_rerank_model", "HIPPO_VOYAGE_RERANK_MODEL", "rerank-2.5-lite",
           "Voyage reranker model"),
    Option("voyage_base_url", "HIPPO_VOYAGE_BASE_URL", None,
           "send rerank requests to this base URL (a proxy or test server)"),
    Option("idle_minutes", "HIPPO_IDLE_MINUTES", 30, "ingest a session after this much idle time"),
    Option("stop_ingest_minutes", "HIPPO_STOP_INGEST_MINUTES", 10.0,
           "Codex Stop hook: at most one background ingest per session per this many minutes"),
)
_BY_NAME = {o.name: o for o in OPTIONS}


def home_dir() -> Path:
    """The user data dir: HIPPO_HOME first, then the platform app dir."""
    env = os.environ.get("HIPPO_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_path() -> Path:
    """The config file: HIPPO_CONFIG, else <HIPPO_HOME>/config.toml, else the platform dir."""
    env = os.environ.get("HIPPO_CONFIG")
    if env:
        return Path(env).expanduser()
    if os.environ.get("HIPPO_HOME"):
        return home_dir() / "config.toml"
    import platformdirs

    return Path(platformdirs.user_config_dir(APP, appauthor=False)) / "config.toml"


def _coerce(opt: Option, raw: Any, origin: str) -> Any:
    if opt.default is None or raw is None:
        return raw
    kind = type(opt.default)
    if isinstance(raw, kind):
        return raw
    try:
        if kind is bool:
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        return kind(raw)
    except (TypeError, ValueError):
        raise ConfigError(
            f"{opt.name} from {origin} must be {kind.__name__}, got {raw!r}"
        ) from None


@dataclass(slots=True)
class Settings:
    """Effective settings plus where each value came from."""

    values: dict[str, Any]
    origins: dict[str, str]
    file: Path
    tables: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def table(self, name: str) -> dict[str, Any]:
        """A nested table of the config file ([search], [types], ...), empty when absent."""
        value = self.tables.get(name, {})
        return value if isinstance(value, dict) else {}

    @property
    def db_path(self) -> Path:
        value = self.values.get("db")
        return Path(value).expanduser() if value else home_dir() / "hippo.db"


def _read_file(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    import tomllib  # ~5 ms, and most calls have no config file

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None


def load(flags: dict[str, Any] | None = None) -> Settings:
    """Resolve every setting; `flags` holds command-line values (None = not given)."""
    flags = flags or {}
    path = config_path()
    data = _read_file(path)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for opt in OPTIONS:
        if flags.get(opt.name) is not None:
            raw, origin = flags[opt.name], "flag"
        elif opt.env and os.environ.get(opt.env) not in (None, ""):
            raw, origin = os.environ[opt.env], f"env {opt.env}"
        elif opt.name in data and not isinstance(data[opt.name], dict):
            raw, origin = data[opt.name], f"file {path}"
        else:
            raw, origin = opt.default, "default"
        values[opt.name] = _coerce(opt, raw, origin)
        origins[opt.name] = origin
    unknown = [k for k, v in data.items() if k not in _BY_NAME and not isinstance(v, dict)]
    if unknown:
        raise ConfigError(
            f"unknown setting {unknown[0]!r} in {path}; known: {', '.join(sorted(_BY_NAME))}"
        )
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    return Settings(values=values, origins=origins, file=path, tables=tables)
