from kmigrate.cli.main import main

main()
