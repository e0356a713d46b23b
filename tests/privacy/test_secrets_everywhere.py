"""Every secret of the corpus, written through every path into one store, with the real
local model (so token matrices are cached too): ingest in each transcript format, extract,
`add`, `add -`, `import`, `edit --text`. Afterwards no 12-character run of any secret is
in the database file, its -wal, any decoded blob, or what export, echo and search print.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from privacy_support import decoded_blobs, leaks, printable_runs, raw_bytes
from secrets_corpus import Secret, corpus, placements

from tests.conftest import BACKEND

CORPUS = corpus()
TS = "2026-03-01T10:00:{:02d}.000Z"


def _claude(secrets: list[Secret]) -> str:
    sid = "aaaaaaaa-1111-4222-8333-444444444444"
    lines, parent = [], None
    for i, s in enumerate(secrets):
        base = {"cwd": "/home/dev/proj", "sessionId": sid, "version": "2.1.30",
                "userType": "external", "isSidechain": False, "timestamp": TS.format(i % 60)}
        for kind, message in (
            ("user", {"role": "user", "content": placements(s)["sentence"]}),
            ("assistant", {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": s.line}},
                {"type": "tool_use", "id": f"h{i}", "name": "http",
                 "input": {"body": s.line, "headers": {"accept": "json"}}}]}),
            ("user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{i}", "content": s.line}]}),
        ):
            uuid = f"u-{i}-{len(lines)}"
            lines.append({**base, "type": kind, "uuid": uuid, "parentUuid": parent,
                          "message": message})
            parent = uuid
    return "".join(json.dumps(r) + "\n" for r in lines)


def _codex(secrets: list[Secret]) -> str:
    records: list[dict[str, object]] = [
        {"id": "0a1b2c3d-0000-4000-8000-00000000000f", "timestamp": "2025-04-01T10:00:00.000Z",
         "instructions": None, "git": {"branch": "main"}}]
    for i, s in enumerate(secrets):
        records += [
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": placements(s)["sentence"]}]},
            {"type": "function_call", "name": "shell", "call_id": f"c{i}",
             "arguments": json.dumps({"command": ["bash", "-lc", s.line]})},
            {"type": "function_call_output", "call_id": f"c{i}",
             "output": json.dumps({"output": s.line, "metadata": {"exit_code": 0}})},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": f"Done: {s.line}"}]},
        ]
    return "".join(json.dumps(r) + "\n" for r in records)


def _gemini(secrets: list[Secret]) -> str:
    messages = []
    for i, s in enumerate(secrets):
        messages += [
            {"id": f"g{i}", "timestamp": TS.format(i % 60), "type": "user",
             "content": placements(s)["sentence"]},
            {"id": f"r{i}", "timestamp": TS.format(i % 60), "type": "gemini", "content": "ok",
             "toolCalls": [{"id": f"tc{i}", "name": "web_fetch", "args": {"body": s.line},
                            "result": [{"functionResponse": {"response": {"output": s.line}}}]}]},
        ]
    return json.dumps({"sessionId": "bbbbbbbb-1111-4222-8333-444444444444", "projectHash": "h",
                       "startTime": TS.format(0), "messages": messages})


def _aider(secrets: list[Secret]) -> str:
    out = ["\n# aider chat started at 2025-01-02 03:04:05\n\n> Cur working dir: /src/app  \n\n"]
    for s in secrets:
        line = s.line.replace("\n", "  \n")
        out.append(f"#### {placements(s)['sentence'].splitlines()[0]}  \n\n{line}\n\n"
                   f"> Ran: {s.line.splitlines()[0]}  \n\n")
    return "".join(out)


def _generic(secrets: list[Secret]) -> str:
    rows = []
    for i, s in enumerate(secrets):
        rows += [{"role": "user", "content": placements(s)["sentence"], "timestamp": TS.format(i % 60)},
                 {"role": "assistant", "content": "running it",
                  "tool_calls": [{"id": f"x{i}", "function": {
                      "name": "http", "arguments": placements(s)["tool_json"]}}]},
                 {"role": "tool", "content": s.line}]
    return "".join(json.dumps(r) + "\n" for r in rows)


def _text(secrets: list[Secret]) -> str:
    return "\n\n".join(placements(s)["sentence"] for s in secrets) + "\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """One store (of the backend under test) written through every path; the outputs of
    every reading command."""
    tmp = tmp_path_factory.mktemp("secrets")
    if BACKEND == "postgres":  # one schema for the module (db_path's is the test's own)
        from tests.pgtest import store_url

        with store_url("secrets") as url:
            yield _written(tmp, url)
        return
    yield _written(tmp, tmp / "hippo.db")


def _written(tmp: Path, db: Path | str) -> dict[str, object]:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    env.update(HIPPO_HOME=str(tmp / "home"), HIPPO_PROJECT="proj", HIPPO_NO_PROGRESS="1",
               HIPPO_EMBEDDER="local", HIPPO_SERVE="off")
    (tmp / "home").mkdir()

    def hippo(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hippo", "--db", str(db), *args],
                              input=input, capture_output=True, text=True, env=env,
                              check=False, timeout=600)

    folder = tmp / "t"
    folder.mkdir()
    files = {
        "claude": ("claude/-home-dev-proj/aaaaaaaa-1111-4222-8333-444444444444.jsonl", _claude),
        "codex": ("rollout-2025-04-01T10-00-00-0a1b2c3d-0000-4000-8000-00000000000f.jsonl",
                  _codex),
        "gemini": ("gemini/chats/session-2025-x.json", _gemini),
        "aider": ("aider/.aider.chat.history.md", _aider),
        "generic": ("chat.jsonl", _generic),
    }
    for rel, build in files.values():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(build(CORPUS), encoding="utf-8")
    runs: dict[str, subprocess.CompletedProcess[str]] = {}
    runs["ingest"] = hippo("ingest", str(folder), "--idle-minutes", "0")
    notes = tmp / "notes.txt"  # plain text is read when named, not found in a folder
    notes.write_text(_text(CORPUS), encoding="utf-8")
    runs["ingest-text"] = hippo("ingest", str(notes), "--format", "text", "--idle-minutes", "0")
    runs["extract"] = hippo("extract")
    runs["add"] = hippo("add", CORPUS[0].line)
    runs["add-"] = hippo("add", "-", input="".join(
        json.dumps({"text": placements(s)["sentence"], "tags": ["corpus"]}) + "\n"
        for s in CORPUS))
    imported = [{"id": 900_000 + i, "text": f"Imported note {i}: {s.line}"}
                for i, s in enumerate(CORPUS)]
    runs["import"] = hippo("import", "-", input="".join(json.dumps(r) + "\n" for r in imported))
    runs["edit"] = hippo("edit", "900000", "--text", f"Edited: {CORPUS[1].line} {CORPUS[2].line}")
    runs["export"] = hippo("export")
    runs["search"] = hippo("search", "--json", "--all-projects", "--limit", "50",
                           "deploy credential token password key")
    runs["echo"] = hippo("echo", "--json", "--limit", "50", "credential for the deploy")
    runs["list"] = hippo("list", "--json", "--limit", "1000")
    return {"db": db, "runs": runs, "files": files}


# `db_path`: the postgres run keeps the tests that use the backend's store.
def test_every_path_ran(store: dict[str, object], db_path: object) -> None:
    runs = store["runs"]
    assert isinstance(runs, dict)
    for name, run in runs.items():
        assert run.returncode == 0, f"{name}: {run.stderr}"
    ingested = [json.loads(line) for key in ("ingest", "ingest-text")
                for line in runs[key].stdout.splitlines()]
    formats = {e.get("format") for e in ingested if e.get("event") == "file"}
    assert formats == {"claude-code", "codex", "gemini-cli", "aider", "generic-jsonl", "text"}
    redactions = sum(e["redactions"] for e in ingested if e.get("event") == "summary")
    assert redactions >= 6 * len(CORPUS)
    assert len(runs["export"].stdout.splitlines()) >= 2 * len(CORPUS)
    assert runs["search"].stdout and runs["echo"].stdout


def test_no_run_of_any_secret_is_stored_or_printed(store: dict[str, object],
                                                   db_path: object) -> None:
    db = store["db"]
    runs = store["runs"]
    assert isinstance(db, (Path, str)) and isinstance(runs, dict)
    raw = printable_runs(raw_bytes(db))
    assert len(raw) > 10_000  # the store's text is in there
    blobs = decoded_blobs(db)
    assert blobs  # the local model cached token matrices: they are searched too
    texts = {"blob": "\n".join(blobs)}
    texts.update({f"{name} output": r.stdout + r.stderr for name, r in runs.items()})
    left = {s.kind: found[:2] for s in CORPUS if (found := leaks(s.runs(), raw, texts))}
    assert not left, f"{len(left)} secrets survive: {left}"
