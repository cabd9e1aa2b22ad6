from kmigrate.commands.cli import main

main()
