"""Servers the tests run themselves: free ports, redis-server processes, a Redis Cluster of three, and a
network between the bot and Redis that a test can cut."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
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

    def __init__(self, directory: Path, *, appendonly: bool, db: int = 0, options: Sequence[str] = ()) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            pytest.fail("redis-server is not installed (apt-get install redis-server); .ci/run installs it")
        self.executable = executable
        self.directory = directory
        self.appendonly = appendonly
        self.db = db
        self.options = list(options)  # more redis-server arguments, e.g. to enable cluster mode
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/{self.db}"

    def start(self) -> None:
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly else ["--appendonly", "no"]
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory)]
            + ["--save", "", *persistence, *self.options],
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


# ---------------------------------------------------------------- a Redis Cluster of three masters

# How long a master may be silent before the others call it failing. Short, so a test that stops
# one notices quickly; a restart in the tests takes far less, so no node is ever declared failed.
CLUSTER_NODE_TIMEOUT_MS = 2000


class RedisClusterServers:
    """Three redis-server processes made one Redis Cluster: three masters, no replicas, each in its
    own directory with an append-only file fsynced before every answer.

    `restart_master(i)` kills one with SIGKILL and starts it again on the same port and directory, so
    it reloads its data from the append-only file and its place in the cluster from nodes.conf."""

    def __init__(self, directory: Path, masters: int = 3) -> None:
        cli = shutil.which("redis-cli")
        if cli is None:
            pytest.skip("redis-cli is not installed (apt-get install redis-tools): no Redis Cluster can be created")
        self.cli = cli
        self.nodes: list[RedisServer] = []
        for number in range(masters):
            node_directory = directory / f"node{number}"
            node_directory.mkdir()
            cluster_options = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            cluster_options += ["--cluster-node-timeout", str(CLUSTER_NODE_TIMEOUT_MS)]
            # The bus port is chosen too: the default, port + 10000, may be taken or past 65535.
            cluster_options += ["--cluster-port", str(free_port())]
            self.nodes.append(RedisServer(node_directory, appendonly=True, options=cluster_options))

    @property
    def url(self) -> str:
        """Every node as a seed, so a client can find the cluster whichever node is down."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        created = subprocess.run(
            [self.cli, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert created.returncode == 0, f"redis-cli --cluster create failed:\n{created.stdout}{created.stderr}"
        self.wait_until_ok()

    def wait_until_ok(self, timeout: float = 30) -> None:
        """Until every node says cluster_state:ok: every slot is served and the node takes commands."""
        deadline = time.monotonic() + timeout
        while not all(self._state(node) == "ok" for node in self.nodes):
            assert time.monotonic() < deadline, "the cluster did not reach cluster_state:ok"
            time.sleep(0.05)

    @staticmethod
    def _state(node: RedisServer) -> str | None:
        try:
            with SyncRedis(port=node.port, socket_timeout=1, decode_responses=True) as client:
                return client.execute_command("CLUSTER INFO").get("cluster_state")
        except Exception:
            return None

    def master_of(self, key: str) -> int:
        """The index (into `nodes`) of the master serving `key`'s slot."""
        with SyncRedis(port=self.nodes[0].port, decode_responses=True) as client:
            slot = client.execute_command("CLUSTER KEYSLOT", key)
            for first, last, (_host, port, *_), *_replicas in client.execute_command("CLUSTER SLOTS"):
                if first <= slot <= last:
                    return next(i for i, node in enumerate(self.nodes) if node.port == port)
        raise AssertionError(f"no master serves the slot of {key!r}")

    def restart_master(self, index: int) -> None:
        """SIGKILL one master, start it again from its files, and wait until the whole cluster is ok."""
        self.kill_master(index)
        self.start_master(index)

    def kill_master(self, index: int) -> None:
        """SIGKILL: the master writes nothing more than its append-only file already holds."""
        self.nodes[index].kill()

    def start_master(self, index: int) -> None:
        """Start a killed master again on its port and directory; wait until the whole cluster is ok
        (a restarted master serves its slots only two seconds after it is back)."""
        self.nodes[index].start()
        self.wait_until_ok()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


# ---------------------------------------------------------------- a network that can be cut


class CutOffProxy:
    """A TCP proxy on loopback in front of a Redis, in the test's event loop. `cut()` stands for a network
    that drops packets: nothing goes through any more, either way, and a connection made meanwhile is
    accepted (by the kernel, as a half-working network may) but never served. Nothing is refused or
    closed, so every command waits out its timeouts, as it does for a worker cut off from Redis (unlike a
    stopped Redis, which refuses connections). `restore()` lets the traffic through again."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.cut_off = False
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._pipes: set[asyncio.Task] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> CutOffProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def cut(self) -> None:
        self.cut_off = True

    def restore(self) -> None:
        self.cut_off = False

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        while self.cut_off:  # accepted, never served while the network is cut
            await asyncio.sleep(0.05)
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers.append(upstream_writer)
        for source, sink in ((reader, upstream_writer), (upstream_reader, writer)):
            task = asyncio.create_task(self._pipe(source, sink))
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await source.read(65536):
                while self.cut_off:  # held, as a dropped packet is, until the network is back
                    await asyncio.sleep(0.05)
                sink.write(data)
                await sink.drain()

    async def close(self) -> None:
        for task in list(self._pipes):
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        for writer in self._writers:
            writer.close()
        if self._server is not None:
            self._server.close()
