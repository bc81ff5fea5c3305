"""Every worker reads Redis's clock, through an offset it measures now and then (`tgbot.shared_clock`)."""

from __future__ import annotations

import logging
import time

from tgbot.shared_clock import SharedClock


async def redis_now(redis) -> float:
    seconds, micros = await redis.time()
    return seconds + micros / 1_000_000


async def test_the_time_is_redis_whatever_the_worker_clock_reads(redis):
    """A worker clock that counts from anywhere (here a day ahead of the epoch's time) gives Redis's time."""
    clock = SharedClock(redis, local=lambda: time.monotonic() + 86_400)
    await clock.sync()
    assert abs(clock() - await redis_now(redis)) < 0.1
    assert clock.error < 0.1


async def test_a_worker_that_stood_still_is_put_right_by_its_next_measure(redis, caplog):
    """A worker whose own clock stood still for five seconds (a virtual machine suspended) reads the time
    five seconds behind until it measures again; that measure puts it right, and says so in the log."""
    stood_still = [0.0]
    clock = SharedClock(redis, local=lambda: time.monotonic() - stood_still[0])
    await clock.sync()
    stood_still[0] = 5.0
    assert abs(clock() - (await redis_now(redis) - 5.0)) < 0.1
    with caplog.at_level(logging.WARNING):
        moved = await clock.sync()
    assert abs(moved - 5.0) < 0.1
    assert abs(clock() - await redis_now(redis)) < 0.1
    assert any("the shared clock moved by +5.0 s" in record.getMessage() for record in caplog.records)
