"""The client for a Redis Cluster: redis-py's RedisCluster, made to wait out a master's restart.

What a master's restart looks like to a client: refused connections while it is down, LOADING while
it reads its append-only file, then CLUSTERDOWN for its first two seconds back (a restarted master
waits that long before it serves its slots again), and CLUSTERDOWN from every master if the others
declared it failed. RedisCluster retries a refused connection at once, re-reading the slot map from
another master (which still names the dead one), so its own retries are spent within milliseconds;
`PatientRedisCluster` pauses between attempts instead, for up to `OUTAGE_PATIENCE` seconds, so a
restart reaches a player as a slower answer, not as "temporarily unavailable" (within the update's
Redis time, `tgbot.redis_budget`, which every command and pipeline counts against, as on one Redis).
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis.asyncio.cluster import ClusterNode, ClusterPipeline, RedisCluster
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import (
    AuthenticationError,
    AuthorizationError,
    ClusterDownError,
    ConnectionError,
    RedisClusterException,
    SlotNotCoveredError,
    TimeoutError,
)

from tgbot import redis_budget
from tgbot.cluster_url import parse_cluster_url

# RedisCluster cannot make a command wait for a free connection the way the single-node
# BlockingConnectionPool does: past this many connections to one master it raises
# MaxConnectionsError (which PatientRedisCluster waits out like an outage). python-telegram-bot runs
# up to 256 updates at once, each using one connection at a time.
MAX_CONNECTIONS_PER_NODE = 256
# RedisCluster's own retries: this many for a pipeline (0.25 s apart, so 2.5 s, enough for a
# restarted master's two seconds of CLUSTERDOWN) and for a transaction (with this backoff: 7.5 s).
CLUSTER_RETRIES = 10
CLUSTER_BACKOFF = ExponentialBackoff(cap=1.0, base=0.05)
# How long one command keeps trying through an outage before the bot hears about it.
OUTAGE_PATIENCE = 10.0
FIRST_PAUSE = 0.05
LONGEST_PAUSE = 1.0


class ClusterUnreachable(ConnectionError):
    """No seed node answered, or the masters that did do not serve every slot.

    A ConnectionError (RedisClusterException is not even a RedisError) so that the bot treats it as
    it treats a single Redis refusing connections: storage temporarily unavailable."""


class PatientRedisCluster(RedisCluster):
    """RedisCluster whose commands (scripts included) pause and try again through an outage."""

    async def initialize(self, *args: Any, **kwargs: Any) -> RedisCluster:
        try:
            return await super().initialize(*args, **kwargs)
        except RedisClusterException as error:
            raise ClusterUnreachable(str(error)) from error

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        return await redis_budget.within(lambda: self._patiently(*args, **kwargs))

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> ClusterPipeline:
        if shard_hint:
            raise RedisClusterException("shard_hint is deprecated in cluster mode")
        return BoundedClusterPipeline(self, transaction)

    async def _patiently(self, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        give_up_at: float | None = None
        pause = FIRST_PAUSE
        while True:
            try:
                return await super().execute_command(*args, **kwargs)
            except (AuthenticationError, AuthorizationError):
                raise  # a wrong password does not get better by waiting
            except (ConnectionError, TimeoutError, ClusterDownError, SlotNotCoveredError):
                # ConnectionError includes BusyLoadingError (LOADING), MaxConnectionsError and
                # ClusterUnreachable.
                now = loop.time()
                if give_up_at is None:
                    give_up_at = now + OUTAGE_PATIENCE
                if now >= give_up_at:
                    raise
                await asyncio.sleep(min(pause, give_up_at - now))
                pause = min(pause * 2, LONGEST_PAUSE)


class BoundedClusterPipeline(ClusterPipeline):
    __slots__ = ()

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        return await redis_budget.within(lambda: super(BoundedClusterPipeline, self).execute(*args, **kwargs))


def connect_cluster(url: str, socket_timeout: float | None = None) -> PatientRedisCluster:
    """A client for the cluster a redis+cluster:// or rediss+cluster:// URL names (see tgbot.cluster_url);
    `socket_timeout`: how long a master that stops answering gets per command (the URL's own wins).

    Nothing is connected yet: the first command asks the seeds for the cluster's layout."""
    address = parse_cluster_url(url)
    settings: dict[str, Any] = dict(parse_url(address.node_url))
    del settings["host"], settings["port"]  # the seeds are the addresses
    settings.pop("db", None)
    if settings.pop("connection_class", None) is SSLConnection:
        settings["ssl"] = True
    timeouts = {"socket_timeout": socket_timeout, "socket_connect_timeout": socket_timeout}
    options = {"max_connections": MAX_CONNECTIONS_PER_NODE, **timeouts, **settings, "decode_responses": True}
    return PatientRedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in address.seeds],
        retry=Retry(CLUSTER_BACKOFF, CLUSTER_RETRIES),
        **options,
    )
