"""The Redis client every worker uses: a pool that waits for a free connection, and retries.

REDIS_URL may name one Redis (redis://, rediss://, unix://) or a Redis Cluster (redis+cluster://,
rediss+cluster://; see tgbot.cluster_url and tgbot.redis_cluster).

Every command and pipeline counts against the budget of the update that runs it (`tgbot.redis_budget`)."""

from __future__ import annotations

from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError

from tgbot import redis_budget
from tgbot.cluster_url import is_cluster_url
from tgbot.redis_cluster import PatientRedisCluster, connect_cluster

# python-telegram-bot runs up to 256 updates at once; a pool that waits for a free
# connection makes a burst queue up instead of failing with "too many connections".
MAX_CONNECTIONS = 64
# A Redis that stops answering (frozen, or cut off by the network without the connection being
# closed) gets this long per command before the command counts as failed: without it a command waits
# until TCP gives up, minutes later, and the failover handling never starts. No command of the bot
# takes near as long.
SOCKET_TIMEOUT = 2.0
# And this long to accept a connection (a connection on the same network takes milliseconds; packets
# dropped by a network cut take the whole of it).
CONNECT_TIMEOUT = 1.0
# What is retried: a refused or reset connection (a Redis restarting, LOADING its data), after 0.1, 0.2
# and 0.4 s (0.7 s in all, measured with the Redis process stopped). A command
# that timed out is not: the Redis that did not answer it within SOCKET_TIMEOUT is not asked again at
# once (redis-py's default retries timeouts too: with 5 s a command to a Redis cut off by the network
# failed after 20 s), and a script it ran may have done its work.
RETRY_BACKOFF = ExponentialBackoff(cap=1.0, base=0.05)
RETRIES = 3


def connect(url: str) -> Redis | PatientRedisCluster:
    """A client for `url`. A connection broken by a Redis restart is retried, not reported to a player."""
    if is_cluster_url(url):
        return connect_cluster(url, SOCKET_TIMEOUT)
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=20,
        socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=CONNECT_TIMEOUT,
        decode_responses=True,
        retry=Retry(RETRY_BACKOFF, RETRIES, supported_errors=(ConnectionError,)),
    )
    return BoundedRedis(connection_pool=pool)


class BoundedRedis(Redis):
    """A client whose commands and pipelines count against the current update's Redis time."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        return await redis_budget.within(lambda: super(BoundedRedis, self).execute_command(*args, **options))

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return BoundedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


class BoundedPipeline(Pipeline):
    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        return await redis_budget.within(lambda: super(BoundedPipeline, self).execute(raise_on_error))
