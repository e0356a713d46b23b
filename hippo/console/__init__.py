"""What a command runs in and what a person or a pipe sees of it: the call's environment
(streams, whether each is a terminal, variables, cwd), JSON lines or a table on stdout,
progress on stderr only when a person watches."""
