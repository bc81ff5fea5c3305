"""A group's memory of its finished games: what each game leaves behind (`summary`), the players'
counts (`stats`) and ratings (`ratings`). Pure: no I/O; `tgbot.memory_store` keeps them in Redis."""
