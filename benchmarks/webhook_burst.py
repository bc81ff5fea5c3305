"""Games voting at the same moment through real webhook workers: how long the setup and the burst take.

    .venv/bin/python benchmarks/webhook_burst.py [--games 50] [--workers 2]
                                                 [--redis-url redis://127.0.0.1:6379/14]

`--workers` processes of `python -m tgbot` in webhook mode (the Redis rate limiter, the clock, as in
production) share one Redis and one fake Telegram served over HTTP in this process
(`tgbot.offline.workers`). `--games` groups of 5 players each open a lobby, join from its link, start
and propose a team, all at once, every update posted as Telegram posts it (alternately to each
worker). Then every player of every game votes at the same moment: from 0 to 5 approvals (a game's
index modulo 6), so some teams go on to their mission and some are rejected. What the bot does with
that is checked as tests/test_workers.py checks it with six games: every vote counted once, every
press answered once, the group told the votes once, each card prompt sent once.

Printed: how long the setup took and each kind of update's answer there (p50, p99, max), how long
the burst's POSTs took to be answered and the games' messages to go out, and the Bot API calls the
flood limits count (30 a second for the bot, 20 a minute per group) over the whole run. Telegram
here answers at once, so the setup is bound by those limits: a real Bot API adds its round trips.
The workers' own CPU time is read from /proc.

Uses Redis database 14 by default and flushes it at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from redis.asyncio import Redis

from tgbot.offline.fake_server import FakeTelegramServer
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.offline.workers import (
    TOKEN,
    Cluster,
    check_vote_burst,
    rate_limited_calls,
    spawn_worker,
    stop_workers,
    vote_burst,
    wait_until_healthy,
    worker_errors,
)

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/14"
KINDS = ("command", "link", "toggle", "propose")


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spread(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1e3:6.0f} ms, p99 {p99 * 1e3:6.0f} ms, max {ordered[-1] * 1e3:6.0f} ms"


async def run(args) -> None:
    redis = Redis.from_url(args.redis_url, decode_responses=True)
    await redis.flushdb()
    telegram = FakeTelegram(token=TOKEN)
    server = FakeTelegramServer(telegram)
    await server.start()
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=50, keepalive_expiry=1.0)
    http = httpx.AsyncClient(timeout=120.0, limits=limits)
    log_dir = Path(tempfile.mkdtemp(prefix="webhook-burst-"))
    workers = [spawn_worker(f"worker-{n}", server.base_url, args.redis_url, log_dir) for n in range(args.workers)]
    try:
        await wait_until_healthy(workers, http)
        cluster = Cluster(telegram, server, workers, redis, http)
        cpu_before = sum(cpu_seconds(worker.process.pid) for worker in workers)
        burst = await vote_burst(cluster, args.games)
        cpu = sum(cpu_seconds(worker.process.pid) for worker in workers) - cpu_before
        try:
            outcomes = await check_vote_burst(cluster, burst)
            checked = f"passed ({outcomes[True]} teams approved, {outcomes[False]} rejected)"
        except AssertionError as failed:
            checked = f"FAILED: {failed}"

        setup = sum(len(values) for kind, values in cluster.latencies.items())
        print(f"{args.games} games of 5 through {args.workers} workers")
        print(f"  setup: {setup} updates in {burst.setup_done - burst.started:.1f} s")
        for kind in KINDS:
            values = cluster.latencies.get(kind, [])
            if values:
                print(f"    {kind:<8} {len(values):5d} answered in {spread(values)}")
        print(
            f"  burst: {len(burst.updates)} votes at the same moment, all answered in "
            f"{burst.burst_done - burst.setup_done:.2f} s; {spread(burst.vote_latencies)}"
        )
        print(f"    the games' messages all out {burst.settled - burst.burst_done:.2f} s after the last answer")
        limited = rate_limited_calls(cluster)
        span = limited[-1] - limited[0]
        print(f"  Bot API calls the flood limits count: {len(limited)} in {span:.1f} s ({len(limited) / span:.1f}/s)")
        print(f"  CPU of the workers: {cpu:.1f} s ({cpu / (burst.settled - burst.started):.0%} of one core)")
        print(f"  checks: {checked}")
        for worker in workers:
            errors = worker_errors(worker)
            if errors:
                print(f"  warning: {worker.name} logged {len(errors)} error lines, e.g. {errors[:2]}")
    finally:
        stop_workers(workers)
        await http.aclose()
        await server.stop()
        await redis.flushdb()
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average {load_average()} before the run")
    began = time.monotonic()
    asyncio.run(run(args))
    print(f"{time.monotonic() - began:.1f} s in all; load average {load_average()} after the run")


if __name__ == "__main__":
    main()
