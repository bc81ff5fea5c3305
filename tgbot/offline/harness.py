"""A bot on the fake Bot API: the one way the demo, the tests and the benchmarks start one."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from redis.asyncio import Redis
from telegram.ext import Application

from tgbot.app import build_application, prepare
from tgbot.config import Settings
from tgbot.offline.fake_telegram import FakeTelegram


async def start_offline_bot(
    telegram: FakeTelegram,
    redis: Redis,
    seed: int | None = 0,
    *,
    rate_limited: bool = False,
    clock_seconds: float = 0,
    local_clock: Callable[[], float] = time.monotonic,
) -> Application:
    """An initialized Application talking to `telegram`, storing in `redis`, dealing from `seed`.

    By default the clock does not tick by itself: call `application.bot_data["service"].fire_due()`.
    With `clock_seconds`, it ticks as in production once `await application.start()` has started
    the job queue (then `await application.stop()` before shutting down).
    Shut it down with `await application.shutdown()`. `local_clock`: the worker's own clock, which
    only measures intervals: the time is Redis's (`tgbot.shared_clock`).
    """
    settings = Settings(token=telegram.token, redis_url=None, api_base_url=None, log_level="INFO")
    application = build_application(
        settings,
        redis,
        request=telegram.request(),
        updates_request=telegram.request(),
        rate_limited=rate_limited,
        clock_seconds=clock_seconds,
        local_clock=local_clock,
    )
    await application.initialize()
    await prepare(application)
    application.bot_data["service"].rng = random.Random(seed)
    return application
