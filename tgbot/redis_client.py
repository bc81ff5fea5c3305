"""The Redis client every worker uses: a pool that waits for a free connection, and retries.

REDIS_URL may name one Redis (redis://, rediss://, unix://) or a Redis Cluster (redis+cluster://,
rediss+cluster://; see tgbot.cluster_url and tgbot.redis_cluster)."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError

from tgbot.cluster_url import is_cluster_url
from tgbot.redis_cluster import PatientRedisCluster, connect_cluster

# python-telegram-bot runs up to 256 updates at once; a pool that waits for a free
# connection makes a burst queue up instead of failing with "too many connections".
MAX_CONNECTIONS = 64
# A Redis that stops answering (frozen, or cut off by the network without the connection being
# closed) gets this long per command, and per connection attempt, before the command counts as
# failed and is retried like a refused connection: without it a command waits until TCP gives up,
# minutes later, and the failover handling never starts. No command of the bot takes near as long.
SOCKET_TIMEOUT = 5.0


def connect(url: str) -> Redis | PatientRedisCluster:
    """A client for `url`. A connection broken by a Redis restart is retried, not reported to a player."""
    if is_cluster_url(url):
        return connect_cluster(url, SOCKET_TIMEOUT)
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=20,
        socket_timeout=SOCKET_TIMEOUT,
        socket_connect_timeout=SOCKET_TIMEOUT,
        decode_responses=True,
        retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 3),
        retry_on_error=[ConnectionError, TimeoutError],
    )
    return Redis(connection_pool=pool)
