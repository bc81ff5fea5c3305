"""Real worker processes behind a webhook, sharing one Redis and one (fake) Telegram.

Each worker is `python -m tgbot` in webhook mode, as it runs in production: its own event loop, its
own Redis connections, the Redis rate limiter, the deadline clock. Telegram is a FakeTelegram served
over HTTP in the calling process (`tgbot.offline.fake_server`), so the caller both drives the world
(users press the buttons the bot really sent) and sees everything the bot said. Updates go to the
workers as Telegram delivers them: POSTs carrying the secret token.

Used by the end-to-end tests of several workers (tests/test_workers.py, tests/test_worker_crash.py)
and by benchmarks/webhook_burst.py.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx
from redis.asyncio import Redis

from engine import Phase
from engine import rules as game_rules
from tgbot import keys
from tgbot.offline.fake_server import FakeTelegramServer, post_update
from tgbot.offline.fake_telegram import FakeMessage, FakeTelegram
from tgbot.offline.simulation import NAMES, plain_text
from tgbot.ratelimit import QUESTIONS
from tgbot.store import Store
from tgbot.table import Table

REPO = Path(__file__).resolve().parents[2]
TOKEN = "1000:" + "A" * 35  # the bot id (1000) is FakeTelegram's
SECRET = "Wh-secret_0123456789abcd"  # 24 characters
WEBHOOK_URL = "https://bot.example.org/telegram"
PLAYERS = 5
STARTUP_SECONDS = 15
REVEAL = re.compile(r"(Approved|Rejected) (\d+)–(\d+)")


@dataclass
class Worker:
    name: str
    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/telegram"

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/healthz"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@dataclass
class Cluster:
    telegram: FakeTelegram
    server: FakeTelegramServer
    workers: list[Worker]
    redis: Redis
    http: httpx.AsyncClient
    store: Store = field(init=False)
    # Each POST's time to its answer, by what it carried: "command", "link", "toggle", "vote"...
    latencies: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.store = Store(self.redis)

    async def deliver(self, update: dict, worker: int, kind: str = "other") -> httpx.Response:
        """One update through one worker, as Telegram posts it; it must be accepted."""
        target = self.workers[worker % len(self.workers)]
        began = time.monotonic()
        response = await post_update(target.url, SECRET, update, client=self.http)
        self.latencies.setdefault(kind, []).append(time.monotonic() - began)
        assert response.status_code == 200, (target.name, response.status_code, response.text, target.log()[-3000:])
        return response

    async def table(self, game_id: str) -> Table:
        table = await self.store.load(game_id)
        assert table is not None, game_id
        return table

    async def settled(self, game_id: str, timeout: float = 120.0) -> None:
        """Wait until everything the game queued has reached the fake Telegram. Workers answer before
        they deliver, so this is where a game's messages are waited for behind the shared flood limits
        (with 50 games at once, up to half a minute): as long as a POST was once allowed to take."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = await self.redis.exists(keys.outbox_lock(game_id))
            if not busy and not await self.redis.llen(keys.outbox(game_id)):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"game {game_id}: the outbox did not drain in {timeout} s")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spawn_worker(
    name: str, telegram_url: str, redis_url: str, log_dir: Path, command: list[str] | None = None
) -> Worker:
    """A webhook worker, `python -m tgbot` unless `command` names another way to start one."""
    port = free_port()
    env = {
        "BOT_MODE": "webhook",
        "WEBHOOK_URL": WEBHOOK_URL,
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_LISTEN": "127.0.0.1",
        "WEBHOOK_PORT": str(port),
        "TELEGRAM_API_BASE_URL": telegram_url,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "INFO",
        "PATH": os.environ.get("PATH", ""),
    }
    log_path = log_dir / f"{name}.log"
    with log_path.open("wb") as log:  # a file, not a pipe: a full pipe would stall the worker
        process = subprocess.Popen(
            command or [sys.executable, "-m", "tgbot"], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
        )
    return Worker(name, port, process, log_path)


def stop_workers(workers: list[Worker]) -> None:
    for worker in workers:
        if worker.process.poll() is None:
            worker.process.terminate()
    for worker in workers:
        try:
            worker.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait(timeout=5)


async def wait_until_healthy(workers: list[Worker], http: httpx.AsyncClient) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    waiting = list(workers)
    while waiting:
        for worker in list(waiting):
            code = worker.process.poll()
            assert code is None, f"{worker.name} exited with {code} while starting:\n{worker.log()}"
            try:
                response = await http.get(worker.health_url, timeout=1.0)
            except httpx.TransportError:
                continue
            if response.status_code == 200:
                waiting.remove(worker)
        if waiting:
            assert time.monotonic() < deadline, "workers not answering /healthz:\n" + "\n".join(
                f"--- {w.name} ---\n{w.log()}" for w in waiting
            )
            await asyncio.sleep(0.1)


def worker_errors(worker: Worker) -> list[str]:
    """The lines of the worker's log that tell of an error."""
    return [
        line
        for line in worker.log().splitlines()
        if " ERROR " in line or "Traceback" in line or "storage unavailable" in line
    ]


# ---------------------------------------------------------------- driving one group


@dataclass
class Group:
    """One group chat and its players; its i-th update goes to worker (offset + i) % 2."""

    cluster: Cluster
    index: int
    chat_id: int = 0
    user_ids: list[int] = field(default_factory=list)
    game_id: str = ""
    sent: int = 0

    def __post_init__(self) -> None:
        self.chat_id = -(5000 + self.index)
        first = 100_000 + self.index * 10  # users are distinct across groups
        self.user_ids = [first + seat + 1 for seat in range(PLAYERS)]
        telegram = self.cluster.telegram
        telegram.add_group(self.chat_id, f"Group {self.index}", admins=[self.user_ids[0]])
        for user_id, name in zip(self.user_ids, NAMES, strict=False):
            telegram.add_user(user_id, f"{name}{self.index}")

    @property
    def telegram(self) -> FakeTelegram:
        return self.cluster.telegram

    async def send(self, update: dict, kind: str = "other") -> None:
        await self.cluster.deliver(update, self.index + self.sent, kind)
        self.sent += 1

    def latest_with_button(self, chat_id: int, prefix: str) -> FakeMessage:
        for message in reversed(self.telegram.messages(chat_id)):
            if any(b.get("callback_data", "").startswith(prefix) for b in message.buttons()):
                return message
        raise LookupError(f"no message in chat {chat_id} has a {prefix!r} button")

    def press(self, user_id: int, chat_id: int, prefix: str, ending: str) -> dict:
        message = self.latest_with_button(chat_id, prefix)
        data = next(
            b["callback_data"]
            for b in message.buttons()
            if b.get("callback_data", "").startswith(prefix) and b["callback_data"].endswith(ending)
        )
        return self.telegram.press(user_id, chat_id, message.message_id, data)

    async def open_join_start(self) -> None:
        host = self.user_ids[0]
        # The longest deadlines: on a busy machine, setting up fifty games could outlast a vote's
        # half-time, whose reminder edits the board (an edit these tests count) or even its deadline.
        await self.cluster.store.update_settings(
            self.chat_id,
            lambda settings: replace(settings, proposal_seconds=600, vote_seconds=300, mission_seconds=300),
        )
        await self.send(self.telegram.command(host, self.chat_id, "/newgame"), "command")
        self.game_id = await self.cluster.store.game_of_chat(self.chat_id)
        assert self.game_id, f"group {self.chat_id}: /newgame opened no lobby"
        await self.cluster.settled(self.game_id)
        lobby = next(m for m in self.telegram.messages(self.chat_id) if any("url" in b for b in m.buttons()))
        link = next(b["url"] for b in lobby.buttons() if "url" in b)
        for user_id in self.user_ids:
            await self.send(self.telegram.open_link(user_id, link), "link")
        table = await self.cluster.table(self.game_id)
        assert [p.user_id for p in table.players] == self.user_ids
        await self.send(self.telegram.command(host, self.chat_id, "/startgame"), "command")
        await self.cluster.settled(self.game_id)
        assert (await self.cluster.table(self.game_id)).game.phase is Phase.PROPOSING

    async def propose(self, rng: random.Random) -> tuple[int, ...]:
        """The leader ticks a team on their private keyboard and proposes it; returns the team's seats."""
        table = await self.cluster.table(self.game_id)
        game = table.game
        leader = game.leader
        size = game_rules.team_size(game.players, game.open_missions()[0])
        others = [seat for seat in range(PLAYERS) if seat != leader]
        team = tuple(sorted([leader, *rng.sample(others, size - 1)]))
        prefix = f"t:{self.game_id}:"
        user = self.user_ids[leader]
        for seat in sorted(set(team) ^ set(table.draft_team)):
            await self.send(self.press(user, user, prefix, f":{seat}"), "toggle")
            await self.cluster.settled(self.game_id)
        await self.send(self.press(user, user, prefix, ":ok"), "propose")
        await self.cluster.settled(self.game_id)
        after = (await self.cluster.table(self.game_id)).game
        assert after.phase is Phase.VOTING and after.current_round.team == team
        # The proposal is the group's one new message, with the vote buttons.
        board = self.latest_with_button(self.chat_id, f"v:{self.game_id}:")
        assert await self.cluster.store.message_of(self.game_id, "board:1") == (self.chat_id, board.message_id)
        return team

    def vote_update(self, seat: int, approve: bool) -> dict:
        user = self.user_ids[seat]
        return self.press(user, self.chat_id, f"v:{self.game_id}:", ":a" if approve else ":r")


# ---------------------------------------------------------------- what the bot did


def answers_of(telegram: FakeTelegram, update: dict) -> list[str | None]:
    """Every answerCallbackQuery the bot made for this press (accepted or not)."""
    query_id = update["callback_query"]["id"]
    return [
        params.get("text")
        for method, params in telegram.calls
        if method == "answerCallbackQuery" and str(params.get("callback_query_id")) == query_id
    ]


def group_message_calls(telegram: FakeTelegram, chat_id: int, start: int) -> list[str]:
    """The bot's message calls (sends and edits) in one chat, from call number `start` on. A call
    repeated exactly counts once: on a busy machine a request can time out after Telegram took it,
    and the outbox sends it again (an edit to the same text changes nothing)."""
    seen, methods = set(), []
    for method, params in telegram.calls[start:]:
        if (
            method in ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage")
            and int(params.get("chat_id", 0)) == chat_id
        ):
            call = (method, repr(sorted(params.items())))
            if method == "sendMessage" or call not in seen:
                methods.append(method)
            seen.add(call)
    return methods


def bot_texts(telegram: FakeTelegram, chat_id: int, start: int = 0) -> list[str]:
    """Every text the bot sent or edited into the chat from its Bot API call number `start` on."""
    return [
        plain_text(str(params.get("text", "")))
        for method, params in telegram.calls[start:]
        if method in ("sendMessage", "editMessageText") and int(params.get("chat_id", 0)) == chat_id
    ]


def card_prompts(telegram: FakeTelegram, user_id: int) -> int:
    return len(card_prompt_texts(telegram, user_id))


def card_prompt_texts(telegram: FakeTelegram, user_id: int) -> list[str]:
    return [
        str(params["text"])
        for method, params in telegram.calls
        if method == "sendMessage" and int(params["chat_id"]) == user_id and "Play your card" in str(params["text"])
    ]


def vote_lines(group: Group, votes: tuple[bool, ...]) -> str:
    """The votes as a team's card prompts show them: "👍 Ann3, Cy3\n👎 Bob3, …"."""
    approvers = [f"{NAMES[seat]}{group.index}" for seat, vote in enumerate(votes) if vote]
    rejecters = [f"{NAMES[seat]}{group.index}" for seat, vote in enumerate(votes) if not vote]
    return f"👍 {', '.join(approvers) or '—'}\n👎 {', '.join(rejecters) or '—'}"


# ---------------------------------------------------------------- games voting at the same moment


@dataclass
class VoteBurst:
    """Games set up at once, then every vote of every game's first proposal posted at the same moment."""

    groups: list[Group]
    teams: list[tuple[int, ...]]
    choices: list[dict[int, bool]]  # each game's votes, by seat
    before: list  # each game's state before the votes
    updates: list[tuple[Group, dict]]  # the votes, as posted
    calls_before: int  # the Bot API calls made before the votes
    started: float
    setup_done: float
    burst_done: float
    settled: float
    vote_latencies: list[float]


async def vote_burst(cluster: Cluster, games: int, first: int = 0) -> VoteBurst:
    """Groups `first`.. `first + games - 1` open, join, start and propose a team, all at once; then every
    player of every game votes at the same moment, alternately through each worker: from 0 to 5
    approvals (a game's index modulo 6), so some teams go on and some are rejected."""
    telegram = cluster.telegram
    started = time.monotonic()
    groups = [Group(cluster, index) for index in range(first, first + games)]
    rngs = [random.Random(group.index) for group in groups]

    async def prepare(group: Group, rng: random.Random) -> tuple[int, ...]:
        await group.open_join_start()
        return await group.propose(rng)

    teams = list(await asyncio.gather(*(prepare(g, r) for g, r in zip(groups, rngs, strict=True))))
    setup_done = time.monotonic()

    choices: list[dict[int, bool]] = []
    for group, rng in zip(groups, rngs, strict=True):
        approvers = set(rng.sample(range(PLAYERS), group.index % (PLAYERS + 1)))
        choices.append({seat: seat in approvers for seat in range(PLAYERS)})
    before = [(await cluster.table(g.game_id)).game for g in groups]
    assert all(game.pending_votes == (None,) * PLAYERS for game in before)

    updates = [
        (group, group.vote_update(seat, approve))
        for group, chosen in zip(groups, choices, strict=True)
        for seat, approve in chosen.items()
    ]
    calls_before = len(telegram.calls)

    async def post(i: int, update: dict) -> tuple[httpx.Response, float]:
        began = time.monotonic()
        response = await post_update(cluster.workers[i % len(cluster.workers)].url, SECRET, update, client=cluster.http)
        return response, time.monotonic() - began

    answered = await asyncio.gather(*(post(i, update) for i, (_, update) in enumerate(updates)))
    burst_done = time.monotonic()
    assert [r.status_code for r, _ in answered] == [200] * len(updates)
    await asyncio.gather(*(cluster.settled(g.game_id) for g in groups))
    return VoteBurst(
        groups,
        teams,
        choices,
        before,
        updates,
        calls_before,
        started,
        setup_done,
        burst_done,
        time.monotonic(),
        [seconds for _, seconds in answered],
    )


async def check_vote_burst(cluster: Cluster, burst: VoteBurst) -> dict[bool, int]:
    """Every vote counted once with the value pressed, each press answered once, the group told the
    votes once and nothing twice, the card prompts sent once each; returns how many teams were
    approved (True) and rejected (False). Raises AssertionError naming the game that breaks one."""
    telegram = cluster.telegram
    outcomes = {True: 0, False: 0}
    start = burst.calls_before
    for group, team, chosen, old in zip(burst.groups, burst.teams, burst.choices, burst.before, strict=True):
        game = (await cluster.table(group.game_id)).game
        proposal = game.rounds[0].proposals[0]
        yes = sum(chosen.values())
        approved = yes > PLAYERS - yes
        outcomes[approved] += 1
        where = f"group {group.chat_id} (game {group.game_id})"
        # Every vote counted exactly once, with the value pressed.
        assert proposal.votes == tuple(chosen[seat] for seat in range(PLAYERS)), where
        assert proposal.approved is approved, where
        assert game.version == old.version + PLAYERS, where
        if approved:
            assert game.phase is Phase.MISSION and game.current_round.team == team, where
            # An approved team's votes wait for its mission's result: the group's board was edited once,
            # closing the vote without them (no count either); the team's card prompts carry them
            # (checked below).
            assert group_message_calls(telegram, group.chat_id, start) == ["editMessageText"], where
            texts = bot_texts(telegram, group.chat_id, start)
            assert not any(REVEAL.search(text) for text in texts), (where, texts)
            assert texts[-1].endswith("waiting for the team's cards."), (where, texts)
        else:
            assert game.phase is Phase.PROPOSING and game.proposal_number == 2, where
            # The reveal reached the group exactly once, with the right count: the proposal's message
            # was edited once (no edit per vote), and nothing was sent to the group.
            assert group_message_calls(telegram, group.chat_id, start) == ["editMessageText"], where
            texts = bot_texts(telegram, group.chat_id, start)
            reveals = [m for text in texts for m in REVEAL.finditer(text)]
            assert len(reveals) == 1, (where, texts)
            word, shown_yes, shown_no = reveals[0].groups()
            assert (word, int(shown_yes), int(shown_no)) == ("Rejected", yes, PLAYERS - yes)
            # The next leader chooses in private: one keyboard, to them.
            next_leader = group.user_ids[game.leader]
            assert group.latest_with_button(next_leader, f"t:{group.game_id}:"), where
        # Each press answered once, telling the voter what counted.
        for seat in range(PLAYERS):
            update = next(
                u for g, u in burst.updates if g is group and u["callback_query"]["from"]["id"] == group.user_ids[seat]
            )
            answers = answers_of(telegram, update)
            assert len(answers) == 1, (where, seat, answers)
            expected = "You voted 👍 Approve" if chosen[seat] else "You voted 👎 Reject"
            assert (answers[0] or "").startswith(expected), (where, seat, answers)
        # A team that goes on: each member got one card prompt, with the votes, and nobody else any.
        for seat, user_id in enumerate(group.user_ids):
            prompts = card_prompt_texts(telegram, user_id)
            assert len(prompts) == (1 if approved and seat in team else 0), (where, seat)
            assert all(vote_lines(group, proposal.votes) in prompt for prompt in prompts), (where, seat, prompts)
        assert not await cluster.redis.llen(keys.outbox(group.game_id)), where
    return outcomes


def rate_limited_calls(cluster: Cluster) -> list[float]:
    """When each Bot API call the bot's flood limits count reached the fake Telegram (a question about a
    chat posts nothing and spends no budget)."""
    return [call.at for call in cluster.server.served if call.chat_id is not None and call.method not in QUESTIONS]
