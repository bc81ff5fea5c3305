"""Shared fixtures: a real Redis server (started here when none answers) and bots on a fake Bot API."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from redis import Redis as SyncRedis
from redis.asyncio import Redis

from tgbot.app import build_application, prepare
from tgbot.config import Settings
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.redis_client import connect

# A database of its own, so a developer's other data on the same server is never flushed.
TEST_DB = 13


def _answers(url: str) -> bool:
    try:
        return bool(SyncRedis.from_url(url, socket_connect_timeout=0.5).ping())
    except Exception:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url = os.environ.get("TEST_REDIS_URL", f"redis://127.0.0.1:6379/{TEST_DB}")
    if _answers(url):
        yield url
        return
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail(f"no Redis answers at {url} and redis-server is not installed (apt-get install redis-server)")
    port = _free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        process = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", data_dir],
            stdout=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/{TEST_DB}"
        for _ in range(100):
            if _answers(url):
                break
            time.sleep(0.05)
        try:
            yield url
        finally:
            process.terminate()
            process.wait(timeout=10)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url, decode_responses=True)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


@pytest.fixture
def telegram() -> FakeTelegram:
    return FakeTelegram()


@pytest.fixture
async def make_bot(telegram: FakeTelegram, redis_url: str):
    """Start bots (each as if a separate worker process) on the fake Bot API and the test Redis."""
    started = []

    async def start(seed: int = 0):
        import random

        settings = Settings(token=telegram.token, redis_url=redis_url, api_base_url=None, log_level="INFO")
        client = connect(redis_url)
        application = build_application(
            settings,
            client,
            request=telegram.request(),
            updates_request=telegram.request(),
            rate_limited=False,
            clock_seconds=0,
        )
        await application.initialize()
        await prepare(application)
        application.bot_data["service"].rng = random.Random(seed)
        started.append((application, client))
        return application

    yield start
    for application, client in started:
        await application.shutdown()
        await client.aclose()
