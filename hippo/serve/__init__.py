"""`hippo serve`: the optional warm server that answers read commands in milliseconds.

Every `hippo` call is a new process that imports Python's libraries, Typer and the
embedding model before it can search; a warm server has them loaded. A client
(`hippo.serve.client`, in `hippo.cli.main`) sends a search, an echo query, `context` or a
prompt / session-start hook to the server of its database when one runs and runs the
call itself otherwise, with the same output either way. Modules:

- `address`: the per-user runtime directory, a socket per database;
- `wire`: the framed, versioned protocol;
- `client`: what a call sends, and every reason it runs the command itself;
- `server`: the accept loop, the checks (user, version, database), the idle exit;
- `execute`: one call run in the client's environment, directory and streams;
- `spawn`: `[serve]` settings, the detached start, `--stop` and `--status`;
- `daemon`: `run`, what `hippo serve` runs.

This package's `__init__` imports nothing: the client's fast path goes through it.
"""
