"""Every Redis key the bot uses, in one place.

Keys in braces share a Redis Cluster hash tag: Redis Cluster stores keys with the same `{tag}` in
one slot, so one script or transaction may use them together. Each game's keys carry the game's
id as their tag; the clock's shared sorted sets are cut into `CLOCK_SHARDS` shards, each with a tag of
its own (`{clock:NN}`), a game's entries in the shard its id falls in (`clock_shard`), so that on a
Redis Cluster they spread over the masters and no one master's outage stops every game's clock.
Nothing ever touches keys of two tags in one script or transaction (`tgbot.indexes` keeps the lookups
across games in step).

rb:game:{id}                the table document (JSON)
rb:game:{id}:outbox         list of outgoing messages, oldest first
rb:game:{id}:messages       hash: message key -> "chat_id:message_id" of messages already sent
rb:game:{id}:outbox-lock    the lock of whoever drains the game's outbox
rb:game:{id}:record         the finished game's record (resistance-record/1 JSON)
rb:game:{id}:damaged        a game document that could not be read back, set aside for a look
rb:game:{id}:lost           set once the game's group was told the game was lost with Redis's data (tgbot.dataset)
rb:{clock:NN}:deadlines     sorted set: game id -> when its clock next has something to do
rb:{clock:NN}:revisions     hash: game id -> the table revision its deadline was last set from
rb:{clock:NN}:outboxes      sorted set: game id -> when a change last queued messages for it (ms)
rb:chat:{chat_id}:game      the id of the group's open lobby or running game
rb:chat:{chat_id}:record    the id of the group's last finished game (its record is the game's)
rb:chat:{chat_id}:settings  the group's settings (JSON)
rb:chat:{chat_id}:moved-to  the chat id of the supergroup a basic group became (tgbot.chat_move)
rb:user:{user_id}:games     set of ids of the games the user joined that have not finished
rb:user:{user_id}:groups    set of the chat ids of the groups whose memory counts a game of the user's
rb:{group:C}:games          hash: game id -> the finished game's summary (memory.summary), for /history and rebuilds
rb:{group:C}:ended          sorted set: game id -> when it was counted (seconds since the epoch)
rb:{group:C}:stats          hash: user id -> the person's counts in the group (memory.stats)
rb:{group:C}:ratings        hash: user id -> the person's rating in the group (memory.ratings)
rb:{group:C}:names          hash: user id -> the name they last played under in the group
rb:{group:C}:version        the group memory's revision: every write of it compares and sets this
rb:{group:C}:next-game      set of user ids to tell in private when the group's next lobby opens
rb:update:{update_id}       a webhook update: the lease of the worker processing it, or "done"
rb:update:{update_id}:answers  hash: game id -> what the update answered when it changed that game (tgbot.once)
rb:dataset                  the marker that tells a Redis that lost its data (tgbot.dataset)
rb:webhook:registered       a digest of the webhook settings last registered (five minutes)
rb:migrated:hash-tags       set once the keys of versions before the hash tags were renamed (tgbot.migrate)
rb:migrated:clock-shards    set once the clock's keys of versions before its shards were spread (tgbot.migrate)
rb:ratelimit:...            the shared flood-limit counters and pause (one key per script)

A group's memory (`rb:{group:C}:…`, C its chat id) shares the group's tag: one script counts a game
into all of it. (In `rb:chat:{chat_id}:…` and `rb:user:{user_id}:…` the braces above only mark a placeholder:
those keys are read and written one at a time and carry no tag.)
"""

from __future__ import annotations

import zlib

PREFIX = "rb:"

# The clock's shards. Changing the number moves games between shards: `tgbot.migrate` would have to
# spread them again, as it spreads the single shard of earlier versions.
CLOCK_SHARDS = 16


def clock_shard(game_id: str) -> int:
    """The shard of the clock's sets that holds the game's deadline and pending mark."""
    return zlib.crc32(game_id.encode()) % CLOCK_SHARDS


def _clock(shard: int) -> str:
    return f"{PREFIX}{{clock:{shard:02d}}}"


def deadlines(shard: int) -> str:
    return f"{_clock(shard)}:deadlines"


def deadline_revisions(shard: int) -> str:
    return f"{_clock(shard)}:revisions"


def pending_outboxes(shard: int) -> str:
    return f"{_clock(shard)}:outboxes"


def deadlines_of(game_id: str) -> str:
    return deadlines(clock_shard(game_id))


def deadline_revisions_of(game_id: str) -> str:
    return deadline_revisions(clock_shard(game_id))


def pending_outboxes_of(game_id: str) -> str:
    return pending_outboxes(clock_shard(game_id))


WEBHOOK_REGISTRAR = f"{PREFIX}webhook:registered"
DATASET = f"{PREFIX}dataset"
RATE_PAUSE = f"{PREFIX}ratelimit:pause"
RATE_BOT = f"{PREFIX}ratelimit:bot"


def game(game_id: str) -> str:
    return f"{PREFIX}game:{{{game_id}}}"


def outbox(game_id: str) -> str:
    return f"{game(game_id)}:outbox"


def messages(game_id: str) -> str:
    return f"{game(game_id)}:messages"


def outbox_lock(game_id: str) -> str:
    return f"{game(game_id)}:outbox-lock"


def record(game_id: str) -> str:
    return f"{game(game_id)}:record"


def damaged(game_id: str) -> str:
    return f"{game(game_id)}:damaged"


def lost(game_id: str) -> str:
    return f"{game(game_id)}:lost"


def chat_game(chat_id: int) -> str:
    return f"{PREFIX}chat:{chat_id}:game"


def chat_record(chat_id: int) -> str:
    return f"{PREFIX}chat:{chat_id}:record"


def chat_settings(chat_id: int) -> str:
    return f"{PREFIX}chat:{chat_id}:settings"


def chat_moved_to(chat_id: int) -> str:
    return f"{PREFIX}chat:{chat_id}:moved-to"


def user_games(user_id: int) -> str:
    return f"{PREFIX}user:{user_id}:games"


def update_claim(update_id: int) -> str:
    return f"{PREFIX}update:{{{update_id}}}"


def update_answers(update_id: int) -> str:
    return f"{update_claim(update_id)}:answers"


def rate_chat(chat_id: int | str) -> str:
    """A group's flood log: a sorted set of when its messages went (`tgbot.ratelimit`). Not the name of the
    counters of versions before it (`ratelimit:chat:…`, strings that expire within two minutes)."""
    return f"{PREFIX}ratelimit:log:{chat_id}"


# For the rare scans (a damaged document that cannot name its players or group).
USER_GAMES_PATTERN = f"{PREFIX}user:*:games"
CHAT_GAME_PATTERN = f"{PREFIX}chat:*:game"


def chat_of_chat_game_key(key: str) -> int:
    return int(key[len(PREFIX) :].split(":")[1])


# Keys of versions before the hash tags (`tgbot.migrate` renames them once, on one Redis, and
# then sets MIGRATED_TO_TAGS).
MIGRATED_TO_TAGS = f"{PREFIX}migrated:hash-tags"
LEGACY_DEADLINES = f"{PREFIX}deadlines"
LEGACY_PENDING_OUTBOXES = f"{PREFIX}outbox:pending"
LEGACY_GAME_PATTERN = f"{PREFIX}game:*"
LEGACY_CHAT_RECORD_PREFIX = "{"  # a chat's record key held the record itself, not a game id
# The clock's single shard of versions before `CLOCK_SHARDS` (`tgbot.migrate` spreads it, then sets
# MIGRATED_TO_CLOCK_SHARDS).
MIGRATED_TO_CLOCK_SHARDS = f"{PREFIX}migrated:clock-shards"
UNSHARDED_DEADLINES = f"{PREFIX}{{clock}}:deadlines"
UNSHARDED_DEADLINE_REVISIONS = f"{PREFIX}{{clock}}:revisions"
UNSHARDED_PENDING_OUTBOXES = f"{PREFIX}{{clock}}:outboxes"


def user_groups(user_id: int) -> str:
    return f"{PREFIX}user:{user_id}:groups"


def _group(chat_id: int) -> str:
    return f"{PREFIX}{{group:{chat_id}}}"


GROUP_MEMORY_PARTS = ("games", "ended", "stats", "ratings", "names", "version")


def group_memory(chat_id: int) -> list[str]:
    """The group's memory keys, in `GROUP_MEMORY_PARTS` order (one hash tag: one slot)."""
    return [f"{_group(chat_id)}:{part}" for part in GROUP_MEMORY_PARTS]


def group_next_game(chat_id: int) -> str:
    return f"{_group(chat_id)}:next-game"


GROUP_GAMES_PATTERN = f"{PREFIX}{{group:*}}:games"


def group_of_games_key(key: str) -> int:
    """The chat id in a key matched by `GROUP_GAMES_PATTERN`."""
    return int(key[len(f"{PREFIX}{{group:") : key.index("}")])
