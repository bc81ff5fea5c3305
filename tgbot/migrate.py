"""Bring keys written by earlier versions to today's names, once, at start-up.

Versions before Redis Cluster support named a game's keys without a hash tag (`rb:game:ID`,
`rb:game:ID:outbox`, ...) and kept the clock's index and the pending outboxes in `rb:deadlines`
and the set `rb:outbox:pending`. Those only ever ran on one Redis, where renaming is possible; a
cluster never held them. Versions after them kept the clock in one shard (`rb:{clock}:…`), which
`clock_shards` spreads over today's. Every step can run twice, and in several workers at once.
"""

from __future__ import annotations

import contextlib
import logging

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from tgbot import keys

log = logging.getLogger(__name__)

_GAME_PREFIX = f"{keys.PREFIX}game:"


def tagged_name(legacy: str) -> str | None:
    """Today's name of a game key written without a hash tag; None if it has one already."""
    rest = legacy[len(_GAME_PREFIX) :]
    if not legacy.startswith(_GAME_PREFIX) or rest.startswith("{"):
        return None
    game_id, _, suffix = rest.partition(":")
    return keys.game(game_id) + (f":{suffix}" if suffix else "")


async def legacy_keys(redis: Redis) -> int:
    """Rename what an earlier version left; returns how many keys it moved."""
    if isinstance(redis, RedisCluster) or await redis.exists(keys.MIGRATED_TO_TAGS):
        return 0
    moved = 0
    async for key in redis.scan_iter(match=keys.LEGACY_GAME_PATTERN, count=1000):
        new = tagged_name(key)
        if new is None:
            continue
        with contextlib.suppress(ResponseError):  # another worker moved it first
            moved += int(await redis.renamenx(key, new))
    deadlines = await redis.zrange(keys.LEGACY_DEADLINES, 0, -1, withscores=True)
    moved += await _spread_deadlines(redis, deadlines)
    pending = await redis.smembers(keys.LEGACY_PENDING_OUTBOXES)
    moved += await _spread_pending(redis, dict.fromkeys(pending, 0))
    await redis.delete(keys.LEGACY_DEADLINES, keys.LEGACY_PENDING_OUTBOXES)
    # Later starts skip the scan of the whole key space. (Workers of an earlier version must be
    # stopped before this one starts: they would go on writing the old names.)
    await redis.set(keys.MIGRATED_TO_TAGS, "1")
    if moved:
        log.info("moved %d keys of an earlier version to today's names", moved)
    return moved


async def _spread_deadlines(redis: Redis, deadlines: list[tuple[str, float]]) -> int:
    """Deadlines of the clock's single index, each into its game's shard. LT: a deadline written since by
    this version is the one to keep if it is sooner."""
    for game_id, wake in deadlines:
        await redis.zadd(keys.deadlines_of(game_id), {game_id: wake}, lt=True)
    return len(deadlines)


async def _spread_pending(redis: Redis, marks: dict[str, float]) -> int:
    for game_id, marked in marks.items():
        await redis.zadd(keys.pending_outboxes_of(game_id), {game_id: marked}, nx=True)
    return len(marks)


async def clock_shards(redis: Redis) -> int:
    """Spread the clock's single shard of versions before `keys.CLOCK_SHARDS` (`rb:{clock}:…`, on one
    slot) over the shards; returns how many entries it moved. On a cluster too: those keys were
    written there. Workers of the earlier version must be stopped first: they go on writing the old keys."""
    if await redis.exists(keys.MIGRATED_TO_CLOCK_SHARDS):
        return 0
    deadlines = await redis.zrange(keys.UNSHARDED_DEADLINES, 0, -1, withscores=True)
    revisions = await redis.hgetall(keys.UNSHARDED_DEADLINE_REVISIONS)
    pending = dict(await redis.zrange(keys.UNSHARDED_PENDING_OUTBOXES, 0, -1, withscores=True))
    for game_id, revision in revisions.items():
        shard = keys.deadline_revisions_of(game_id)
        if int(revision) > int(await redis.hget(shard, game_id) or -1):
            await redis.hset(shard, game_id, revision)
    moved = await _spread_deadlines(redis, deadlines) + await _spread_pending(redis, pending)
    # One key at a time: the three share a slot, but the marker does not.
    for old in (keys.UNSHARDED_DEADLINES, keys.UNSHARDED_DEADLINE_REVISIONS, keys.UNSHARDED_PENDING_OUTBOXES):
        await redis.delete(old)
    await redis.set(keys.MIGRATED_TO_CLOCK_SHARDS, "1")
    if moved:
        log.info("spread %d entries of the clock over its shards", moved)
    return moved
