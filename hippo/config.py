"""Settings: flag > environment (HIPPO_*) > config file > default, with the origin of each.

No I/O happens at import; `load()` reads the environment and the TOML file once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
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
# [ingest], ...) are passed through as mappings to the module that owns them; `TABLES`
# names their keys.
OPTIONS: tuple[Option, ...] = (
    Option("db", "HIPPO_DB", None, "database file, or a postgresql:// URL (default: <home>/hippo.db)"),
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

# The schema of the config file's tables: a key maps to VALUE or to the schema of a
# sub-table; ANY_NAME stands for keys the user names (types, providers' days...).
# `load()` rejects every other table or key, naming the nearest known one (exit 78); the
# module owning a table checks its values (tests/foundation/test_settings_schema.py
# keeps the key lists equal to those modules' fields).
VALUE = None
ANY_NAME = "*"
Schema = dict[str, "Schema | None"]
_LIMITS: Schema = dict.fromkeys(
    ("calls_per_day", "tokens_per_day", "failures_to_open", "open_seconds"), VALUE)
TABLES: Schema = {
    "search": dict.fromkeys((  # hippo.retrieve.params.SearchParams
        "candidates_per_retriever", "rrf_k", "bm25_weight", "vector_weight",
        "fts_and_min_hits", "hint_boost", "hint_words", "hint_types", "mmr_k", "mmr_lambda",
        "mmr_penalty_weight", "late_pool", "date_boost", "date_slack_days", "match_floor",
        "match_full", "w_relevance", "w_importance", "w_freshness", "result_limit",
        "rerank_pool", "rerank_timeout_ms"), VALUE),
    "types": {ANY_NAME: dict.fromkeys(("tau_days", "tier", "frozen"), VALUE)},  # memtypes
    "guard": {ANY_NAME: _LIMITS},  # hippo.paid.spend.Limits, per provider (plugins' too)
    "maintain": {  # hippo.maintain.settings.MaintainParams
        **dict.fromkeys(("threshold", "literal_guard", "merger", "knn_k", "knn_limit",
                         "batch"), VALUE),
        "retire_days": {ANY_NAME: VALUE},
    },
    "extract": dict.fromkeys((  # hippo.extract.settings.ExtractSettings
        "extractor", "model", "timeout", "max_retries", "window_chars", "similarity",
        "temperature", "agent_command", "agent_timeout"), VALUE),
    "ingest": {"paths": VALUE},  # hippo.cli.ingest
    "mcp": dict.fromkeys(("max_writes", "allow_verify", "busy_retry_seconds"),
                         VALUE),  # hippo.mcp.params.McpParams
    "serve": dict.fromkeys(("auto_start", "idle_minutes", "vector_memory_mb"),
                           VALUE),  # hippo.serve.spawn.ServeParams
    "agents": dict.fromkeys(("remember_hint", "notes"),
                            VALUE),  # hippo.layers.hint.AgentSettings
}


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user data dir: HIPPO_HOME first, then the platform app dir. `environ`: the
    call's variables (`hippo.console.environment`; default this process's)."""
    env = (os.environ if environ is None else environ).get("HIPPO_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The config file: HIPPO_CONFIG, else <HIPPO_HOME>/config.toml, else the platform dir."""
    variables = os.environ if environ is None else environ
    env = variables.get("HIPPO_CONFIG")
    if env:
        return Path(env).expanduser()
    if variables.get("HIPPO_HOME"):
        return home_dir(variables) / "config.toml"
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
    # The variables they were read from (the call's; None: this process's), which the
    # home directory is found by too.
    environ: Mapping[str, str] | None = None

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def table(self, name: str) -> dict[str, Any]:
        """A nested table of the config file ([search], [types], ...), empty when absent."""
        value = self.tables.get(name, {})
        return value if isinstance(value, dict) else {}

    @property
    def database(self) -> Path | str:
        """The store: a SQLite file's path, or a PostgreSQL URL (`hippo.config`)."""
        value = self.values.get("db")
        if not value:
            return home_dir(self.environ) / "hippo.db"

        return str(value) if is_server(str(value)) else Path(value).expanduser()

    @property
    def db_path(self) -> Path:
        """The SQLite file (a command that works on the file itself: salvage, cron's log)."""
        db = self.database
        if isinstance(db, str):
            from hippo.errors import UsageError

            raise UsageError(f"this command works on a SQLite file; {display(db)} is a "
                             "PostgreSQL server")
        return db


# -- where a store lives: a SQLite file's path or a PostgreSQL server's URL --------
# `--db`, `HIPPO_DB` and `db = ...` take either; a value that starts with
# `postgresql://` (or `postgres://`) names a server, anything else a file. The URL's
# password is never shown: `display` is what messages, JSON output and logs say.
SCHEMES = ("postgresql://", "postgres://")


def is_server(value: str | Path) -> bool:
    """True when `value` names a PostgreSQL server, not a SQLite file."""
    return isinstance(value, str) and value.lower().startswith(SCHEMES)


def display(value: str | Path) -> str:
    """What to show a person: the path, or the URL without its password (and without
    a `password=` query parameter)."""
    if not is_server(value):
        return str(value)
    from urllib.parse import urlsplit

    text = str(value)
    try:
        parts = urlsplit(text)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}@{host}" if ":" in userinfo else netloc
        query = "&".join(p if not p.lower().startswith("password=") else "password=***"
                         for p in parts.query.split("&")) if parts.query else ""
        return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
    except ValueError:
        return text.split("://", 1)[0] + "://…"

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


def load(flags: dict[str, Any] | None = None,
         environ: Mapping[str, str] | None = None) -> Settings:
    """Resolve every setting; `flags` holds command-line values (None = not given),
    `environ` the call's variables (default this process's `os.environ`)."""
    flags = flags or {}
    variables = os.environ if environ is None else environ
    path = config_path(variables)
    data = _read_file(path)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for opt in OPTIONS:
        if flags.get(opt.name) is not None:
            raw, origin = flags[opt.name], "flag"
        elif opt.env and variables.get(opt.env) not in (None, ""):
            raw, origin = variables[opt.env], f"env {opt.env}"
        elif opt.name in data and not isinstance(data[opt.name], dict):
            raw, origin = data[opt.name], f"file {path}"
        else:
            raw, origin = opt.default, "default"
        values[opt.name] = _coerce(opt, raw, origin)
        origins[opt.name] = origin
    check(data, path)
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    return Settings(values=values, origins=origins, file=path, tables=tables,
                    environ=environ)


def check(data: dict[str, Any], path: Path) -> None:
    """ConfigError (exit 78) at the first table or key the schema does not know."""
    _check(data, {**dict.fromkeys(_BY_NAME, VALUE), **TABLES}, "", path)


def _check(data: dict[str, Any], schema: Schema, where: str, path: Path) -> None:
    for key, value in data.items():
        name = f"{where}.{key}" if where else key
        if key not in schema and ANY_NAME not in schema:
            raise ConfigError(_unknown(key, isinstance(value, dict), schema, where, path))
        sub = schema.get(key, schema.get(ANY_NAME))
        if sub is not None and isinstance(value, dict):
            _check(value, sub, name, path)
        elif sub is not None and not where:
            raise ConfigError(f"[{name}] in {path} must be a table")
        elif sub is None and isinstance(value, dict) and not where:
            raise ConfigError(f"{name!r} in {path} is a setting, not a table")


def _unknown(key: str, table: bool, schema: Schema, where: str, path: Path) -> str:
    """One line: what is unknown, where, and the nearest known name (or all of them)."""
    from difflib import get_close_matches

    def show(k: str) -> str:
        if schema[k] is None:
            return repr(k)
        return f"[{where}.{k}]" if where else f"[{k}]"

    if table:
        what = f"table [{where}.{key}]" if where else f"table [{key}]"
        place = f"in {path}"
    else:
        what = f"setting {key!r}"
        place = f"in [{where}] of {path}" if where else f"in {path}"
    near = get_close_matches(key, list(schema), n=1)
    hint = (f"did you mean {show(near[0])}?" if near
            else f"known: {', '.join(show(k) for k in sorted(schema))}")
    return f"unknown {what} {place}; {hint}"
