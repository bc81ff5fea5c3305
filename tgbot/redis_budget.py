"""How long one update may wait for Redis, all its commands together.

A press is answered by `answerCallbackQuery`, which Telegram refuses some 15 s after the press, and the
presser watches a spinner until then. A worker cut off from Redis (packets dropped: every command waits
out its socket timeout) or facing one that answers slowly would make them wait for each command of the
update in turn: its lease, the game's language, the clock's lookup, the game's script. So the webhook
gives each update `UPDATE_SECONDS` of Redis time (`spending`): every command and pipeline of the bot's
clients (`tgbot.redis_client`, `tgbot.redis_cluster`) that the update's own task runs counts against it,
and one that would take the update past it is given up on with a `BudgetSpent` (a redis-py
`TimeoutError`, as a socket timeout is), and so is every later one at once. The handlers then answer
that the game is temporarily unavailable.

Only Redis's time counts: an update that waits for Telegram (a flood limit, a slow Bot API) or for a
lease another worker holds keeps its budget for its commands. Tasks the update starts (its game's
messages sent in the background, its lease's renewals) are not bound by it; they have their own
patience (the client's socket timeouts, the cluster's `OUTAGE_PATIENCE`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from redis.exceptions import TimeoutError as RedisTimeoutError

T = TypeVar("T")

# An update's Redis time. Well inside Telegram's window for the press's answer (about 15 s), with the
# apology (one Bot API call) after it; long enough for a restarted cluster master's two seconds of
# CLUSTERDOWN (`tgbot.redis_cluster` waits them out) to reach the presser as a slower answer rather than
# as an apology.
UPDATE_SECONDS = 4.0


class BudgetSpent(RedisTimeoutError):
    """The update's Redis time is spent: the command was not sent, or was given up on."""


@dataclass
class _Budget:
    task: asyncio.Task | None  # only this task's commands count
    left: float
    running: bool = False  # a command is being timed (one that it runs itself is not timed twice)


_current: ContextVar[_Budget | None] = ContextVar("tgbot_redis_budget", default=None)


@contextlib.contextmanager
def spending(seconds: float) -> Iterator[None]:
    """Within the block, the current task's Redis commands may take `seconds` together."""
    token = _current.set(_Budget(asyncio.current_task(), seconds))
    try:
        yield
    finally:
        _current.reset(token)


def left() -> float | None:
    """The current task's Redis time left (None: no budget)."""
    budget = _current.get()
    if budget is None or budget.task is not asyncio.current_task():
        return None
    return budget.left


async def within(call: Callable[[], Awaitable[T]]) -> T:
    """`await call()`, a Redis command, within the current task's budget if it has one."""
    budget = _current.get()
    if budget is None or budget.running or budget.task is not asyncio.current_task():
        return await call()
    if budget.left <= 0:
        raise BudgetSpent("this update's time for Redis is spent")
    loop = asyncio.get_running_loop()
    started = loop.time()
    budget.running = True
    try:
        async with asyncio.timeout(budget.left) as scope:
            return await call()
    except TimeoutError:
        if scope.expired():
            raise BudgetSpent("this update's time for Redis is spent") from None
        raise
    finally:
        budget.running = False
        budget.left -= loop.time() - started
