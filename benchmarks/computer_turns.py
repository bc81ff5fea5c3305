"""How long computer players take in a game played through real webhook workers on a fake Telegram.

    .venv/bin/python benchmarks/computer_turns.py [--people 2] [--computers 3] [--workers 1] [--games 2]
                                                 [--human-delay 0 3] [--redis-url redis://127.0.0.1:6379/8]

`--workers` processes of `python -m tgbot` in webhook mode (its clock, the Redis rate limiter, as in
production) share one Redis and one fake Telegram served over HTTP in this process
(`tgbot.offline.workers`). In each game `--people` people and `--computers` computer players play to
the end; a person votes or plays a card 0-3 s after the decision opens (`--human-delay`). Measured, in
real time:

- a vote: from the answer to the last person's vote to the moment every vote is stored (the vote
  revealed), and to the moment the fake Telegram receives the board that shows the result (the group's
  flood limit, 20 messages a minute, may hold that edit back);
- a mission: the same from the last person's card, where computer players are on the team;
- a computer leader: from the moment the game waits for its team to the team stored.

Uses the Redis database of `--redis-url` and flushes it at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import httpx
from redis.asyncio import Redis

from engine import Phase, public_view
from engine import rules as game_rules
from tgbot.offline.fake_server import FakeTelegramServer
from tgbot.offline.fake_telegram import POSTING, FakeTelegram
from tgbot.offline.simulation import NAMES, plain_text
from tgbot.offline.workers import TOKEN, Cluster, spawn_worker, stop_workers, wait_until_healthy, worker_errors
from tgbot.table import Table

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/8"
POLL = 0.01
REVEALED = re.compile(r"(Approved|Rejected) \d+–\d+")


class Game:
    def __init__(
        self, cluster: Cluster, index: int, people: int, computers: int, rng: random.Random, human_delay: list[float]
    ) -> None:
        self.cluster, self.rng, self.human_delay = cluster, rng, human_delay
        self.chat_id = -(7000 + index)
        self.user_ids = [300_000 + index * 10 + n + 1 for n in range(people)]
        self.computers = computers
        self.game_id = ""
        self.sent = 0
        telegram = cluster.telegram
        telegram.add_group(self.chat_id, f"Group {index}", admins=[self.user_ids[0]])
        for user_id, name in zip(self.user_ids, NAMES, strict=False):
            telegram.add_user(user_id, f"{name}{index}")
        self.votes: list[tuple[float, float | None]] = []  # (stored, seen) after the last person's vote
        self.missions: list[float] = []
        self.leaders: list[float] = []
        self.seen_tasks: list[asyncio.Task] = []

    async def send(self, update: dict) -> None:
        await self.cluster.deliver(update, self.sent)
        self.sent += 1

    async def table(self) -> Table:
        return await self.cluster.table(self.game_id)

    async def press(self, user_id: int, chat_id: int, prefix: str, ending: str, timeout: float = 90.0) -> dict:
        """The button's press, once the bot's message with it has arrived (the group's flood limit may hold it):
        `prefix` names the decision's ballot, so that a board still waiting for its edit is not pressed."""
        telegram = self.cluster.telegram
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in reversed(telegram.messages(chat_id)):
                for button in message.buttons():
                    data = button.get("callback_data", "")
                    if data.startswith(prefix) and data.endswith(ending):
                        return telegram.press(user_id, chat_id, message.message_id, data)
            await asyncio.sleep(POLL)
        raise LookupError(f"no {prefix}…{ending} button in chat {chat_id}")

    async def until(self, done: Callable[[Table], bool], timeout: float = 60.0) -> Table:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            table = await self.table()
            if done(table):
                return table
            await asyncio.sleep(POLL)
        raise AssertionError(f"game {self.game_id}: nothing happened in {timeout} s")

    def reveals(self) -> int:
        return sum(
            len(REVEALED.findall(plain_text(m.text or "")))
            for m in self.cluster.telegram.messages(self.chat_id)
            if m.from_bot
        )

    async def seen(self, before: int, last: float, stored: float) -> None:
        """When the board showing the vote's result reached the fake Telegram."""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and self.reveals() <= before:
            await asyncio.sleep(POLL)
        self.votes.append((stored, time.monotonic() - last if self.reveals() > before else None))

    async def open(self) -> None:
        host = self.user_ids[0]
        telegram = self.cluster.telegram
        await self.cluster.store.update_settings(
            self.chat_id, lambda s: replace(s, proposal_seconds=600, vote_seconds=300, mission_seconds=300)
        )
        await self.send(telegram.command(host, self.chat_id, "/newgame"))
        self.game_id = await self.cluster.store.game_of_chat(self.chat_id)
        await self.cluster.settled(self.game_id)
        lobby = next(m for m in telegram.messages(self.chat_id) if any("url" in b for b in m.buttons()))
        link = next(b["url"] for b in lobby.buttons() if "url" in b)
        for user_id in self.user_ids:
            await self.send(telegram.open_link(user_id, link))
        for _ in range(self.computers):
            await self.send(telegram.command(host, self.chat_id, "/addbot"))
        await self.send(telegram.command(host, self.chat_id, "/startgame"))
        await self.cluster.settled(self.game_id)

    async def people_act(self, table: Table, seats: list[int], act: Callable[[int], Awaitable[dict]]) -> float:
        """Each person acts 0-3 s from now; returns when the last one's press was answered."""
        waits = sorted((self.rng.uniform(*self.human_delay), seat) for seat in seats)
        began = time.monotonic()
        for wait, seat in waits:
            await asyncio.sleep(max(0.0, began + wait - time.monotonic()))
            await self.send(await act(seat))
        return time.monotonic()

    async def play(self) -> None:
        while True:
            table = await self.table()
            game = table.game
            if game is None or not table.is_active:
                return
            ballot = public_view(game).ballot
            waiting = list(public_view(game).waiting_for)
            people = [s for s in waiting if not table.played_by_computer(s)]
            def moved(t, ballot=ballot):
                return not t.is_active or public_view(t.game).ballot != ballot

            if game.phase is Phase.PROPOSING and not people:
                began = time.monotonic()
                await self.until(moved)
                self.leaders.append(time.monotonic() - began)
            elif game.phase is Phase.PROPOSING:
                user = table.players[game.leader].user_id
                size = game_rules.team_size(game.players, game.open_missions()[0])
                others = [s for s in range(len(table.players)) if s != game.leader]
                team = {game.leader, *self.rng.sample(others, size - 1)}
                for seat in sorted(team ^ set(table.draft_team)):
                    await self.send(await self.press(user, user, f"t:{self.game_id}:{ballot}:", f":{seat}"))
                await self.send(await self.press(user, user, f"t:{self.game_id}:{ballot}:", ":ok"))
            elif game.phase is Phase.VOTING:
                seen_before = self.reveals()

                async def vote(seat: int, table: Table = table, ballot: int = ballot) -> dict:
                    user = table.players[seat].user_id
                    choice = ":a" if self.rng.random() < 0.6 else ":r"
                    return await self.press(user, self.chat_id, f"v:{self.game_id}:{ballot}:", choice)

                last = await self.people_act(table, people, vote)
                await self.until(moved)
                stored = time.monotonic() - last
                self.seen_tasks.append(asyncio.create_task(self.seen(seen_before, last, stored)))
            elif game.phase is Phase.MISSION:
                computers_on_team = any(table.played_by_computer(s) for s in waiting)

                async def card(seat: int, table: Table = table, ballot: int = ballot) -> dict:
                    user = table.players[seat].user_id
                    fail = seat in table.game.spies and self.rng.random() < 0.5
                    return await self.press(user, user, f"c:{self.game_id}:{ballot}:", ":f" if fail else ":s")

                last = await self.people_act(table, people, card)
                await self.until(moved)
                if computers_on_team:
                    self.missions.append(time.monotonic() - last)
            else:
                await asyncio.sleep(POLL)


def spread(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    return (
        f"{len(ordered):3d}: median {statistics.median(ordered):5.2f} s, "
        f"p90 {ordered[round(0.9 * (len(ordered) - 1))]:5.2f} s, max {ordered[-1]:5.2f} s"
    )


async def run(args) -> None:
    redis = Redis.from_url(args.redis_url, decode_responses=True)
    await redis.flushdb()
    telegram = FakeTelegram(token=TOKEN)
    server = FakeTelegramServer(telegram)
    await server.start()
    http = httpx.AsyncClient(timeout=120.0)
    log_dir = Path(tempfile.mkdtemp(prefix="computer-turns-"))
    workers = [spawn_worker(f"worker-{n}", server.base_url, args.redis_url, log_dir) for n in range(args.workers)]
    try:
        await wait_until_healthy(workers, http)
        cluster = Cluster(telegram, server, workers, redis, http)
        people, computers, delay = args.people, args.computers, args.human_delay
        games = [Game(cluster, n, people, computers, random.Random(args.seed + n), delay) for n in range(args.games)]
        for game in games:
            await game.open()
        await asyncio.gather(*(game.play() for game in games))
        await asyncio.gather(*(task for game in games for task in game.seen_tasks))
        votes = [v for game in games for v in game.votes]
        missions = [m for g in games for m in g.missions]
        leaders = [v for g in games for v in g.leaders]
        print(
            f"{args.games} games of {args.people} people (acting {args.human_delay[0]:g}-{args.human_delay[1]:g} s "
            f"into a decision) and {args.computers} computers, {args.workers} workers"
        )
        print(f"  votes: all stored, after the last person's vote      {spread([s for s, _ in votes])}")
        print(f"  votes: the result on the board, after the same        {spread([s for _, s in votes if s])}")
        print(f"  missions: all cards stored, after the last person's   {spread(missions)}")
        print(f"  computer leaders: the team stored, after it was due   {spread(leaders)}")
        posted = [
            sum(1 for _, method, chat in telegram.timeline if chat == game.chat_id and method in POSTING)
            for game in games
        ]
        print(f"  group messages (sends, edits, deletions) per game: {posted}; per vote {sum(posted) / len(votes):.1f}")
        busiest = max(telegram.most_in_window(game.chat_id, 61.0) for game in games)
        print(f"  the busiest 61 s of a group held {busiest} of them: the flood limit lets 20 through a minute")
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
    parser.add_argument("--people", type=int, default=2)
    parser.add_argument("--computers", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--human-delay", type=float, nargs=2, default=[0.0, 3.0], metavar=("FROM", "TO"))
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
