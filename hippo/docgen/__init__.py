"""man pages, shell completions and the Markdown command reference, generated from the Typer app.

`python -m hippo.docgen` rewrites them all; `--check` exits 1 when any committed file is
stale. A test runs the check, so a new command or option cannot ship without its docs.
"""

from __future__ import annotations

from pathlib import Path

from hippo.docgen.tree import Command, tree

REPO = Path(__file__).resolve().parent.parent.parent
STALE = "generated docs are stale; run `python -m hippo.docgen` and commit the result"


def render_all(root: Command | None = None) -> dict[str, str]:
    """Relative path -> content of every generated file."""
    from hippo import __version__
    from hippo.docgen import completions, reference, roff

    root = root or tree()
    files = {f"man/{name}": text for name, text in roff.pages(root, __version__).items()}
    files["completions/hippo.bash"] = completions.bash(root)
    files["completions/_hippo"] = completions.zsh(root)
    files["completions/hippo.fish"] = completions.fish(root)
    files["docs/commands.md"] = reference.markdown(root, __version__)
    return files


def stale(base: Path = REPO, files: dict[str, str] | None = None) -> list[str]:
    """Generated files that differ from what is on disk (or are missing), plus orphan pages."""
    files = files if files is not None else render_all()
    out = [rel for rel, text in files.items()
           if not (base / rel).is_file() or (base / rel).read_text(encoding="utf-8") != text]
    man = base / "man"
    if man.is_dir():
        out += [f"man/{p.name}" for p in sorted(man.glob("hippo*.1")) if f"man/{p.name}" not in files]
    return out


def write(base: Path = REPO, files: dict[str, str] | None = None) -> list[str]:
    """Write every generated file under `base`; remove man pages of commands that are gone."""
    files = files if files is not None else render_all()
    changed = stale(base, files)
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for rel in changed:
        if rel not in files:
            (base / rel).unlink()
    return changed


__all__ = ["STALE", "render_all", "stale", "tree", "write"]
