from hippo.cli.main import main

main()
