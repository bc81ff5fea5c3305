"""Three real webhook workers behind a load balancer, and a Telegram that redelivers.

Telegram posts each update until a worker answers it with 2xx, waiting longer after each failure,
and gives up after a few tries; it sends a user's next update only once the previous one was
answered (or given up). Here that Telegram is `Redelivering`, the load balancer is `Balancer`, and
the workers are `python -m tgbot` processes in webhook mode (tgbot.offline.workers), one of
which is killed with SIGKILL in the middle of a burst of presses. Also: a worker stopped with
SIGTERM still delivers what it already answered, and a body too large for any update is refused
by a real worker without being read. The workers run with the short timings (tests/timings.py):
an update's lease lasts 1.5 s, not 5 s, and a drain's outbox lock 0.5 s, not 2 s.
"""

from __future__ import annotations

import asyncio
import random
import signal
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx
import pytest
import pytest_asyncio
from redis.asyncio import Redis

from engine import Phase
from tests.timings import SHORT, WORKER_COMMAND
from tgbot import keys, webhook
from tgbot.app import CLOCK_SECONDS
from tgbot.offline.fake_server import FakeTelegramServer, post_update
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.offline.workers import (
    PLAYERS,
    SECRET,
    TOKEN,
    Cluster,
    Group,
    Worker,
    spawn_worker,
    stop_workers,
    vote_lines,
    wait_until_healthy,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

BACKOFF = (0.5, 1.0, 2.0, 4.0)  # Telegram's waits between tries of one update; after the fifth it gives up
TRIES = len(BACKOFF) + 1
ANSWER_SECONDS = 0.25  # how long the Bot API takes to answer a press: the press is in flight meanwhile
TOGGLE_GAMES = 6
VOTE_GAMES = 6


@pytest_asyncio.fixture(loop_scope="module")
async def cluster(redis_url, tmp_path_factory):
    """Three workers on one Redis and one fake Telegram; a test may kill or stop some of them."""
    redis = Redis.from_url(redis_url, decode_responses=True)
    await redis.flushdb()
    telegram = FakeTelegram(token=TOKEN)
    server = FakeTelegramServer(telegram)
    await server.start()
    log_dir = tmp_path_factory.mktemp("crash")
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=50, keepalive_expiry=1.0)
    http = httpx.AsyncClient(timeout=60.0, limits=limits)
    workers = [
        spawn_worker(f"worker-{name}", server.base_url, redis_url, log_dir, command=WORKER_COMMAND) for name in "abc"
    ]
    try:
        await wait_until_healthy(workers, http)
        yield Cluster(telegram, server, workers, redis, http)
        for worker in workers:
            if worker.process.returncode in (-signal.SIGKILL, -signal.SIGTERM, 0):
                continue  # the test ended it
            errors = [line for line in worker.log().splitlines() if " ERROR " in line or "Traceback" in line]
            assert not errors, f"{worker.name} logged errors:\n{worker.log()[-5000:]}"
    finally:
        stop_workers(workers)
        await http.aclose()
        await server.stop()
        await redis.flushdb()
        await redis.aclose()


# ---------------------------------------------------------------- Telegram and the load balancer


@dataclass
class Try:
    worker: str
    started: float
    ended: float
    outcome: int | str  # the HTTP status, or what broke the request


@dataclass
class Delivery:
    update: dict
    tries: list[Try] = field(default_factory=list)
    answered: float | None = None  # when a worker answered 2xx; None: Telegram gave up

    @property
    def update_id(self) -> int:
        return self.update["update_id"]


class Balancer:
    """Round robin over the workers; a worker whose connection broke is taken out (as a proxy's
    passive health check does), and that request fails (502 to Telegram)."""

    def __init__(self, workers: list[Worker], http: httpx.AsyncClient) -> None:
        self.workers = workers
        self.http = http
        self.down: set[str] = set()
        self.in_flight: Counter[str] = Counter()
        self._next = 0

    def pick(self) -> Worker:
        for _ in range(len(self.workers)):
            worker = self.workers[self._next % len(self.workers)]
            self._next += 1
            if worker.name not in self.down:
                return worker
        raise AssertionError("no worker left")

    async def post(self, update: dict) -> tuple[Worker, int | str]:
        worker = self.pick()
        self.in_flight[worker.name] += 1
        try:
            response = await post_update(worker.url, SECRET, update, client=self.http, timeout=30.0)
            return worker, response.status_code
        except httpx.TransportError as error:
            self.down.add(worker.name)
            return worker, type(error).__name__
        finally:
            self.in_flight[worker.name] -= 1


class Redelivering:
    """Telegram's side: each update tried until answered 2xx, with backoff, at most TRIES times;
    a user's updates one after another."""

    def __init__(self, balancer: Balancer) -> None:
        self.balancer = balancer
        self.deliveries: list[Delivery] = []

    async def deliver(self, update: dict) -> Delivery:
        delivery = Delivery(update)
        self.deliveries.append(delivery)
        for attempt in range(TRIES):
            if attempt:
                await asyncio.sleep(BACKOFF[attempt - 1])
            started = time.monotonic()
            worker, outcome = await self.balancer.post(update)
            delivery.tries.append(Try(worker.name, started, time.monotonic(), outcome))
            if outcome == 200:
                delivery.answered = time.monotonic()
                return delivery
        return delivery

    async def user(self, updates: list[dict]) -> None:
        for update in updates:
            await self.deliver(update)


# ---------------------------------------------------------------- the tests


def toggles(group: Group, leader_seat: int, team: tuple[int, int]) -> list[dict]:
    """The leader's presses: tick a seat not in the team, tick the team, untick the other, propose.
    A press applied twice would leave the wrong seats ticked (and the proposal refused)."""
    other = next(seat for seat in range(PLAYERS) if seat not in team)
    user = group.user_ids[leader_seat]
    prefix = f"t:{group.game_id}:"
    return [group.press(user, user, prefix, f":{seat}") for seat in (other, *team, other)] + [
        group.press(user, user, prefix, ":ok")
    ]


async def test_a_worker_killed_during_a_burst_loses_no_press_and_holds_none_up(cluster: Cluster):
    telegram, redis = cluster.telegram, cluster.redis
    groups = [Group(cluster, index) for index in range(TOGGLE_GAMES + VOTE_GAMES)]
    await asyncio.gather(*(group.open_join_start() for group in groups))
    toggle_groups, vote_groups = groups[:TOGGLE_GAMES], groups[TOGGLE_GAMES:]
    await asyncio.gather(*(group.propose(random.Random(group.index)) for group in vote_groups))
    before = {group.game_id: (await cluster.table(group.game_id)).game for group in groups}

    # What each user presses, in order: leaders tick a team; voters ask who is awaited, then vote.
    sequences: list[list[dict]] = []
    expected_team: dict[str, tuple[int, ...]] = {}
    expected_votes: dict[str, tuple[bool, ...]] = {}
    for group in toggle_groups:
        leader = before[group.game_id].leader
        team = tuple(sorted((leader, (leader + 1) % PLAYERS)))
        expected_team[group.game_id] = team
        sequences.append(toggles(group, leader, team))
    for group in vote_groups:
        # Half the teams are approved 4–1, half rejected 1–4 (a rejected team's votes are shown at once).
        approve = group.index % 2 == 0
        votes = tuple((seat != group.index % PLAYERS) is approve for seat in range(PLAYERS))
        expected_votes[group.game_id] = votes
        for seat in range(PLAYERS):
            user = group.user_ids[seat]
            waiting = group.press(user, group.chat_id, f"w:{group.game_id}", f"w:{group.game_id}")
            sequences.append([waiting, group.vote_update(seat, votes[seat])])
    presses = sum(len(s) for s in sequences)

    telegram.delays["answercallbackquery"] = ANSWER_SECONDS
    balancer = Balancer(cluster.workers, cluster.http)
    sim = Redelivering(balancer)
    victim = cluster.workers[0]

    async def kill_mid_burst() -> float:
        deadline = time.monotonic() + 10
        while balancer.in_flight[victim.name] < 3:
            assert time.monotonic() < deadline, "the victim never had presses in flight"
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.1)  # they are claimed and (most) stored by now, and being answered
        victim.process.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        victim.process.wait(timeout=10)
        return killed

    started = time.monotonic()
    killed, *_ = await asyncio.gather(kill_mid_burst(), *(sim.user(s) for s in sequences))
    burst_done = time.monotonic()
    telegram.delays.clear()

    deliveries = sim.deliveries
    assert len(deliveries) == presses
    lost = [(d.update_id, d.tries) for d in deliveries if d.answered is None]
    assert not lost, f"Telegram gave up on {len(lost)} presses: {lost}"
    # The presses the killed worker had: their try there broke, a later try on another worker was answered.
    broken = [d for d in deliveries if any(t.worker == victim.name and t.outcome != 200 for t in d.tries)]
    assert broken, "the killed worker had no press in flight"
    recovered = [d.answered - killed for d in broken]
    # Every press, from its first try to its answer: the victim's within a lease (and a poll), the rest at once.
    latency = [d.answered - d.tries[0].started for d in deliveries]
    bound = SHORT.update_lease + 2.0
    assert max(recovered) <= bound, sorted(recovered)
    assert max(latency) <= bound, sorted(latency)[-5:]

    # Each press counted exactly once: a toggle applied twice leaves the wrong team (or none) proposed.
    for group in toggle_groups:
        game = (await cluster.table(group.game_id)).game
        where = f"game {group.game_id}"
        assert game.phase is Phase.VOTING, (where, (await cluster.table(group.game_id)).draft_team)
        assert game.current_round.team == expected_team[group.game_id], where
        assert game.proposal_number == 1 and game.version == before[group.game_id].version + 1, where
    for group in vote_groups:
        game = (await cluster.table(group.game_id)).game
        where = f"game {group.game_id}"
        assert game.version == before[group.game_id].version + PLAYERS, where
        assert game.rounds[0].proposals[0].votes == expected_votes[group.game_id], where
    # Every press was answered (a press the killed worker had answered may be answered again: Telegram refuses that).
    for delivery in deliveries:
        assert telegram.callback_answers.get(delivery.update["callback_query"]["id"]), delivery.update_id
    for delivery in deliveries:
        assert await redis.get(keys.update_claim(delivery.update_id)) == "done", delivery.update_id

    # The messages all arrive: the killed worker's drains are taken over once their outbox lock lapses.
    settle_started = time.monotonic()
    await asyncio.gather(
        *(cluster.settled(g.game_id, timeout=SHORT.outbox_lock + 4 * CLOCK_SECONDS + 10) for g in groups)
    )
    settled = time.monotonic()
    for group in toggle_groups:
        assert group.latest_with_button(group.chat_id, f"v:{group.game_id}:"), group.game_id
    for group in vote_groups:
        votes = expected_votes[group.game_id]
        yes = sum(votes)
        game = (await cluster.table(group.game_id)).game
        _, board_id = await cluster.store.message_of(group.game_id, "board:1")
        board = telegram.message(group.chat_id, board_id).text
        if yes < PLAYERS - yes:
            assert f"Rejected {yes}–{PLAYERS - yes}" in board, board
            assert group.latest_with_button(group.user_ids[game.leader], f"t:{group.game_id}:"), group.game_id
            continue
        # An approved team: its card prompts carry the votes; the board, its vote closed, shows them
        # with the result.
        assert game.phase is Phase.MISSION and "Approved" not in board, board
        assert board.endswith("waiting for the team's cards."), board
        for seat in game.current_round.team:
            prompts = [m for m in telegram.messages(group.user_ids[seat]) if "Play your card" in (m.text or "")]
            assert prompts, (group.game_id, seat)
            assert all(vote_lines(group, votes) in m.text for m in prompts), (group.game_id, seat)
    tries = Counter(len(d.tries) for d in deliveries)
    survivors = [w.log() for w in cluster.workers if w is not victim]
    taken_over = sum(log.count("taken over after") for log in survivors)
    not_again = sum(log.count("applied already; not again") for log in survivors)
    print(
        f"\n{presses} presses by {len(sequences)} users through 3 workers, one killed "
        f"{killed - started:.2f} s into the burst with {len(broken)} presses in flight there; "
        f"burst done in {burst_done - started:.1f} s. Kill to the redelivered press answered: "
        f"min {min(recovered):.2f} s, median {statistics.median(recovered):.2f} s, max {max(recovered):.2f} s. "
        f"Press latency p50 {statistics.median(latency):.2f} s, max {max(latency):.2f} s. "
        f"Tries per press {dict(sorted(tries.items()))}. {taken_over} presses taken over from the killed "
        f"worker, {not_again} of them stored by it already (not applied again). Outboxes settled "
        f"{settled - settle_started:.1f} s after the burst."
    )


async def test_a_stopped_worker_delivers_what_it_answered(cluster: Cluster):
    """The webhook is answered before the messages go out; SIGTERM still lets them all go out
    before the worker exits."""
    telegram, redis = cluster.telegram, cluster.redis
    group = Group(cluster, 40)
    host = group.user_ids[0]
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await cluster.store.game_of_chat(group.chat_id)
    await cluster.settled(group.game_id)
    lobby = next(m for m in telegram.messages(group.chat_id) if any("url" in b for b in m.buttons()))
    link = next(b["url"] for b in lobby.buttons() if "url" in b)
    for user_id in group.user_ids:
        await group.send(telegram.open_link(user_id, link))
    await cluster.settled(group.game_id)

    # /startgame queues a role for each player, the board and the leader's keyboard: slow to send.
    telegram.delays["sendmessage"] = 0.3
    stopping = cluster.workers[1]
    started = time.monotonic()
    response = await post_update(stopping.url, SECRET, telegram.command(host, group.chat_id, "/startgame"))
    answered = time.monotonic() - started
    assert response.status_code == 200
    assert answered < 0.3, f"answered after {answered:.2f} s: the messages were sent first"
    queued = await redis.llen(keys.outbox(group.game_id))
    assert queued >= PLAYERS
    stopping.process.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(stopping.process.wait, 30)
    stopped = time.monotonic() - started
    telegram.delays.clear()
    assert code == 0, stopping.log()[-3000:]
    assert "worker stopped" in stopping.log()
    # Everything it had answered for went out before it exited.
    assert not await redis.llen(keys.outbox(group.game_id))
    for user_id in group.user_ids:
        roles = [m for m in telegram.messages(user_id) if "Your game in" in (m.text or "")]
        assert len(roles) == 1, user_id
    print(
        f"\n/startgame answered in {answered * 1000:.0f} ms with {queued} messages queued; "
        f"the worker stopped {stopped:.1f} s after it with all of them delivered"
    )


async def raw_post(worker: Worker, headers: list[str], chunks: int, chunk: bytes) -> tuple[str, int]:
    """POST over a bare socket, sending `chunks` chunks (chunked encoding) while reading the answer;
    returns the status line and how many body bytes were written before it came."""
    reader, writer = await asyncio.open_connection("127.0.0.1", worker.port)
    head = ["POST /telegram HTTP/1.1", "Host: 127.0.0.1", f"{webhook.SECRET_HEADER}: {SECRET}", *headers]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
    sent = 0

    async def send_body() -> None:
        nonlocal sent
        try:
            for _ in range(chunks):
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
                sent += len(chunk)
        except (ConnectionError, OSError):
            pass  # the worker closed the connection: it read no more

    sender = asyncio.create_task(send_body())
    try:
        status = await asyncio.wait_for(reader.readline(), timeout=10)
    except ConnectionResetError:
        # The worker answered and closed while body bytes were still arriving: its kernel then resets
        # the connection, which may drop the answer before it is read here. No status line seen.
        status = b""
    finally:
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)
        writer.close()
    return status.decode().strip(), sent


async def test_a_worker_refuses_a_body_larger_than_any_update_without_reading_it(cluster: Cluster):
    worker = cluster.workers[2]
    size = 64 * 1024 * 1024
    # Declared: the answer comes without waiting for a byte of the body.
    status, _ = await raw_post(worker, ["Content-Type: application/json", f"Content-Length: {size}"], 0, b"")
    assert status.startswith("HTTP/1.1 413"), status
    # Chunked, no Content-Length: the worker stops reading and answers while the client is still sending.
    chunk = b"x" * 65536
    for _ in range(5):  # the answer races the reset of a connection closed mid-body; it wins almost always
        status, sent = await raw_post(
            worker, ["Content-Type: application/json", "Transfer-Encoding: chunked"], size // len(chunk), chunk
        )
        assert sent < size // 2, f"{sent} bytes sent before the answer"
        if status:
            break
    assert status.startswith("HTTP/1.1 413"), status
    response = await cluster.http.get(worker.health_url)
    assert response.status_code == 200
    print(f"\n413 for a chunked body after {sent / 1024 / 1024:.1f} MiB had been written of {size // 1024 // 1024} MiB")
