"""Bring keys written by earlier versions to today's names, once, at start-up.

Versions before Redis Cluster support named a game's keys without a hash tag (`rb:game:ID`,
`rb:game:ID:outbox`, ...) and kept the clock's index and the pending outboxes in `rb:deadlines`
and the set `rb:outbox:pending`. Those only ever ran on one Redis, where renaming is possible; a
cluster never held them. Every step can run twice, and in several workers at once.
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
    if deadlines:
        # LT: a deadline written since by this version is the one to keep if it is sooner.
        await redis.zadd(keys.DEADLINES, dict(deadlines), lt=True)
        moved += len(deadlines)
    pending = await redis.smembers(keys.LEGACY_PENDING_OUTBOXES)
    if pending:
        await redis.zadd(keys.PENDING_OUTBOXES, dict.fromkeys(pending, 0), nx=True)
        moved += len(pending)
    await redis.delete(keys.LEGACY_DEADLINES, keys.LEGACY_PENDING_OUTBOXES)
    # Later starts skip the scan of the whole key space. (Workers of an earlier version must be
    # stopped before this one starts: they would go on writing the old names.)
    await redis.set(keys.MIGRATED_TO_TAGS, "1")
    if moved:
        log.info("moved %d keys of an earlier version to today's names", moved)
    return moved
