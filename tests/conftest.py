"""Shared fixtures: a real Redis server (started here when none answers) and bots on a fake Bot API."""

from __future__ import annotations

import functools
import logging
import os
import shutil
from collections.abc import AsyncIterator, Iterator

import pytest
from redis.asyncio import Redis

from tests.bot_helpers import Bots
from tests.servers import RedisServer, answers, own_redis_url
from tests.timings import Timings, shorten
from tgbot.offline.fake_telegram import FakeTelegram

# A database of its own, so a developer's other data on the same server is never flushed.
TEST_DB = 13


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory) -> Iterator[str]:
    url = os.environ.get("TEST_REDIS_URL", f"redis://127.0.0.1:6379/{TEST_DB}")
    if answers(url, timeout=0.5):
        yield url
        return
    if shutil.which("redis-server") is None:
        pytest.fail(f"no Redis answers at {url} and redis-server is not installed (apt-get install redis-server)")
    yield from own_redis_url(tmp_path_factory.mktemp("redis"), db=TEST_DB)


@pytest.fixture
def aof_server(tmp_path):
    """A server of the test's own that keeps every write in its append-only file, fsynced before it
    answers, so a test can kill it and start it again."""
    server = RedisServer(tmp_path, appendonly=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url, decode_responses=True)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


@pytest.fixture
def no_handler_errors(redis, caplog):
    """A clean Redis database for every test, and no update may fail inside the bot.

    Modules of end-to-end tests use it with `pytestmark = pytest.mark.usefixtures("no_handler_errors")`."""
    caplog.set_level(logging.INFO)
    yield
    # In teardown `caplog.records` holds only teardown's records: read what the test itself logged.
    failures = [
        record.getMessage()
        for when in ("setup", "call")
        for record in caplog.get_records(when)
        if record.levelno >= logging.ERROR
    ]
    assert not failures, failures


@pytest.fixture
def short_timings() -> Iterator[Timings]:
    """The outbox's lock and retries, the pending outboxes' grace, the webhook's leases... made short for
    a test that waits them out (tests/timings.py); yields them, for the test's own waits and bounds.
    (A patch of its own, which a test's `monkeypatch.undo()` leaves in place.)"""
    with pytest.MonkeyPatch.context() as patch:
        yield shorten(set_value=patch.setattr)


@pytest.fixture
def telegram() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
async def make_bot(telegram: FakeTelegram, redis_url: str):
    """Start bots (each as if a separate worker process) on the fake Bot API and the test Redis.

    `await make_bot(seed)` returns the started Application; all of them are shut down after the test."""
    bots = Bots(telegram)
    yield functools.partial(bots.start, redis_url)
    await bots.close()
