"""Running the bot without Telegram: an in-memory Bot API for the offline demo and end-to-end tests."""
