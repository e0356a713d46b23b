"""The project of a directory: its repository's main working tree, for every git worktree.

Real repositories (`git init`, `git worktree add`) in tmp; what hippo reads from git's files
must match what `git rev-parse` says.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hippo.project import guess, locate, main_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **ENV, "HOME": str(cwd)}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def common_dir(cwd: Path) -> Path:
    return Path(git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "projects" / "spotter"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root


def test_main_tree_worktree_and_their_subdirectories(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "projects" / "spotter-worktrees" / "spotter-dov"
    git(repo, "worktree", "add", "-q", "-b", "dov", str(wt))
    for where, linked in ((repo, False), (repo / "src", False), (wt, True),
                          (wt / "src", True)):
        loc = locate(where)
        assert (loc.project, loc.linked) == ("spotter", linked), where
        assert Path(loc.common_dir or "").resolve() == common_dir(where), where
        assert Path(loc.root or "").resolve() == Path(git(where, "rev-parse",
                                                          "--show-toplevel")).resolve()
    assert locate(wt).repo == str(repo.resolve())


def test_relative_gitdir_and_a_worktree_inside_the_repository(repo: Path) -> None:
    wt = repo / ".claude" / "worktrees" / "task-x"
    git(repo, "worktree", "add", "-q", "-b", "x", str(wt))
    (wt / ".git").write_text("gitdir: ../../../.git/worktrees/task-x\n")  # relative paths
    assert git(wt, "rev-parse", "--abbrev-ref", "HEAD") == "x"  # git still reads it
    loc = locate(wt / "src")
    assert (loc.project, loc.linked) == ("spotter", True)
    assert Path(loc.common_dir or "").resolve() == common_dir(wt)


def test_a_directory_outside_git_is_its_own_name(tmp_path: Path) -> None:
    plain = tmp_path / "scratch" / "notes"
    plain.mkdir(parents=True)
    assert locate(plain).project == "notes" and locate(plain).root is None
    assert locate(tmp_path / "gone" / "away").project == "away"
    assert locate(r"C:\Users\dev\proj").project == "proj"


def test_bare_repository_with_worktrees(tmp_path: Path, repo: Path) -> None:
    bare = tmp_path / "srv" / "tool.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    wt = tmp_path / "srv" / "tool-main"
    git(bare, "worktree", "add", "-q", str(wt), "main")
    loc = locate(wt)
    assert (loc.project, loc.linked) == ("tool", True)
    assert Path(loc.common_dir or "").resolve() == common_dir(wt)
    # The `.bare` layout: proj/.bare holds the repository, proj/.git says `gitdir: ./.bare`.
    proj = tmp_path / "code" / "proj"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(proj / ".bare"))
    (proj / ".git").write_text("gitdir: ./.bare\n")
    git(proj, "worktree", "add", "-q", str(proj / "feature"), "main")
    assert locate(proj / "feature").project == "proj"
    assert Path(locate(proj / "feature").common_dir or "").resolve() == common_dir(
        proj / "feature")
    assert locate(proj).project == "proj"


def test_submodule_and_its_worktree_are_the_submodule(tmp_path: Path, repo: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo), "lib")
    loc = locate(outer / "lib" / "src")
    assert (loc.project, loc.linked) == ("lib", False)
    assert Path(loc.common_dir or "").resolve() == common_dir(outer / "lib")
    wt = tmp_path / "lib-task"
    git(outer / "lib", "worktree", "add", "-q", "-b", "t", str(wt))
    loc = locate(wt)  # `core.worktree` of the submodule's git dir names its main tree
    assert (loc.project, loc.linked) == ("lib", True)
    assert Path(loc.common_dir or "").resolve() == common_dir(wt)


def test_odd_git_files_do_not_crash(tmp_path: Path) -> None:
    odd = tmp_path / "odd"
    (odd / "sub").mkdir(parents=True)
    (odd / ".git").write_text("not a gitfile\n")
    assert locate(odd / "sub").project == "odd"
    (odd / ".git").write_text("gitdir: /nowhere/else\n")
    assert locate(odd / "sub").project == "odd"
    (odd / ".git").write_bytes(b"gitdir: \xff\xfe\x00\n")
    assert locate(odd).project == "odd"
    # A worktree whose repository was moved away: its gitdir path still names it.
    (odd / ".git").write_text("gitdir: /old/place/spotter/.git/worktrees/odd\n")
    loc = locate(odd / "sub")
    assert (loc.project, loc.linked) == ("spotter", True)


def test_a_removed_repository_keeps_the_name_in_its_worktree_file(repo: Path,
                                                                  tmp_path: Path) -> None:
    wt = tmp_path / "elsewhere" / "task"
    git(repo, "worktree", "add", "-q", "-b", "t", str(wt))
    shutil.rmtree(repo)
    assert locate(wt).project == "spotter"


def test_core_worktree_names_the_main_tree(tmp_path: Path) -> None:
    gd = tmp_path / "store" / "meta"
    gd.mkdir(parents=True)
    (gd / "config").write_text('[core]\n\tbare = false\n\tworktree = "../../checkout"\n')
    assert main_tree(str(gd)) == str(tmp_path / "checkout")
    (gd / "config").write_text("[Core]\n  WorkTree = /abs/tree ; comment\n")
    assert main_tree(str(gd)) == "/abs/tree"


@pytest.mark.parametrize(("path", "project"), [
    ("/home/USER/projects/spotter-worktrees/spotter-dov", "spotter"),
    ("/home/USER/projects/spotter-worktrees/spotter-gqc/src/deep", "spotter"),
    ("/home/u/code/hippo/.worktrees/task-1", "hippo"),
    ("/home/u/code/hippo/.claude/worktrees/fix-bug/pkg", "hippo"),
    ("/home/u/code/hippo/.git/worktrees/fix-bug", "hippo"),
    ("/home/u/a-worktrees/b/.worktrees/c", "a"),  # the outermost layout wins
    ("/home/u/projects/spotter-worktrees", None),  # the container, not a worktree
    ("/home/u/projects/spotter", None),
    ("/-worktrees/x", None),
    ("/.worktrees/x", None),
])
def test_layout_fallback(path: str, project: str | None) -> None:
    assert guess(path) == project
