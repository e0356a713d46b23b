"""A command or a setting in a code block, with the comment that says what it is for.

Code is not a statement (`hippo.extract.units`): a block longer than a line gives no
memory of its own. What the agent explains in one does: a command of a shell block, or a
setting of any block, with its comment ("what it is for: `the line`"):

    ```bash
    bun run build          # production build        ->  production build: `bun run build`
    ```
    ```ts
    // don't refetch when the tab gains focus        ->  don't refetch when the tab gains
    revalidateOnFocus: false,                             focus: `revalidateOnFocus: false`
    ```

The comment is at the line's end or alone on the line above it (the last of a run). A line
of program code (`SessionLocal = sessionmaker(bind=engine)`, `const tz = f()`) is neither a
command nor a setting, and gives nothing; nor do control flow, drawn trees, a comment that
is a directive or a note to self (`# noqa`, `// TODO`), a question or one word. At most
`MAX_COMMENTED` a block.
"""

from __future__ import annotations

import re

MAX_COMMENTED = 4
LINE_CHARS = 120
SAID_CHARS = 90
_I = re.IGNORECASE

# Blocks whose lines are commands; blocks of settings; blocks with no comments (prose,
# data, output). A block of no language is read as a shell block.
_SHELL = frozenset(["bash", "sh", "shell", "zsh", "fish", "powershell", "ps1", "pwsh", "cmd",
                    "bat", "dockerfile", "makefile", "make"])
_CONFIG = frozenset(["yaml", "yml", "toml", "ini", "env", "dotenv", "properties", "conf",
                     "cfg"])
_NONE = frozenset(["md", "markdown", "text", "txt", "plain", "diff", "patch", "json", "jsonl",
                   "log", "output", "console", "csv", "html", "xml", "svg"])
_SLASH = frozenset(["js", "javascript", "ts", "typescript", "tsx", "jsx", "mjs", "cjs", "go",
                    "golang", "rust", "rs", "java", "c", "cpp", "c++", "cs", "csharp", "kotlin",
                    "kt", "swift", "scala", "php", "dart", "zig", "groovy"])
_DASH = frozenset(["sql", "psql", "plpgsql", "lua", "haskell", "hs"])

# A command: a program and its words, flags, paths and quoted strings, maybe piped or
# chained; no brackets or semicolons (that is code), not a shell keyword.
_COMMAND = re.compile(
    r"^(?:\$\s+)?(?!(?:if|then|else|elif|fi|for|while|until|do|done|case|esac|function"
    r"|return|exit|local|set|echo|printf|cd)\b)[\w./~@+-]+(?:\s+(?:\"[^\"]*\"|'[^']*'"
    r"|[^\s(){};`]+))*$")
# A setting: a key and a literal value (a bool, null, number, quoted string), `export
# KEY=value` too; in a shell or config block also one bare word, path or address (in
# program code that is a type or a variable: `sessionId: string;`).
_KEY = r"^(?:export\s+)?[\w.$\[\]\"'-]+\s*[:=]\s*"
_LITERAL = r"true|false|null|nil|none|undefined|-?\d[\w.:]*|\"[^\"\n]*\"|'[^'\n]*'"
_SETTING = re.compile(rf"{_KEY}(?:{_LITERAL})\s*[,;]?$", _I)
_WORD_SETTING = re.compile(rf"{_KEY}(?:{_LITERAL}|[\w./:@-]+)\s*[,;]?$", _I)
# Not what a line is for: tool directives, notes to self, dividers, commented-out code.
_NOT_SAID = re.compile(r"^(?:todo|fixme|xxx|hack|noqa|nolint|type:|eslint|prettier|pylint"
                       r"|@ts-|pragma|-\*-|!|\.\.\.|etc\b)|[=;{}()]\s*$|^[-=#*/~_ ]+$", _I)


def _kind(lang: str) -> tuple[tuple[str, ...], bool]:
    """The comment markers of a block's language, and whether its lines may be commands
    (and settings bare words: a shell, config or unnamed block)."""
    word = lang.split()[0] if lang else ""
    if word in _NONE:
        return (), False
    if word in _SLASH:
        return ("//",), False
    if word in _DASH:
        return ("--",), False
    return ("#",), not word or word in _SHELL or word in _CONFIG


def _split(line: str, marks: tuple[str, ...]) -> tuple[str, str]:
    """(code, comment) of a line; a marker takes a space after it and, after code, one
    before it (`color: "#fff"` has no comment)."""
    for mark in marks:
        at = line.find(mark + " ")
        while at >= 0:
            if at == 0 or line[at - 1] in " \t":
                return line[:at].strip(), line[at + len(mark):].strip()
            at = line.find(mark + " ", at + 1)
    return line.strip(), ""


def _said(comment: str) -> str:
    """What a comment says ("" when it says nothing a memory can hold)."""
    comment = comment.strip().rstrip(":").strip()
    if (not comment or _NOT_SAID.search(comment) or "?" in comment
            or len(re.findall(r"[A-Za-z]{2,}", comment)) < 2 or len(comment) > SAID_CHARS
            or comment[0] in "'\"`"):
        return ""
    return comment


def commented(code: list[str], lang: str) -> list[str]:
    """"what it is for: `line`" for each command or setting of a code block (`lang`: the
    language its fence names) that a comment explains."""
    marks, commands = _kind(lang)
    if not marks:
        return []
    out: list[str] = []
    above = ""
    for raw in code:
        line, comment = _split(raw.strip(), marks)
        if not line:
            above = _said(comment) if comment else ""
            continue
        said, above = _said(comment) or above, ""
        line = line.rstrip(",").strip()
        if (said and 2 < len(line) <= LINE_CHARS and "`" not in line
                and ((_WORD_SETTING if commands else _SETTING).match(line)
                     or (commands and _COMMAND.match(line)))):
            out.append(f"{said}: `{line}`")
    return list(dict.fromkeys(out))[:MAX_COMMENTED]
