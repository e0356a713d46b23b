"""After every purge nothing erased can be read back: the file and its -wal are read as
raw bytes, and every blob in them is decoded (token ids back to text through the shipped
vocabulary). A prompt the hook has seen, or a query, is never readable at all. Each test
first finds its words readable (the check can see them), then purges and finds none.

The real local model runs, since only it caches token matrices.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from privacy_support import decoded_blobs, normalised, raw_bytes

Hippo = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def hippo(db_path: Path | str, isolated_home: Path) -> Hippo:
    env = {**os.environ, "HIPPO_EMBEDDER": "local"}

    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([sys.executable, "-m", "hippo", "--db", str(db_path),
                              *args], input=input, capture_output=True, text=True, env=env,
                             check=False, timeout=300)
        assert out.returncode == 0, f"hippo {' '.join(args)}: {out.stderr}"
        return out

    return run


def readable(db: Path | str, words: list[str]) -> dict[str, list[str]]:
    """Which of `words` can be read back, and where: 'raw' (bytes of the file or -wal; the
    first 9 letters, so the stemmed terms of the full-text index count too), 'decoded' (a
    blob's token ids turned back into text)."""
    raw = raw_bytes(db).lower()
    decoded = [normalised(b) for b in decoded_blobs(db)]
    found: dict[str, list[str]] = {}
    for w in words:
        where = [name for name, hit in (("raw", w[:9].encode() in raw),
                                        ("decoded", any(w in d for d in decoded))) if hit]
        if where:
            found[w] = where
    return found


def sentence_vectors(db: Path | str, texts: list[str]) -> list[bytes]:
    """The cached sentence vectors of `texts` (the model's, as the vector table holds them)."""
    from hippo.embed.cache import content_hash

    hashes = [content_hash(t) for t in texts]
    if isinstance(db, str):
        import psycopg

        with psycopg.connect(db) as conn:
            return [bytes(r[0]) for h in hashes for r in conn.execute(
                "SELECT vector FROM embed_cache WHERE content_hash = %s "
                "AND model NOT LIKE '%%#%%'", (h,))]
    import apsw

    conn = apsw.Connection(str(db))
    try:
        return [bytes(r[0]) for h in hashes for r in conn.execute(
            "SELECT vector FROM embed_cache WHERE content_hash = ? AND model NOT LIKE '%#%'",
            (h,))]
    finally:
        conn.close()


def test_forget_hard_after_edit_leaves_neither_text(hippo: Hippo, db_path: Path | str,
                                                  tmp_path: Path) -> None:
    db = db_path
    hippo("add", "Keep this: the backups of the billing cluster run at noon.")
    hippo("add", "The marzipanfjord vault rotates its quillwobbler keys every spring.")
    hippo("search", "--json", "where are the marzipanfjord keys?")
    hippo("edit", "2", "--text", "The tangerinequasar vault rotates its keys each autumn.")
    hippo("search", "--json", "which vault rotates each autumn?")
    words = ["marzipanfjord", "quillwobbler", "tangerinequasar"]
    assert set(readable(db, words)) == set(words)  # stored, cached: readable until purged
    old = "The marzipanfjord vault rotates its quillwobbler keys every spring."
    new = "The tangerinequasar vault rotates its keys each autumn."
    vectors = sentence_vectors(db, [old, new])
    assert len(vectors) == 2 and all(v[256:320] in raw_bytes(db) for v in vectors)

    out = hippo("forget", "2", "--hard", "--json")
    assert json.loads(out.stdout)["status"] == "deleted" and "warning" not in out.stderr
    assert readable(db, words) == {}
    raw = raw_bytes(db)  # nor the vectors (cache rows and memories_vec)
    assert not any(v[256:320] in raw for v in vectors)
    assert readable(db, ["billing"]) == {"billing": ["raw", "decoded"]}  # the rest stays


def test_a_prompt_the_hook_saw_is_not_kept(hippo: Hippo, db_path: Path | str,
                                           tmp_path: Path) -> None:
    db = db_path
    hippo("add", "The deploy script runs from a clean tree on the release branch.")
    prompt = "Why does the velvetpangolin deploy fail on the zirconwombat branch?"
    for _ in range(2):  # a repeat reads the query cache
        hippo("hook", "claude-code", "prompt", input=json.dumps(
            {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": str(tmp_path)}))
        hippo("search", "--json", prompt)
        hippo("echo", "--json", prompt)
    assert readable(db, ["velvetpangolin", "zirconwombat"]) == {}


def test_forget_session_leaves_nothing_of_it(hippo: Hippo, db_path: Path | str,
                                             tmp_path: Path) -> None:
    db = db_path
    folder = tmp_path / "t"
    folder.mkdir()
    for sid, text in (("keep", "We moved the nightly report to the analytics replica."),
                      ("gone", "The saffronyeti migration broke the obsidianlemur importer.")):
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
            {"session_id": sid, "role": "user", "content": text,
             "timestamp": "2026-03-02T10:00:00Z"},
            {"session_id": sid, "role": "assistant", "content": f"Noted: {text}",
             "timestamp": "2026-03-02T10:00:05Z"}]))
    hippo("ingest", str(folder), "--idle-minutes", "0")
    hippo("echo", "--json", "what broke the obsidianlemur importer?")
    words = ["saffronyeti", "obsidianlemur"]
    assert set(readable(db, words)) == set(words)

    out = hippo("echo", "--forget-session", "gone")
    assert json.loads(out.stdout)["chunks"] >= 1 and "warning" not in out.stderr
    assert readable(db, words) == {}
    assert "analytics" in readable(db, ["analytics"])
