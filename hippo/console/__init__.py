"""What a person or a pipe sees of a command: JSON lines or a table on stdout, progress on stderr only when a person watches."""
