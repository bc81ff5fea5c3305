"""Two real worker processes behind a webhook, sharing one Redis and one (fake) Telegram.

Each worker is `python -m tgbot` in webhook mode, as it runs in production: its own
event loop, its own Redis connections, the Redis rate limiter, the deadline clock. Telegram
is a FakeTelegram served over HTTP in this process (tgbot.offline.fake_server), so the test
both drives the world (users press the buttons the bot really sent) and sees everything the
bot said. Updates go to the workers as Telegram delivers them: POSTs carrying the secret token.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from redis.asyncio import Redis

from engine import Phase
from engine import rules as game_rules
from tests.bot_helpers import bot_texts
from tests.servers import free_port
from tgbot import keys
from tgbot.offline.fake_server import SECRET_HEADER, FakeTelegramServer, post_update
from tgbot.offline.fake_telegram import FakeMessage, FakeTelegram
from tgbot.offline.simulation import NAMES
from tgbot.ratelimit import QUESTIONS
from tgbot.store import Store
from tgbot.table import Table

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO = Path(__file__).resolve().parent.parent
TOKEN = "1000:" + "A" * 35  # the bot id (1000) is FakeTelegram's
SECRET = "Wh-secret_0123456789abcd"  # 24 characters
WEBHOOK_URL = "https://bot.example.org/telegram"
GAMES = 50
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

    def __post_init__(self) -> None:
        self.store = Store(self.redis)

    async def deliver(self, update: dict, worker: int) -> httpx.Response:
        """One update through one worker, as Telegram posts it; it must be accepted."""
        target = self.workers[worker % len(self.workers)]
        response = await post_update(target.url, SECRET, update, client=self.http)
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


def spawn_worker(name: str, telegram_url: str, redis_url: str, log_dir: Path) -> Worker:
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
            [sys.executable, "-m", "tgbot"], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
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


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(redis_url, tmp_path_factory):
    redis = Redis.from_url(redis_url, decode_responses=True)
    await redis.flushdb()  # includes the registration flag: this run's workers must register anew
    telegram = FakeTelegram(token=TOKEN)
    server = FakeTelegramServer(telegram)
    await server.start()
    log_dir = tmp_path_factory.mktemp("workers")
    # Idle connections are dropped well before uvicorn's 5 s keep-alive timeout: a connection the server
    # is closing just as a request goes out on it would fail that request (httpx.ReadError) on a busy machine.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=50, keepalive_expiry=1.0)
    http = httpx.AsyncClient(timeout=120.0, limits=limits)
    workers: list[Worker] = []
    try:
        for name in ("worker-a", "worker-b"):
            workers.append(spawn_worker(name, server.base_url, redis_url, log_dir))
        await wait_until_healthy(workers, http)
        yield Cluster(telegram, server, workers, redis, http)
        for worker in workers:
            assert worker.process.poll() is None, f"{worker.name} died:\n{worker.log()}"
            errors = [
                line
                for line in worker.log().splitlines()
                if " ERROR " in line or "Traceback" in line or "storage unavailable" in line
            ]
            assert not errors, f"{worker.name} logged errors:\n{worker.log()[-5000:]}"
    finally:
        stop_workers(workers)
        assert all(worker.process.poll() is not None for worker in workers)
        await http.aclose()
        await server.stop()
        await redis.flushdb()
        await redis.aclose()


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

    async def send(self, update: dict) -> None:
        await self.cluster.deliver(update, self.index + self.sent)
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
        await self.send(self.telegram.command(host, self.chat_id, "/newgame"))
        self.game_id = await self.cluster.store.game_of_chat(self.chat_id)
        assert self.game_id, f"group {self.chat_id}: /newgame opened no lobby"
        await self.cluster.settled(self.game_id)
        lobby = next(m for m in self.telegram.messages(self.chat_id) if any("url" in b for b in m.buttons()))
        link = next(b["url"] for b in lobby.buttons() if "url" in b)
        for user_id in self.user_ids:
            await self.send(self.telegram.open_link(user_id, link))
        table = await self.cluster.table(self.game_id)
        assert [p.user_id for p in table.players] == self.user_ids
        await self.send(self.telegram.command(host, self.chat_id, "/startgame"))
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
            await self.send(self.press(user, user, prefix, f":{seat}"))
            await self.cluster.settled(self.game_id)
        await self.send(self.press(user, user, prefix, ":ok"))
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
        if method in ("sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage") and int(
            params.get("chat_id", 0)
        ) == chat_id:
            call = (method, repr(sorted(params.items())))
            if method == "sendMessage" or call not in seen:
                methods.append(method)
            seen.add(call)
    return methods


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


# ---------------------------------------------------------------- the tests


async def test_both_workers_serve_and_exactly_one_registered_the_webhook(cluster: Cluster):
    for worker in cluster.workers:
        response = await cluster.http.get(worker.health_url)
        assert response.status_code == 200
        assert response.json() == {"status": "ok", "redis": "ok"}

    registrations = [params for method, params in cluster.telegram.calls if method == "setWebhook"]
    assert registrations == [
        {"url": WEBHOOK_URL, "secret_token": SECRET, "allowed_updates": ["message", "callback_query", "my_chat_member"]}
    ]
    assert sum("webhook registered" in worker.log() for worker in cluster.workers) == 1
    # Both workers came up fully: each asked who it is and set the command menu.
    methods = Counter(method for method, _ in cluster.telegram.calls)
    assert methods["getMe"] == 2
    assert set(cluster.telegram.commands) >= {None, "en"}


async def test_updates_without_the_secret_token_are_refused_and_change_nothing(cluster: Cluster):
    group = Group(cluster, GAMES + 1)
    update = cluster.telegram.command(group.user_ids[0], group.chat_id, "/newgame")
    calls_before = len(cluster.telegram.calls)
    refusals = [None, "", "wrong", SECRET[:-1], SECRET + "x", SECRET.lower()]
    for worker in cluster.workers:
        for secret in refusals:
            response = await post_update(worker.url, secret, update, client=cluster.http)
            assert response.status_code == 403, (worker.name, secret)
    assert cluster.telegram.calls[calls_before:] == []
    assert await cluster.store.game_of_chat(group.chat_id) is None
    assert not await cluster.redis.exists(keys.update_claim(update["update_id"]))  # not claimed, not spent

    # A body that is not an update, with the right token: refused as such, nothing claimed.
    for body in (b"not json", b"{}"):
        response = await cluster.http.post(cluster.workers[0].url, content=body, headers={SECRET_HEADER: SECRET})
        assert response.status_code == 400, body
    assert await cluster.redis.keys(f"{keys.PREFIX}update:*") == []

    # The very same update with the right token is then processed normally.
    await cluster.deliver(update, 1)
    game_id = await cluster.store.game_of_chat(group.chat_id)
    assert game_id is not None
    await cluster.settled(game_id)
    assert any("url" in b for m in cluster.telegram.messages(group.chat_id) for b in m.buttons())
    for worker in cluster.workers:
        response = await cluster.http.get(worker.health_url)
        assert (response.status_code, response.json()) == (200, {"status": "ok", "redis": "ok"})


async def test_fifty_games_vote_at_the_same_moment_through_two_workers(cluster: Cluster):
    telegram = cluster.telegram
    started = time.monotonic()
    groups = [Group(cluster, index) for index in range(GAMES)]
    rngs = [random.Random(index) for index in range(GAMES)]

    async def prepare(group: Group, rng: random.Random) -> tuple[int, ...]:
        await group.open_join_start()
        return await group.propose(rng)

    teams = await asyncio.gather(*(prepare(g, r) for g, r in zip(groups, rngs, strict=True)))
    setup_done = time.monotonic()

    # Every game's votes: from 0 to 5 approvals, so some teams go on and some are rejected.
    choices: list[dict[int, bool]] = []
    for group, rng in zip(groups, rngs, strict=True):
        approvers = set(rng.sample(range(PLAYERS), group.index % (PLAYERS + 1)))
        choices.append({seat: seat in approvers for seat in range(PLAYERS)})
    before = [(await cluster.table(g.game_id)).game for g in groups]
    assert all(game.pending_votes == (None,) * PLAYERS for game in before)

    burst = [
        (group, group.vote_update(seat, approve)) for group in groups for seat, approve in choices[group.index].items()
    ]
    calls_before = len(telegram.calls)
    responses = await asyncio.gather(
        *(
            post_update(cluster.workers[i % 2].url, SECRET, update, client=cluster.http)
            for i, (_, update) in enumerate(burst)
        )
    )
    burst_done = time.monotonic()
    assert [r.status_code for r in responses] == [200] * len(burst)
    await asyncio.gather(*(cluster.settled(g.game_id) for g in groups))

    outcomes = Counter()
    for group, team, chosen, old in zip(groups, teams, choices, before, strict=True):
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
        else:
            assert game.phase is Phase.PROPOSING and game.proposal_number == 2, where
        if approved:
            # An approved team's votes wait for its mission's result: nothing reached the group; the
            # team's card prompts carry them (checked below).
            assert group_message_calls(telegram, group.chat_id, calls_before) == [], where
        else:
            # The reveal reached the group exactly once, with the right count: the proposal's message
            # was edited once (no edit per vote), and nothing was sent to the group.
            assert group_message_calls(telegram, group.chat_id, calls_before) == ["editMessageText"], where
            reveals = [m for text in bot_texts(telegram, group.chat_id, calls_before) for m in REVEAL.finditer(text)]
            assert len(reveals) == 1, (where, bot_texts(telegram, group.chat_id, calls_before))
            word, shown_yes, shown_no = reveals[0].groups()
            assert (word, int(shown_yes), int(shown_no)) == ("Rejected", yes, PLAYERS - yes)
            # The next leader chooses in private: one keyboard, to them.
            next_leader = group.user_ids[game.leader]
            assert group.latest_with_button(next_leader, f"t:{group.game_id}:"), where
        # Each press answered once, telling the voter what counted.
        for seat in range(PLAYERS):
            update = next(
                u for g, u in burst if g is group and u["callback_query"]["from"]["id"] == group.user_ids[seat]
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
    assert outcomes[True] and outcomes[False], outcomes

    # Both workers really took part.
    assert all("stored (" in worker.log() for worker in cluster.workers)

    # The two workers together kept to the bot's budget of 30 calls a second (after a first
    # burst of 30): a lower bound on the time taken, not a speed target. (Questions about a chat post
    # nothing and spend no budget.)
    limited = [
        call.at for call in cluster.server.served if call.chat_id is not None and call.method not in QUESTIONS
    ]
    span = limited[-1] - limited[0]
    assert span >= (len(limited) - 30) / 30 - 0.5, f"{len(limited)} calls in {span:.1f} s"
    print(
        f"\n{GAMES} games set up in {setup_done - started:.1f} s, "
        f"{len(burst)} simultaneous votes handled in {burst_done - setup_done:.1f} s; "
        f"{len(limited)} rate-limited API calls in {span:.1f} s ({len(limited) / span:.1f}/s)"
    )


async def test_a_duplicate_delivery_is_processed_once(cluster: Cluster):
    telegram = cluster.telegram
    group = Group(cluster, GAMES + 2)
    await group.open_join_start()
    await group.propose(random.Random(7))
    game_id = group.game_id
    before = (await cluster.table(game_id)).game

    # One vote delivered to both workers at the same moment.
    update = group.vote_update(2, True)
    first = await asyncio.gather(*(post_update(w.url, SECRET, update, client=cluster.http) for w in cluster.workers))
    codes = sorted(r.status_code for r in first)
    print(f"\nthe same update through both workers at once: {codes}")
    # The loser waits for the winner to finish and then finds it done: no 503 for Telegram to retry.
    assert codes == [200, 200], codes
    # Telegram's redeliveries, to either worker, once it is done: accepted, not processed again.
    for worker in cluster.workers:
        response = await post_update(worker.url, SECRET, update, client=cluster.http)
        assert response.status_code == 200
    await cluster.settled(game_id)
    game = (await cluster.table(game_id)).game
    assert game.version == before.version + 1
    assert game.pending_votes == (None, None, True, None, None)
    answers = answers_of(telegram, update)
    assert len(answers) == 1 and (answers[0] or "").startswith("You voted 👍 Approve"), answers

    # The other four votes, each delivered twice at once (to both workers): eight POSTs together. They
    # reject the team, whose votes the group then sees at once.
    rest = [group.vote_update(seat, seat == 0) for seat in (0, 1, 3, 4)]
    posts = [post_update(w.url, SECRET, u, client=cluster.http) for u in rest for w in cluster.workers]
    calls_before = len(telegram.calls)
    responses = await asyncio.gather(*posts)
    assert [r.status_code for r in responses] == [200] * len(posts)
    for u in rest:  # a later redelivery, to either worker: done, not processed again
        for worker in cluster.workers:
            assert (await post_update(worker.url, SECRET, u, client=cluster.http)).status_code == 200
    await cluster.settled(game_id)
    game = (await cluster.table(game_id)).game
    assert game.version == before.version + PLAYERS
    assert game.rounds[0].proposals[0].votes == (True, False, True, False, False)
    assert all(len(answers_of(telegram, u)) == 1 for u in rest)
    assert group_message_calls(telegram, group.chat_id, calls_before) == ["editMessageText"]
    reveals = [text for text in bot_texts(telegram, group.chat_id, calls_before) if REVEAL.search(text)]
    assert len(reveals) == 1 and "Rejected 2–3" in reveals[0], reveals
    # The next leader's keyboard, once; no card prompt to anybody.
    leader_prompts = [
        params
        for method, params in telegram.calls[calls_before:]
        if method == "sendMessage" and "you are the leader" in str(params["text"])
    ]
    assert [int(p["chat_id"]) for p in leader_prompts] == [group.user_ids[game.leader]], leader_prompts
    assert all(card_prompts(telegram, user_id) == 0 for user_id in group.user_ids)
