"""kmigrate rules."""
