"""The lookups across games, kept in step with each game's own keys.

A game's own keys change together, in one script on one slot (`tgbot.store`). The lookups that
span games live elsewhere: the clock's deadlines and pending outboxes (tag `{clock}`), each group's
current game and last record, each user's games. On Redis Cluster they may sit on other masters,
so no script can change them together with a game. They are written just before or just after the
game's script instead, each write chosen so that a process dying between the two leaves them
wrong only in a way that costs a little work and that the next reader repairs:

- before (`ahead`): the game marked as maybe holding messages (a drain that finds its outbox
  empty takes the mark off); its deadline brought forward, never pushed back (the clock wakes,
  finds nothing due and sets the deadline from the stored table); a user listed in a game they may
  not be seated in (readers check the table).
- after (`settle_deadline`, `release_chat`, ...): a deadline pushed back or cleared, a finished
  game's group and players let go. Left undone, the clock wakes early, and whoever reads a group
  whose game is over lets it go then (`tgbot.store.Store.game_of_chat`).

A deadline write carries the table's revision: one that arrives after a newer revision's is
refused, so writes of two workers that overtake each other leave the newer deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from redis.asyncio import Redis

from tgbot import keys

# A drain that found a game's outbox empty takes it off the pending set only if no change marked it
# for this long: a change marks it just before it queues its messages, so a mark this fresh may
# belong to messages about to arrive.
PENDING_GRACE_MS = 3000

# A mark this process set less than this long ago is still there: it is taken off only once it
# is `PENDING_GRACE_MS` old (by Redis's clock), so a write this soon after needs no mark of its own.
# The margin covers the round trip that set it.
REMARK_SECONDS = PENDING_GRACE_MS / 1000 - 1.0
MARKS_KEPT = 4096

_NOW_MS = """
local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""

# Before a game's write. KEYS: deadlines, revisions, pending. ARGV: game id, '1' to mark the game
# pending, its new deadline ('' if it has none or it does not change), the new table's revision.
_AHEAD = (
    _NOW_MS
    + """
if ARGV[2] == '1' then redis.call('ZADD', KEYS[3], now_ms, ARGV[1]) end
if ARGV[3] ~= '' then
    redis.call('ZADD', KEYS[1], 'LT', ARGV[3], ARGV[1])
    local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
    if tonumber(ARGV[4]) > seen then redis.call('HSET', KEYS[2], ARGV[1], ARGV[4]) end
end
return 1
"""
)

# After a game's write: its deadline as the stored table has it, unless a newer revision's came
# first. KEYS: deadlines, revisions. ARGV: game id, deadline ('' for none), revision.
_SETTLE_DEADLINE = """
local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if tonumber(ARGV[3]) < seen then return 0 end
if ARGV[2] == '' then
    redis.call('ZREM', KEYS[1], ARGV[1])
    redis.call('HDEL', KEYS[2], ARGV[1])
else
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
    redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
end
return 1
"""

# A drain found the game's outbox empty. KEYS: pending. ARGV: game id, grace in ms.
# A mark later than now was stamped by a clock ahead of this Redis's (a failover to a replica whose
# machine's clock is behind, or this machine's clock set back): it counts from now, instead of every
# worker's clock draining the empty outbox until Redis's clock catches up with it.
_SETTLE_PENDING = (
    _NOW_MS
    + """
local marked = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not marked then return 0 end
if tonumber(marked) > now_ms then
    redis.call('ZADD', KEYS[1], now_ms, ARGV[1])
    return 0
end
if tonumber(marked) <= now_ms - tonumber(ARGV[2]) then
    return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
"""
)

# KEYS: one key. ARGV: the value it must still hold to be deleted.
_DELETE_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _score(wake: float | None) -> str:
    return "" if wake is None else repr(float(wake))


class Indexes:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        # When this process last marked each game pending (its monotonic clock): a mark younger than
        # `REMARK_SECONDS` cannot have been taken off yet (see `ahead`), so it is not written again.
        self._marked: dict[str, float] = {}
        self._ahead = redis.register_script(_AHEAD)
        self._settle_deadline = redis.register_script(_SETTLE_DEADLINE)
        self._settle_pending = redis.register_script(_SETTLE_PENDING)
        self._delete_if = redis.register_script(_DELETE_IF)

    # ---------------------------------------------------------------- the clock's

    async def ahead(self, game_id: str, *, pending: bool, earlier_wake: float | None, revision: int) -> None:
        """Before a write of the game: mark it pending (it is about to queue messages) and bring
        its deadline forward to `earlier_wake` if that is sooner."""
        if pending:
            marked = self._marked.get(game_id)
            pending = marked is None or time.monotonic() - marked >= REMARK_SECONDS
        if not pending and earlier_wake is None:
            return
        asked = time.monotonic()
        await self._ahead(
            keys=[keys.DEADLINES, keys.DEADLINE_REVISIONS, keys.PENDING_OUTBOXES],
            args=[game_id, "1" if pending else "0", _score(earlier_wake), revision],
        )
        if pending:
            self._marked.pop(game_id, None)  # re-inserted: the dict stays ordered by age
            self._marked[game_id] = asked
            if len(self._marked) > MARKS_KEPT:
                del self._marked[next(iter(self._marked))]

    async def settle_deadline(self, game_id: str, wake: float | None, revision: int) -> bool:
        """After a write: the game's deadline as revision `revision` of its table has it. False if a
        newer revision's deadline is there already."""
        settled = await self._settle_deadline(
            keys=[keys.DEADLINES, keys.DEADLINE_REVISIONS], args=[game_id, _score(wake), revision]
        )
        return bool(settled)

    async def forget_deadline(self, game_id: str) -> None:
        """The game is gone for good: nothing of it is left for the clock."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(keys.DEADLINES, game_id)
            pipe.hdel(keys.DEADLINE_REVISIONS, game_id)
            await pipe.execute()

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """Ids of games whose clock has something to do by `now` (or may have: see `ahead`)."""
        return await self.redis.zrangebyscore(keys.DEADLINES, "-inf", now, start=0, num=limit)

    async def mark_pending(self, game_id: str) -> None:
        """Before messages are queued for the game without a change to it."""
        await self.ahead(game_id, pending=True, earlier_wake=None, revision=0)

    async def pending(self) -> list[str]:
        """Ids of games whose outbox may hold messages."""
        return sorted(await self.redis.zrange(keys.PENDING_OUTBOXES, 0, -1))

    async def settle_pending(self, game_id: str) -> None:
        """A drain found the game's outbox empty and let its lock go."""
        await self._settle_pending(keys=[keys.PENDING_OUTBOXES], args=[game_id, PENDING_GRACE_MS])

    # ---------------------------------------------------------------- groups and players

    async def claim_chat(self, chat_id: int, game_id: str) -> str | None:
        """Make the game the group's current one, unless it has one: None if claimed, else the
        id of the game it has."""
        held = await self.redis.set(keys.chat_game(chat_id), game_id, nx=True, get=True)
        # This game's own id: the claim went through and the client sent it again (its answer lost).
        return None if held == game_id else held

    async def release_chat(self, chat_id: int, game_id: str) -> None:
        """The game is no longer the group's current one (if it still was)."""
        await self._delete_if(keys=[keys.chat_game(chat_id)], args=[game_id])

    async def add_player_games(self, game_id: str, user_ids: Iterable[int]) -> None:
        await self._each_user(user_ids, lambda pipe, key: pipe.sadd(key, game_id))

    async def remove_player_games(self, game_id: str, user_ids: Iterable[int]) -> None:
        await self._each_user(user_ids, lambda pipe, key: pipe.srem(key, game_id))

    async def _each_user(self, user_ids: Iterable[int], command) -> None:
        user_keys = [keys.user_games(user_id) for user_id in user_ids]
        if not user_keys:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in user_keys:
                command(pipe, key)
            await pipe.execute()

    async def set_last_record(self, chat_id: int, game_id: str) -> None:
        await self.redis.set(keys.chat_record(chat_id), game_id)

    async def game_of(self, chat_id: int) -> str | None:
        """The id the group's pointer names, as it stands (`Store.game_of_chat` checks it)."""
        return await self.redis.get(keys.chat_game(chat_id))

    async def mark_moved(self, old_chat_id: int, new_chat_id: int, seconds: int) -> None:
        """The basic group `old_chat_id` became the supergroup `new_chat_id`, for updates from the old
        chat that reach the bot after the move (`chat_now`)."""
        await self.redis.set(keys.chat_moved_to(old_chat_id), new_chat_id, ex=seconds)

    async def chat_now(self, chat_id: int) -> int:
        """The group's chat id now: the supergroup's, if the group became one."""
        moved_to = await self.redis.get(keys.chat_moved_to(chat_id))
        return chat_id if moved_to is None else int(moved_to)

    async def move_last_record(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group became a supergroup: its last record is the new chat's, unless a game finished
        there already (that one is the newer)."""
        await self.move_chat_key(keys.chat_record(old_chat_id), keys.chat_record(new_chat_id))

    async def move_chat_key(self, old_key: str, new_key: str) -> None:
        """A group's key, copied to its new chat's key unless that has a value, then deleted if it still
        holds what was copied. The two keys may live in different slots, so these are two steps; each
        may run again, in any number of workers: a repeat finds the new key set and only deletes the
        old one."""
        value = await self.redis.get(old_key)
        if value is None:
            return
        await self.redis.set(new_key, value, nx=True)
        await self._delete_if(keys=[old_key], args=[value])
