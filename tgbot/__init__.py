"""The Telegram side: handlers that turn updates into engine actions, Redis storage, message rendering."""
