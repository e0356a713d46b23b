"""The application layer: one function per use case (search with its notes, echo, context
and guidance, remember, supersede, forget, done, verify, ingest, extract, setup), returning
data. The command line, the MCP server and the warm server call it; none of them assembles
the domain itself. Imports nothing at package level: the search fast path passes through."""
