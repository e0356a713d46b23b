"""`hippo mcp`: the memory as MCP tools for agents (Claude Code, Codex, Gemini CLI, Cursor).

`tools` holds the warm hippo and the tools' logic (no MCP import); `server` declares the
tools on the official SDK; `stdio` runs it with stdout kept for the protocol. Only `hippo
mcp` imports this package's SDK-facing modules: no other command pays for mcp or pydantic.
"""
