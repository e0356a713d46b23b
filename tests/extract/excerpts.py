"""Write small hand-made transcripts in each format hippo reads, in the shapes of
`../shared/data/transcripts/FORMATS.md` and `hippo/ingest/readers/`.

A turn is a tuple: `("user", text)`, `("assistant", text)`, `("call", tool, argument)` (a
tool call of the assistant), `("edit", tool, path, old, new)` (an edit call, Claude Code and
Gemini CLI), `("patch", text)` (Codex's apply_patch, with its answer), `("result", text)` (the tool's output, for the call before it;
Codex takes an exit code as a third element), and for the formats that have them
`("injected", text)` (harness text in the user's turn; Codex also has `("developer", text)`,
generic logs `("system", text)`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import orjson

Turn = tuple[str, ...]


def _ts(i: int, day: str = "2026-04-07") -> str:
    return f"{day}T09:{i // 60:02d}:{i % 60:02d}.000Z"


def claude_code(path: Path, session: str, cwd: str, turns: Sequence[Turn],
                day: str = "2026-04-07") -> Path:
    """A Claude Code session JSONL: user/assistant records on a uuid chain, tool_use blocks
    in the assistant's message, tool_result blocks in the next user record, injected text
    as `isMeta` user records."""
    lines: list[dict] = []
    parent: str | None = None
    call_ids: list[str] = []
    for i, turn in enumerate(turns):
        uuid = f"{session[:8]}-{i:04d}"
        base = {"parentUuid": parent, "isSidechain": False, "userType": "external",
                "cwd": cwd, "sessionId": session, "version": "2.1.7", "gitBranch": "main",
                "uuid": uuid, "timestamp": _ts(i, day)}
        kind = turn[0]
        if kind == "user":
            rec = {**base, "type": "user", "message": {"role": "user", "content": turn[1]}}
        elif kind == "injected":
            rec = {**base, "type": "user", "isMeta": True,
                   "message": {"role": "user", "content": turn[1]}}
        elif kind == "assistant":
            rec = {**base, "type": "assistant", "message": {
                "id": f"msg_{uuid}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": turn[1]}]}}
        elif kind == "call":
            call_ids.append(f"toolu_{uuid}")
            key = "command" if turn[1] == "Bash" else "file_path"
            rec = {**base, "type": "assistant", "message": {
                "id": f"msg_{uuid}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": [
                    {"type": "tool_use", "id": call_ids[-1], "name": turn[1],
                     "input": {key: turn[2]}}]}}
        elif kind == "edit":  # ("edit", tool, path, old, new)
            call_ids.append(f"toolu_{uuid}")
            rec = {**base, "type": "assistant", "message": {
                "id": f"msg_{uuid}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": [
                    {"type": "tool_use", "id": call_ids[-1], "name": turn[1], "input": {
                        "file_path": turn[2], "old_string": turn[3], "new_string": turn[4]}}]}}
        elif kind in ("result", "error"):  # "error": the tool said it failed (is_error)
            rec = {**base, "type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_ids[-1], "content": turn[1],
                 **({"is_error": True} if kind == "error" else {})}]}}
        else:
            raise ValueError(kind)
        lines.append(rec)
        parent = uuid
    path.write_text("".join(orjson.dumps(x).decode() + "\n" for x in lines), encoding="utf-8")
    return path


def codex(path: Path, session: str, cwd: str, turns: Sequence[Turn]) -> Path:
    """A Codex CLI rollout: session_meta, then response_items (messages, function calls and
    their outputs), with the event_msg copies of each message as Codex writes them."""
    lines: list[dict] = [{"timestamp": _ts(0), "type": "session_meta", "payload": {
        "id": session, "timestamp": _ts(0), "cwd": cwd, "originator": "codex_cli_rs",
        "cli_version": "0.125.0", "source": "cli", "model_provider": "openai"}},
        {"timestamp": _ts(0), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5"}}]
    calls = 0
    for i, turn in enumerate(turns, start=1):
        kind, ts = turn[0], _ts(i)
        if kind in ("user", "assistant", "injected"):
            role = "assistant" if kind == "assistant" else "user"
            part = "output_text" if role == "assistant" else "input_text"
            lines.append({"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": role, "content": [{"type": part, "text": turn[1]}]}})
            if kind != "injected":
                event = "agent_message" if role == "assistant" else "user_message"
                lines.append({"timestamp": ts, "type": "event_msg",
                              "payload": {"type": event, "message": turn[1]}})
        elif kind == "developer":
            lines.append({"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "developer",
                "content": [{"type": "input_text", "text": turn[1]}]}})
        elif kind == "call":
            calls += 1
            lines.append({"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call", "name": turn[1], "call_id": f"call_{calls}",
                "arguments": json.dumps({"cmd": turn[2], "workdir": cwd})}})
        elif kind == "patch":  # ("patch", patch text): apply_patch, answered like Codex does
            calls += 1
            lines.append({"timestamp": ts, "type": "response_item", "payload": {
                "type": "custom_tool_call", "name": "apply_patch", "call_id": f"call_{calls}",
                "input": turn[1]}})
            files = [ln.split(": ", 1)[1] for ln in turn[1].splitlines()
                     if ln.startswith("*** Update File: ")]
            lines.append({"timestamp": ts, "type": "response_item", "payload": {
                "type": "custom_tool_call_output", "call_id": f"call_{calls}",
                "output": json.dumps({"output": "Success. Updated the following files:\n"
                                      + "".join(f"M {f}\n" for f in files),
                                      "metadata": {"exit_code": 0}})}})
        elif kind == "result":
            lines.append({"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"call_{calls}",
                "output": f"Chunk ID: c{i}\nWall time: 0.4 seconds\nProcess exited with code "
                          f"{turn[2] if len(turn) > 2 else 0}\nOutput:\n{turn[1]}"}})
        else:
            raise ValueError(kind)
    path.write_text("".join(orjson.dumps(x).decode() + "\n" for x in lines), encoding="utf-8")
    return path


def gemini(path: Path, session: str, turns: Sequence[Turn]) -> Path:
    """A Gemini CLI chat file: one JSON document; a tool call and its result ride on the
    `gemini` message that made it (`toolCalls[]`)."""
    msgs: list[dict] = []
    for i, turn in enumerate(turns):
        kind = turn[0]
        if kind in ("user", "assistant"):
            msgs.append({"id": f"g{i}", "timestamp": _ts(i),
                         "type": "user" if kind == "user" else "gemini", "content": turn[1]})
        elif kind == "call":
            msgs.append({"id": f"g{i}", "timestamp": _ts(i), "type": "gemini", "content": "",
                         "toolCalls": []})
            msgs[-1]["toolCalls"].append({
                "id": f"call-{i}", "name": turn[1], "args": {"command": turn[2]},
                "status": "success", "timestamp": _ts(i), "result": []})
        elif kind == "edit":  # ("edit", tool, path, old, new)
            msgs.append({"id": f"g{i}", "timestamp": _ts(i), "type": "gemini", "content": "",
                         "toolCalls": [{"id": f"call-{i}", "name": turn[1], "args": {
                             "file_path": turn[2], "old_string": turn[3], "new_string": turn[4]},
                             "status": "success", "timestamp": _ts(i), "result": []}]})
        elif kind == "result":
            msgs[-1]["toolCalls"][-1]["result"] = [{"functionResponse": {
                "id": f"call-{i}", "name": msgs[-1]["toolCalls"][-1]["name"],
                "response": {"output": turn[1]}}}]
        else:
            raise ValueError(kind)
    doc = {"sessionId": session, "projectHash": "9" * 64, "startTime": _ts(0),
           "lastUpdated": _ts(len(turns)), "messages": msgs}
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def aider(path: Path, cwd: str, turns: Sequence[Turn], *,
          started: str = "2026-04-07 09:00:00") -> Path:
    """aider's `.aider.chat.history.md`: `#### ` lines are the person, `> ` lines aider's own
    output, the rest the model's answer."""
    out = [f"\n# aider chat started at {started}\n",
           "> aider --model sonnet", "> Aider v0.86.1",
           f"> Git working dir: {cwd}", ""]
    for turn in turns:
        kind, text = turn[0], turn[1]
        if kind == "user":
            out += [f"#### {line}" if line else "####" for line in text.splitlines()] + [""]
        elif kind == "result":
            out += [f"> {line}" if line else ">" for line in text.splitlines()] + [""]
        elif kind == "assistant":
            out += [text, ""]
        else:
            raise ValueError(kind)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def generic(path: Path, session: str, cwd: str, turns: Sequence[Turn]) -> Path:
    """A generic chat log: `{role, content}` records, OpenAI-style `tool_calls` on the
    assistant's record and `tool` records for their results; a `.json` path is written as
    one document `{session_id, cwd, messages}`, anything else as JSON lines."""
    recs: list[dict] = []
    for i, turn in enumerate(turns):
        kind = turn[0]
        rec: dict = {"id": f"{session}-m{i}", "timestamp": _ts(i)}
        if kind in ("user", "assistant", "system"):
            rec |= {"role": kind, "content": turn[1]}
        elif kind == "call":
            rec |= {"role": "assistant", "content": "", "tool_calls": [{
                "id": f"call_{i}", "type": "function", "function": {
                    "name": turn[1], "arguments": json.dumps({"command": turn[2]})}}]}
        elif kind == "result":
            rec |= {"role": "tool", "content": turn[1]}
        else:
            raise ValueError(kind)
        recs.append(rec)
    if path.suffix == ".json":
        doc = {"session_id": session, "cwd": cwd, "messages": recs}
        path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    else:
        path.write_text("".join(orjson.dumps({"session_id": session, "cwd": cwd, **r}).decode()
                                + "\n" for r in recs), encoding="utf-8")
    return path
