"""The lookups across games, kept in step with each game's own keys.

A game's own keys change together, in one script on one slot (`tgbot.store`). The lookups that
span games live elsewhere: the clock's deadlines and pending outboxes (in `keys.CLOCK_SHARDS` shards,
each with a tag of its own), each group's
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

No shard of the clock holds up a game: a write to a shard that does not answer within
`CLOCK_PATIENCE_SECONDS` is given up on and owed, and the move goes on (on a Redis Cluster the shard may
live on a master that is down while the game's own is up); the clock's tick writes owed entries again
from the stored tables once their shard answers (`Store.settle_owed`). The tick reads every shard at
once and fires what the answering ones hold (`ClockShardsUnreachable`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError, RedisError

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
# How long a move waits for its shard of the clock, and the clock's tick for each shard, before going on
# without it. A shard's master that answers at all answers in milliseconds.
CLOCK_PATIENCE_SECONDS = 1.0
# Owed clock entries kept for a shard that stays silent; more games than this lose theirs until the
# game's next move (each move writes its entry again).
OWED_KEPT = 10_000

log = logging.getLogger(__name__)

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


class ClockShardsUnreachable(ConnectionError):
    """Some shards of the clock did not answer; `found` holds what the others did. A ConnectionError, so
    that whoever does not look at `found` treats it as storage unavailable."""

    def __init__(self, shards: list[int], found: list[str]) -> None:
        super().__init__(f"{len(shards)} of the clock's {keys.CLOCK_SHARDS} shards did not answer")
        self.shards = shards
        self.found = found


class Indexes:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        # Games whose clock entry a write gave up on (an ordered set: the oldest is dropped first).
        self._owed: dict[str, None] = {}
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
        its deadline forward to `earlier_wake` if that is sooner. If the game's shard of the clock
        does not answer within `CLOCK_PATIENCE_SECONDS`, the write goes on without it and the entry
        is owed (`owed`)."""
        if pending:
            marked = self._marked.get(game_id)
            pending = marked is None or time.monotonic() - marked >= REMARK_SECONDS
        if not pending and earlier_wake is None:
            return
        asked = time.monotonic()
        shard = keys.clock_shard(game_id)
        written = await self._clock_write(
            game_id,
            self._ahead(
                keys=[keys.deadlines(shard), keys.deadline_revisions(shard), keys.pending_outboxes(shard)],
                args=[game_id, "1" if pending else "0", _score(earlier_wake), revision],
            ),
        )
        if pending and written:
            self._marked.pop(game_id, None)  # re-inserted: the dict stays ordered by age
            self._marked[game_id] = asked
            if len(self._marked) > MARKS_KEPT:
                del self._marked[next(iter(self._marked))]

    async def settle_deadline(self, game_id: str, wake: float | None, revision: int) -> bool:
        """After a write: the game's deadline as revision `revision` of its table has it. False if a
        newer revision's deadline is there already, or if the clock's shard did not answer (then the
        entry is owed)."""
        shard = keys.clock_shard(game_id)
        settled = await self._clock_write(
            game_id,
            self._settle_deadline(
                keys=[keys.deadlines(shard), keys.deadline_revisions(shard)], args=[game_id, _score(wake), revision]
            ),
        )
        return bool(settled)

    async def _clock_write(self, game_id: str, write: Awaitable[Any]) -> Any:
        """Run a write to the game's shard of the clock, giving up after `CLOCK_PATIENCE_SECONDS`: a
        move of one game must not wait for a master that serves only the clock's entries of others
        (on a cluster the shard may live on another master than the game). A write given up on is owed:
        the entry is written again from the stored table once the shard answers (`owed`)."""
        try:
            async with asyncio.timeout(CLOCK_PATIENCE_SECONDS):
                return await write
        except (RedisError, TimeoutError) as error:
            log.warning(
                "game %s: the clock's entry is owed: its shard did not answer (%s)", game_id, type(error).__name__
            )
            self.owe(game_id)
            return None

    def owe(self, game_id: str) -> None:
        self._owed[game_id] = None
        while len(self._owed) > OWED_KEPT:
            del self._owed[next(iter(self._owed))]

    def owed(self) -> list[str]:
        """Games whose clock entry a write gave up on: `Store.settle_owed` writes them again."""
        return list(self._owed)

    def is_owed(self, game_id: str) -> bool:
        return game_id in self._owed

    def paid(self, game_id: str) -> None:
        self._owed.pop(game_id, None)

    async def forget_deadline(self, game_id: str) -> None:
        """The game is gone for good: nothing of it is left for the clock."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(keys.deadlines_of(game_id), game_id)
            pipe.hdel(keys.deadline_revisions_of(game_id), game_id)
            await pipe.execute()

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """Ids of games whose clock has something to do by `now` (or may have: see `ahead`), at most
        `limit` of each shard. A shard that does not answer raises `ClockShardsUnreachable` once the
        others are read, holding what they gave."""
        return await self._each_shard(
            lambda client, shard: client.zrangebyscore(keys.deadlines(shard), "-inf", now, start=0, num=limit)
        )

    async def mark_pending(self, game_id: str) -> None:
        """Before messages are queued for the game without a change to it."""
        await self.ahead(game_id, pending=True, earlier_wake=None, revision=0)

    async def pending(self) -> list[str]:
        """Ids of games whose outbox may hold messages (`ClockShardsUnreachable`: as `due`)."""
        return sorted(await self._each_shard(lambda client, shard: client.zrange(keys.pending_outboxes(shard), 0, -1)))

    async def _each_shard(self, read: Callable[[Any, int], Awaitable[list[str]]]) -> list[str]:
        """`read(client, shard)` of every shard at once, each given up on after `CLOCK_PATIENCE_SECONDS`.
        One Redis answers them all in one round trip (a pipeline); a cluster's masters each on their own,
        so that one that does not answer holds up none of the others' answers."""
        shards = range(keys.CLOCK_SHARDS)
        if not isinstance(self.redis, RedisCluster):
            try:
                async with asyncio.timeout(CLOCK_PATIENCE_SECONDS), self.redis.pipeline(transaction=False) as pipe:
                    for shard in shards:
                        read(pipe, shard)
                    answers = await pipe.execute()
            except TimeoutError:
                raise ClockShardsUnreachable(list(shards), []) from None
            return [game_id for answer in answers for game_id in answer]

        async def patient(shard: int) -> list[str]:
            async with asyncio.timeout(CLOCK_PATIENCE_SECONDS):
                return await read(self.redis, shard)

        answers = await asyncio.gather(*(patient(shard) for shard in shards), return_exceptions=True)
        found: list[str] = []
        silent: list[int] = []
        for shard, answer in enumerate(answers):
            if isinstance(answer, (RedisError, TimeoutError)):
                silent.append(shard)
            elif isinstance(answer, BaseException):
                raise answer
            else:
                found.extend(answer)
        if silent:
            raise ClockShardsUnreachable(silent, found)
        return found

    async def settle_pending(self, game_id: str) -> None:
        """A drain found the game's outbox empty and let its lock go."""
        await self._settle_pending(keys=[keys.pending_outboxes_of(game_id)], args=[game_id, PENDING_GRACE_MS])

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
