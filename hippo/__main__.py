from hippo.cli.main import console

console()
