"""The command line: one module per command group, on Typer (and a fast path for search)."""
