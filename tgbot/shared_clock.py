"""One clock for every worker: Redis's own (`TIME`), read through an offset kept in memory.

A deadline is stamped by the worker that stored the move and fired by whichever worker's tick finds
it due, so every worker must read the same time: a worker whose machine's clock is a minute ahead
would otherwise fire every deadline a minute early (a player losing their turn), and one a minute
behind would stamp deadlines that fire a minute early on the others. The scripts that stamp times
inside Redis (pending outboxes, flood limits) read `TIME` already.

A worker measures how far Redis's clock is from its own monotonic clock when it starts, and again
every `SYNC_SECONDS` (and when Redis answers again after an outage), and reads the time as its
monotonic clock plus that offset: no round trip per move. The monotonic clock only measures
intervals, so the machine's wall clock, however wrong, and however it is set or stepped meanwhile,
plays no part.

On a Redis Cluster the time is that of the master serving the clock's first shard (`{clock:00}`):
the script that reads `TIME` names that shard's deadlines, so the cluster routes it there, and after a
failover to that slot's new master. A master that does not answer within `CLOCK_PATIENCE_SECONDS` is
passed over for the next shard's, so that one master's outage stops no worker's clock (the masters'
clocks differ by what their machines' do, which the deadlines' seconds do not feel). A failover to a
machine whose clock differs moves the time every worker reads by that difference, for all of them
within `SYNC_SECONDS` (sooner for a worker that saw the outage), and is logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError, RedisClusterException, RedisError

from tgbot import keys
from tgbot.indexes import CLOCK_PATIENCE_SECONDS

log = logging.getLogger(__name__)

# How often a worker measures its offset to Redis's clock again.
SYNC_SECONDS = 10.0
# Round trips per measure: the quickest one bounds the error best (half its round trip).
SAMPLES = 3
# A measure that moves the offset by more than this is logged: Redis's clock changed (a failover
# to another machine, its clock set), or this worker's monotonic clock stood still (a suspended VM).
MOVED_SECONDS = 1.0

# KEYS: a shard's deadlines (named only so that a cluster runs this on the master that keeps them).
_TIME = """
local now = redis.call('TIME')
return {now[1], now[2]}
"""


class SharedClock:
    """Callable like `time.time`: seconds since the epoch, by Redis's clock."""

    def __init__(self, redis: Redis, local: Callable[[], float] = time.monotonic) -> None:
        self.local = local  # this worker's own clock; only its intervals are used
        self.offset: float | None = None  # Redis's time minus `local()`, once measured
        self.error = 0.0  # at most this far off when measured: half the round trip
        self.redis = redis
        self._time = redis.register_script(_TIME)

    def __call__(self) -> float:
        if self.offset is None:
            raise RuntimeError("the shared clock was never measured: await sync() first")
        return self.local() + self.offset

    async def sync(self) -> float:
        """Measure the offset to Redis's clock again; returns how far it moved (0 the first time).
        Raises RedisError if Redis does not answer (the last offset stays in use)."""
        failure: Exception = ConnectionError("no shard of the clock answered")
        for shard in self._shards_to_ask():
            try:
                async with asyncio.timeout(CLOCK_PATIENCE_SECONDS):
                    return await self._sync_with(shard)
            except (RedisError, TimeoutError) as error:
                failure = error
                log.info("the shared clock passed over shard %d: it did not answer (%s)", shard, type(error).__name__)
        raise failure if isinstance(failure, RedisError) else ConnectionError("no shard of the clock answered")

    def _shards_to_ask(self) -> list[int]:
        """The first shard, then on a cluster the first shard each other master serves (by the slot map
        the client holds): asking two shards of one master again gains nothing."""
        if not isinstance(self.redis, RedisCluster):
            return [0]
        shards, masters = [], set()
        for shard in range(keys.CLOCK_SHARDS):
            try:
                node = self.redis.get_node_from_key(keys.deadlines(shard))
            except (RedisClusterException, RedisError):  # no slot map yet: the first command reads it
                return list(range(keys.CLOCK_SHARDS))
            name = None if node is None else node.name
            if name is None or name not in masters:
                masters.add(name)
                shards.append(shard)
        return shards

    async def _sync_with(self, shard: int) -> float:
        best: tuple[float, float] | None = None  # (round trip, offset)
        for _ in range(SAMPLES):
            sent = self.local()
            seconds, micros = await self._time(keys=[keys.deadlines(shard)])
            received = self.local()
            redis_now = int(seconds) + int(micros) / 1_000_000
            sample = (received - sent, redis_now - (sent + received) / 2)
            if best is None or sample[0] < best[0]:
                best = sample
        round_trip, offset = best
        moved = 0.0 if self.offset is None else offset - self.offset
        if abs(moved) > MOVED_SECONDS:
            log.warning("the shared clock moved by %+.1f s (Redis's clock changed, or this worker stood still)", moved)
        self.offset, self.error = offset, round_trip / 2
        return moved
