"""Every Redis key the bot uses, in one place.

rb:game:{id}              the table document (JSON)
rb:game:{id}:outbox       list of outgoing messages, oldest first
rb:game:{id}:messages     hash: message key -> "chat_id:message_id" of messages already sent
rb:game:{id}:damaged      a game document that could not be read back, set aside for a look
rb:lock:outbox:{id}       the lock of whoever drains the game's outbox
rb:chat:{chat_id}:game    the id of the group's open lobby or running game
rb:chat:{chat_id}:record  the last finished game's record (resistance-record/1 JSON)
rb:chat:{chat_id}:settings  the group's settings (JSON)
rb:user:{user_id}:games   set of ids of the active games the user sits in
rb:deadlines              sorted set: game id -> when its clock next has something to do
rb:outbox:pending         set of game ids whose outbox may hold messages
rb:update:{update_id}     a webhook update: the lease of the worker processing it, or "done"
rb:update:{update_id}:answers  hash: game id -> what the update answered when it changed that game (tgbot.once)
rb:webhook:registered     which worker registered the webhook
rb:ratelimit:...          the shared flood-limit counters and pause
"""

from __future__ import annotations

PREFIX = "rb:"

DEADLINES = f"{PREFIX}deadlines"
PENDING_OUTBOXES = f"{PREFIX}outbox:pending"
WEBHOOK_REGISTRAR = f"{PREFIX}webhook:registered"
RATE_PAUSE = f"{PREFIX}ratelimit:pause"
RATE_BOT = f"{PREFIX}ratelimit:bot"


def game(game_id: str) -> str:
    return f"{PREFIX}game:{game_id}"


def outbox(game_id: str) -> str:
    return f"{PREFIX}game:{game_id}:outbox"


def messages(game_id: str) -> str:
    return f"{PREFIX}game:{game_id}:messages"


def damaged(game_id: str) -> str:
    return f"{PREFIX}game:{game_id}:damaged"


def outbox_lock(game_id: str) -> str:
    return f"{PREFIX}lock:outbox:{game_id}"


def chat_game(chat_id: int) -> str:
    return f"{PREFIX}chat:{chat_id}:game"


def chat_record(chat_id: int) -> str:
    return f"{PREFIX}chat:{chat_id}:record"


def chat_settings(chat_id: int) -> str:
    return f"{PREFIX}chat:{chat_id}:settings"


def user_games(user_id: int) -> str:
    return f"{PREFIX}user:{user_id}:games"


def update_claim(update_id: int) -> str:
    return f"{PREFIX}update:{update_id}"


def update_answers(update_id: int) -> str:
    return f"{PREFIX}update:{update_id}:answers"


def rate_chat(chat_id: int) -> str:
    return f"{PREFIX}ratelimit:chat:{chat_id}"


# Patterns for the rare scan that finds what a damaged game document can no longer name.
USER_GAMES_PATTERN = f"{PREFIX}user:*:games"
CHAT_GAME_PATTERN = f"{PREFIX}chat:*:game"


def chat_of_chat_game_key(key: str) -> int:
    return int(key[len(PREFIX) :].split(":")[1])
