"""Plugins from other packages, through entry points, with real installed distributions.

Each test writes tiny distributions (`NAME-0.1.dist-info/` with METADATA, entry_points.txt
and RECORD beside their modules) into a directory on PYTHONPATH and runs the `hippo`
command as a process: the embedder and extractor a plugin declares are used by name, a
broken plugin is one line and exit 78, a built-in's name always means the built-in, and
a search with a built-in embedder never reads the entry points.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.extract.conftest import write_transcript

pytestmark = pytest.mark.skipif(
    os.environ.get("HIPPO_TEST_BACKEND", "sqlite") != "sqlite",
    reason="a plugin is found by name whatever the store; one backend shows it")

DEMO = '''
import hashlib

from hippo.embed.base import Embedder
from hippo.extract.base import Candidate, Extractor


class DemoEmbedder(Embedder):
    """8 dimensions: a word's slot is its first hash byte modulo 8."""

    name = "demo"
    model_id = "demo-bow-8"
    dimensions = 8

    def embed_batch(self, texts):
        import numpy as np

        out = np.zeros((len(texts), 8), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, hashlib.blake2b(word.encode()).digest()[0] % 8] += 1.0
            out[row, 0] += 1e-3
            out[row] /= np.linalg.norm(out[row])
        return out


class DemoExtractor(Extractor):
    """A fact for each turn (a chunk's `role: text` block) that mentions deploying."""

    name = "demo"

    def extract(self, session):
        return [Candidate(type="fact", text=f"demo noted: {block.split(': ', 1)[-1]}",
                          importance=0.6, evidence=[chunk.id], tags=["demo"])
                for chunk in session.chunks for block in chunk.text.split("\\n\\n")
                if "deploy" in block.lower()]


def embedder(settings):
    return DemoEmbedder()


def extractor(h, conf):
    return DemoExtractor()


def failing(h, conf):
    raise ValueError("no model configured\\nat all")


misnamed = lambda settings: type("Other", (DemoEmbedder,), {"name": "other"})()
NOT_A_FACTORY = 42
'''

BROKEN = '''
raise RuntimeError("demo_broken needs a setting it has not got\\nsecond line")
'''


def distribution(site: Path, name: str, module: str, entry_points: str) -> None:
    """`name` 0.1 installed in `site`: its module and dist-info, as pip leaves them."""
    (site / f"{name}.py").write_text(module, encoding="utf-8")
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    (info / "RECORD").write_text(
        f"{name}.py,,\n{info.name}/METADATA,,\n{info.name}/entry_points.txt,,\n"
        f"{info.name}/RECORD,,\n", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    distribution(site, "demo_plugin", DEMO,
                 "[hippo.embedders]\ndemo = demo_plugin:embedder\n"
                 "misnamed = demo_plugin:misnamed\nnumber = demo_plugin:NOT_A_FACTORY\n"
                 "[hippo.extractors]\ndemo = demo_plugin:extractor\nfailing = demo_plugin:failing\n")
    # A plugin that fails to import, and one that claims a built-in's name.
    distribution(site, "demo_broken", BROKEN,
                 "[hippo.embedders]\nbroken = demo_broken:embedder\nhash = demo_broken:embedder\n"
                 "[hippo.extractors]\nrules = demo_broken:extractor\n")
    return site


@pytest.fixture
def hippo(site: Path, db_path: Path):
    exe = Path(sys.executable).with_name("hippo")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "hippo"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
        str(site), os.environ.get("PYTHONPATH")]))}

    def run(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command, "--db", str(db_path), *args], capture_output=True,
                              text=True, env=env, timeout=120, check=False, **kwargs)

    return run


def lines(out: str) -> list[dict]:
    return [orjson.loads(line) for line in out.splitlines() if line.strip()]


def test_a_plugin_embedder_builds_the_store_and_is_found_again_by_its_recorded_name(
        hippo) -> None:
    r = hippo("--embedder", "demo", "add", "Deploy with make ship", "--json")
    assert r.returncode == 0, r.stderr
    assert hippo("--embedder", "demo", "add", "Coffee is in the kitchen").returncode == 0
    found = hippo("search", "deploy", "--json")  # no --embedder: the store's recorded one
    assert found.returncode == 0, found.stderr
    assert lines(found.stdout)[0]["text"] == "Deploy with make ship"
    stats = hippo("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert '"embed_model":"demo-bow-8","embed_dim":8' in stats.stdout


def test_a_plugin_extractor_reads_an_ingested_transcript(hippo, tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "s1.jsonl", "s1", [
        ("user", "How do we ship?"), ("assistant", "We deploy with make ship, always."),
        ("user", "Thanks.")])
    r = hippo("--embedder", "hash", "ingest", "--idle-minutes", "0", "--json", str(path))
    assert r.returncode == 0, r.stderr
    x = hippo("--embedder", "hash", "extract", "--extractor", "demo", "--json")
    assert x.returncode == 0, x.stderr
    events = lines(x.stdout)
    assert events[-1]["extractor"] == "demo"
    made = [e for e in events if e.get("event") == "memory"]
    assert [m["text"] for m in made] == ["demo noted: We deploy with make ship, always."]
    listed = lines(hippo("list", "--all-projects", "--json").stdout)
    assert [(m["text"], m["type"], m["author"]) for m in listed] == [
        ("demo noted: We deploy with make ship, always.", "fact", "machine")]


@pytest.mark.parametrize(("args", "message"), [
    (("--embedder", "broken", "add", "x"),
     ("hippo: embedder plugin 'broken' (demo_broken:embedder, from demo_broken 0.1) does not "
      "load: RuntimeError: demo_broken needs a setting it has not got")),
    (("--embedder", "number", "add", "x"),
     ("hippo: embedder plugin 'number' (demo_plugin:NOT_A_FACTORY, from demo_plugin 0.1) is "
      "not callable: a factory is a function or class (docs/plugins.md)")),
    (("--embedder", "misnamed", "add", "x"),
     ("hippo: embedder 'misnamed' built one named 'other': an embedder's `name` is the name "
      "it is registered under (docs/plugins.md)")),
    (("--embedder", "hash", "extract", "--extractor", "failing"),
     ("hippo: extractor plugin 'failing' (demo_plugin:failing, from demo_plugin 0.1) failed: "
      "ValueError: no model configured")),
])
def test_a_broken_plugin_is_one_line_and_exit_78(hippo, args, message) -> None:
    r = hippo(*args)
    assert (r.returncode, r.stderr.strip()) == (78, message)


def test_an_unknown_name_lists_the_plugins_too(hippo) -> None:
    r = hippo("--embedder", "nope", "add", "x")
    assert r.returncode == 2
    assert r.stderr.strip() == ("hippo: unknown embedder 'nope'; known: broken, demo, hash, "
                                "local, misnamed, number, openai")


def test_a_builtin_name_means_the_builtin(hippo) -> None:
    # demo_broken declares `hash` and `rules`: were it loaded, the call would exit 78.
    assert hippo("--embedder", "hash", "add", "Deploy with make ship").returncode == 0
    x = hippo("--embedder", "hash", "extract", "--extractor", "rules", "--json")
    assert x.returncode == 0, x.stderr
    assert '"embed_model":"hash-bow-v1","embed_dim":384' in hippo("stats", "--json").stdout


def test_a_search_with_a_builtin_embedder_reads_no_entry_points(hippo, db_path: Path,
                                                                 site: Path) -> None:
    assert hippo("--embedder", "hash", "add", "Deploy with make ship").returncode == 0
    probe = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('METADATA %s\\n' % "
             "('importlib.metadata' in sys.modules))); from hippo.cli.main import main; main()")
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = subprocess.run([sys.executable, "-c", probe, "--db", str(db_path), "search", "deploy",
                        "--json"], capture_output=True, text=True, env=env, timeout=120,
                       check=False)
    assert r.returncode == 0 and "make ship" in r.stdout, r.stderr
    assert "METADATA False" in r.stderr
