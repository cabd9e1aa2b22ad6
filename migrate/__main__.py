from kmigrate.cli import main

main()
