"""The command tree as plain data, read from the Typer app: what every generator needs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HELP_NAMES = ("-h", "--help")


@dataclass(frozen=True, slots=True)
class Param:
    """One option or argument: its names, value, help and what completes it."""

    name: str
    opts: tuple[str, ...]  # option spellings, long first; an argument's metavar for arguments
    help: str
    metavar: str | None = None  # None: a flag that takes no value
    values: tuple[str, ...] = ()  # completion words
    kind: str = "word"  # word | file | dir: how a value completes
    multiple: bool = False
    required: bool = False
    default: str | None = None
    envvar: str | None = None
    secondary: tuple[str, ...] = ()  # --no-x of a boolean pair
    is_argument: bool = False

    def notes(self, code: Callable[[str], str]) -> list[str]:
        """What the help text leaves out (the values, repeatable, the default, the env
        variable), each value written by `code` (Markdown quotes it, a man page does not)."""
        notes = []
        if self.values and self.metavar != "[" + "|".join(self.values) + "]":
            notes.append("one of: " + ", ".join(code(v) for v in self.values))
        if self.multiple and not self.is_argument:
            notes.append("repeatable")
        if self.default is not None:
            notes.append(f"default: {code(self.default)}")
        if self.envvar:
            notes.append(f"env: {code(self.envvar)}")
        return notes


@dataclass(slots=True)
class Command:
    """A command or group; `path` is the words after `hippo` (empty for hippo itself)."""

    path: tuple[str, ...]
    help: str
    options: list[Param] = field(default_factory=list)
    arguments: list[Param] = field(default_factory=list)
    subcommands: list[Command] = field(default_factory=list)
    examples: tuple[str, ...] = ()  # command lines from the help's "Examples:" paragraph

    @property
    def name(self) -> str:
        return " ".join(("hippo", *self.path))

    @property
    def short(self) -> str:
        """The first sentence of the help (one line)."""
        first = self.help.strip().split("\n\n")[0].replace("\n", " ")
        cut = first.find(". ")
        return (first[:cut + 1] if cut > 0 else first).strip()

    def walk(self) -> list[Command]:
        out = [self]
        for sub in self.subcommands:
            out.extend(sub.walk())
        return out


def option_values() -> dict[str, tuple[str, ...]]:
    """Completion words for options named the same across commands (--type, --tier, ...)."""
    from hippo import embed
    from hippo.memory.memtypes import BUILTIN, TIERS
    from hippo.memory.records import AUTHORS, STATUSES

    types = tuple(sorted(BUILTIN))
    return {"--type": types, "-t": types, "--tier": TIERS, "--status": (*STATUSES, "all"),
            "--author": AUTHORS, "--embedder": tuple(embed.builtin_names()),
            "--store": ("brain", "echo")}


def _clean(text: str | None) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip() != "\b"]
    return "\n".join(lines).strip()


def _metavar(p: Any) -> str:
    t = p.type
    choices = getattr(t, "choices", None)
    if choices:
        return "[" + "|".join(str(c) for c in choices) + "]"
    kind = type(t).__name__.lower()
    if "path" in kind or getattr(t, "name", "") in ("path", "file", "directory"):
        return "DIR" if getattr(t, "dir_okay", True) and not getattr(t, "file_okay", True) \
            else "PATH"
    if "int" in kind or "int" in str(getattr(t, "name", "")):
        return "INTEGER"
    if "float" in kind:
        return "FLOAT"
    return "TEXT"


def _custom_values(p: Any) -> tuple[str, ...]:
    # Values a command declares with `autocompletion=`/`shell_complete=` on its parameter.
    fn = getattr(p, "_custom_shell_complete", None)
    if fn is None:
        return ()
    try:
        items = fn(None, p, "")
    except Exception:  # noqa: BLE001 - a completion callback that needs a live context
        return ()
    return tuple(str(getattr(i, "value", i)) for i in items or ())


def _param(p: Any, named: dict[str, tuple[str, ...]]) -> Param:
    is_arg = getattr(p, "param_type_name", "") == "argument"
    t = p.type
    kind_name = type(t).__name__.lower()
    is_path = "path" in kind_name or getattr(t, "name", "") in ("path", "file", "directory")
    kind = ("dir" if is_path and not getattr(t, "file_okay", True) else
            "file" if is_path else "word")
    values = _custom_values(p) or tuple(str(c) for c in getattr(t, "choices", None) or ())
    if not values and not is_arg:
        values = next((named[o] for o in p.opts if o in named), ())
    flag = bool(getattr(p, "is_flag", False)) or bool(getattr(p, "count", False))
    default = None
    if not is_arg and not flag and getattr(p, "show_default", True) not in (False, None):
        d = p.default
        if d not in (None, (), [], "") and not callable(d):
            default = str(d)
    if is_arg:
        metavar = (p.metavar or p.name).upper()
        opts: tuple[str, ...] = (metavar + ("..." if p.nargs == -1 else ""),)
    else:
        opts = tuple(sorted(p.opts, key=lambda o: (not o.startswith("--"), o)))
    return Param(
        name=p.name, opts=opts, help=_clean(getattr(p, "help", "")),
        metavar=None if flag else (p.metavar or _metavar(p)), values=values, kind=kind,
        multiple=bool(getattr(p, "multiple", False)) or p.nargs == -1,
        required=bool(p.required), default=default,
        envvar=p.envvar if isinstance(p.envvar, str) else None,
        secondary=tuple(getattr(p, "secondary_opts", ()) or ()), is_argument=is_arg)


def split_examples(text: str) -> tuple[str, tuple[str, ...]]:
    """The help without its "Examples:" paragraph, and that paragraph's lines: a command's
    docstring is the one source of its --help, its man page and the command reference."""
    paras = text.split("\n\n")
    for i, para in enumerate(paras):
        lines = para.strip().splitlines()
        if lines and lines[0].strip() == "Examples:":
            rest = "\n\n".join(paras[:i] + paras[i + 1:]).strip()
            return rest, tuple(ln.strip() for ln in lines[1:] if ln.strip())
    return text, ()


def _command(cmd: Any, path: tuple[str, ...], named: dict[str, tuple[str, ...]]) -> Command:
    help_, examples = split_examples(_clean(cmd.help))
    out = Command(path, help_, examples=examples)
    for p in cmd.params:
        if getattr(p, "hidden", False):
            continue
        param = _param(p, named)
        (out.arguments if param.is_argument else out.options).append(param)
    out.options.append(Param("help", HELP_NAMES[::-1], "Show the help and exit."))
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        if not getattr(sub, "hidden", False):
            out.subcommands.append(_command(sub, (*path, name), named))
    return out


def tree(app: Any = None) -> Command:
    """Walk the Typer app (default: hippo's) into a `Command` tree, commands sorted by name."""
    import typer.main

    if app is None:
        from hippo.cli.app import app
    group = typer.main.get_command(app)
    if hasattr(group, "load_all"):
        group.load_all()  # commands are built lazily; documentation needs them all
    return _command(group, (), option_values())
