"""`python -m hippo`: the same entry point as the `hippo` command."""

from hippo.cli.main import console

console()
