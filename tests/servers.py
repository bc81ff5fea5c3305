"""Servers the tests run themselves: free ports and redis-server processes."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis as SyncRedis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str, timeout: float = 0.2) -> bool:
    try:
        return bool(SyncRedis.from_url(url, socket_connect_timeout=timeout).ping())
    except Exception:
        return False


class RedisServer:
    """A redis-server in its own directory, on a fixed port, that a test can kill and start again."""

    def __init__(self, directory: Path, *, appendonly: bool, db: int = 0) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            pytest.fail("redis-server is not installed (apt-get install redis-server); .ci/run installs it")
        self.executable = executable
        self.directory = directory
        self.appendonly = appendonly
        self.db = db
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/{self.db}"

    def start(self) -> None:
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly else ["--appendonly", "no"]
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory)]
            + ["--save", "", *persistence],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not answers(self.url):
            assert self.process.poll() is None, "redis-server exited at start"
            assert time.monotonic() < deadline, "redis-server did not answer"
            time.sleep(0.01)

    def kill(self) -> None:
        """SIGKILL: no chance to write anything more than it already has."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.kill()


def own_redis_url(directory: Path, db: int = 0) -> Iterator[str]:
    """A redis-server without persistence, for as long as the generator runs: the body of a fixture."""
    server = RedisServer(directory, appendonly=False, db=db)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()
