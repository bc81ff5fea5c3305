"""The Redis client every worker uses: a pool that waits for a free connection, and retries."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError

# python-telegram-bot runs up to 256 updates at once; a pool that waits for a free
# connection makes a burst queue up instead of failing with "too many connections".
MAX_CONNECTIONS = 64


def connect(url: str) -> Redis:
    """A client for `url`. A connection broken by a Redis restart is retried, not reported to a player."""
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=20,
        decode_responses=True,
        retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 3),
        retry_on_error=[ConnectionError, TimeoutError],
    )
    return Redis(connection_pool=pool)
