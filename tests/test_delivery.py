"""Delivery after failures: what a killed worker or a Redis outage leaves queued goes out within
seconds, and every message goes out once.

- A drain's outbox lock lives `LOCK_SECONDS` (2 s) and is renewed while the drain runs, flood
  waits included; a worker delivers what waits at start-up and as soon as Redis answers again.
  The tests that wait for a lock to lapse run with a shorter one (`short_timings`: 0.5 s).
- A message Telegram took is removed from the queue by one script right after; if Redis failed
  in between, the worker settles it when Redis is back instead of sending it again.
- A private message of a key (role, card prompt, leader's keyboard) is sent at most once, also
  when /start asks for it again while the game's own drain is sending it.
- /record goes through the game's outbox: retried, never a traceback.

Some tests run real worker processes (`python -m tgbot`, polling) against the fake Bot API served
over HTTP, and kill them with SIGKILL; the Redis outage test kills its own redis-server. Run with
`-s` to see the times measured.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine import Phase
from tests.bot_helpers import AlwaysApprove, Bots, button_data, errors, propose, started_on, team_size, texts
from tests.timings import Timings
from tgbot import keys, outgoing
from tgbot.offline.fake_server import FakeTelegramServer
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.offline.harness import start_offline_bot
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.outbox import ATTEMPTS
from tgbot.outgoing import Button, Edit, Send
from tgbot.redis_client import connect

REPO = Path(__file__).resolve().parent.parent
TOKEN = "1000:" + "A" * 35  # FakeTelegram's bot id, in a form the bot's settings accept
CLOCK = 2.0  # the production clock's tick
RECOVERY_SECONDS = 2.0  # what is queued goes out this soon after start-up and after Redis is back


@pytest.fixture(autouse=True)
def info_logs(caplog):
    caplog.set_level(logging.INFO)


# ---------------------------------------------------------------- holding a Bot API call


class Hold:
    """Holds the first Bot API call that `matches`, before Telegram handles it (it never arrives, as
    for a worker killed while sending) or, with `after`, once Telegram has handled it and before the
    bot hears the answer (it arrived, and nobody knows yet)."""

    def __init__(self, telegram: FakeTelegram, matches: Callable[[str, dict], bool], *, after: bool = False) -> None:
        self.telegram, self.matches, self.after = telegram, matches, after
        self.arrived = asyncio.Event()
        self._go = asyncio.Event()
        self._dropped = False
        self._armed = True
        self._handle = telegram.handle
        telegram.handle = self._held  # type: ignore[method-assign]

    async def _held(self, url: str, request_data):
        method = url.rstrip("/").rpartition("/")[2]
        params = dict(request_data.parameters) if request_data else {}
        if not (self._armed and self.matches(method, params)):
            return await self._handle(url, request_data)
        self._armed = False
        answer = await self._handle(url, request_data) if self.after else None
        self.arrived.set()
        await self._go.wait()
        if self._dropped:
            return 502, b"the caller is gone"
        return answer if self.after else await self._handle(url, request_data)

    async def wait(self, timeout: float = 15.0) -> None:
        await asyncio.wait_for(self.arrived.wait(), timeout)

    def release(self) -> None:
        self._go.set()

    def drop(self) -> None:
        """The caller is gone: the held call is never handled."""
        self._dropped = True
        self._go.set()


def card_prompt_to(user_id: int) -> Callable[[str, dict], bool]:
    return lambda method, p: method == "sendMessage" and int(p["chat_id"]) == user_id and "Play your card" in p["text"]


def card_prompts(telegram: FakeTelegram, user_id: int) -> list[str]:
    return [text for text in texts(telegram, user_id) if "Play your card" in text]


def role_messages(telegram: FakeTelegram, user_id: int) -> list[str]:
    return [text for text in texts(telegram, user_id) if text.startswith("Your game in")]


async def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll until `condition()`; returns when it became true (time.monotonic())."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        await asyncio.sleep(0.01)
    return time.monotonic()


async def emptied(redis, game_id: str) -> None:
    """The game's outbox empties (its last message's removal follows the message by a moment)."""
    for _ in range(200):
        if not await redis.llen(keys.outbox(game_id)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"game {game_id}: the outbox still holds messages")


async def no_longer_pending(redis, game_id: str, timings: Timings) -> None:
    """The game leaves the pending outboxes once its outbox is empty and no write marked it for a
    moment (`tgbot.indexes.PENDING_GRACE_MS`); the clock's next look after that takes it off."""
    give_up = time.monotonic() + timings.pending_grace_ms / 1000 + 2 * CLOCK + 1
    while await redis.zscore(keys.pending_outboxes_of(game_id), game_id) is not None:
        assert time.monotonic() < give_up, f"game {game_id} is still marked pending"
        await asyncio.sleep(0.05)


def vote(group, seat: int) -> dict:
    """The update of the player at `seat` approving the current ballot."""
    ballot = group.latest_with_button(group.chat_id, "v:")
    return group.telegram.press(group.user_ids[seat], group.chat_id, ballot.message_id, button_data(ballot, ":a"))


def reject(group, seat: int) -> dict:
    """The update of the player at `seat` rejecting the current ballot."""
    ballot = group.latest_with_button(group.chat_id, "v:")
    return group.telegram.press(group.user_ids[seat], group.chat_id, ballot.message_id, button_data(ballot, ":r"))


async def queued_without_delivery(application, group, monkeypatch) -> list[outgoing.Outgoing]:
    """The deciding vote of a proposal of the whole team is stored by a worker that dies before it
    delivers anything: the board's edit closing the vote and the team's card prompts, which carry the
    votes, stay queued (the board shows an approved team's votes only with its mission's result)."""
    team = list(range(team_size(await group.table())))
    await propose(group, team)
    for seat in range(4):
        await group.send(vote(group, seat))

    async def died(game_id: str) -> bool:
        return True

    monkeypatch.setattr(application.bot_data["service"].outbox, "drain", died)
    await group.send(vote(group, 4))
    monkeypatch.undo()
    assert (await group.table()).game.phase is Phase.MISSION
    await group.store.redis.delete(keys.outbox_lock(group.game_id))  # the lock its write took has lapsed
    return [outgoing.loads(raw) for raw in await group.store.redis.lrange(keys.outbox(group.game_id), 0, -1)]


# ---------------------------------------------------------------- a worker killed while it sends


def spawn_polling_worker(telegram_url: str, redis_url: str, log_path: Path) -> subprocess.Popen:
    env = {
        "TELEGRAM_API_BASE_URL": telegram_url,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "INFO",
        "PATH": os.environ.get("PATH", ""),
    }
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "tgbot"], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT
        )


async def test_messages_a_killed_worker_was_sending_go_out_within_2_s_of_the_next_start(
    redis_url, redis, tmp_path, monkeypatch
):
    telegram = FakeTelegram(token=TOKEN)
    bots = Bots(telegram)
    server = FakeTelegramServer(telegram)
    await server.start()
    workers: list[subprocess.Popen] = []
    try:
        first = await bots.start(redis_url, seed=1)
        group = await started_on(first, telegram)
        queued = await queued_without_delivery(first, group, monkeypatch)
        team = [item.chat_id for item in queued[1:]]
        assert (queued[0].chat_id, queued[0].key) == (group.chat_id, "board:1")
        assert all(item.key.startswith("card:") for item in queued[1:]) and len(team) == team_size(await group.table())
        await bots.close()

        # A worker starts (polling) and delivers what waits, until Telegram holds its first call
        # (the first card prompt): there the worker is killed (SIGKILL).
        hold = Hold(telegram, card_prompt_to(team[0]))
        workers.append(spawn_polling_worker(server.base_url, redis_url, tmp_path / "killed.log"))
        await hold.wait(timeout=30)
        assert await redis.exists(keys.outbox_lock(group.game_id)), "the killed worker held the outbox's lock"
        workers[0].kill()
        workers[0].wait(timeout=10)
        hold.drop()
        killed_at = time.monotonic()
        assert all(card_prompts(telegram, user) == [] for user in team)

        # The next worker starts at once (as a supervisor restarts it).
        served = len(server.served)
        workers.append(spawn_polling_worker(server.base_url, redis_url, tmp_path / "next.log"))
        await wait_until(lambda: len(server.served) > served, 30, "the next worker's first Bot API call")
        started = server.served[served].at
        try:
            done = await wait_until(
                lambda: all(card_prompts(telegram, user) for user in team), 30, "the queued card prompts"
            )
        except AssertionError:
            calls = [(round(c.at - killed_at, 3), c.method) for c in server.served[served:] if c.method != "getUpdates"]
            state = (
                await redis.lrange(keys.outbox(group.game_id), 0, -1),
                await redis.get(keys.outbox_lock(group.game_id)),
                await redis.pttl(keys.outbox_lock(group.game_id)),
                await redis.zrange(keys.pending_outboxes_of(group.game_id), 0, -1),
            )
            raise AssertionError(f"calls {calls}, outbox {state}, log {(tmp_path / 'next.log').read_text()}") from None
        print(
            f"\nkilled worker's queue delivered {done - started:.2f} s after the next worker's first Bot API call "
            f"({done - killed_at:.2f} s after the kill)"
        )
        timeline = [(round(c.at - killed_at, 3), c.method) for c in server.served[served:] if c.method != "getUpdates"]
        print("Bot API calls of the next worker, in seconds after the kill:", timeline)
        assert done - started <= RECOVERY_SECONDS, (tmp_path / "next.log").read_text()[-5000:]
        # Each once, the held one included (the killed worker's was held, never handled), with the votes.
        assert all(len(card_prompts(telegram, user)) == 1 for user in team)
        assert all("👍 Ann, Bob, Cy, Dan, Eve" in card_prompts(telegram, user)[0] for user in team)
        # The board closed the vote and keeps the approved team's votes for the mission's result.
        assert any(text.endswith("waiting for the team's cards.") for text in texts(telegram, group.chat_id))
        assert not any("Approved" in text for text in texts(telegram, group.chat_id))
        await emptied(redis, group.game_id)
        log = (tmp_path / "next.log").read_text()
        assert " ERROR " not in log and "Traceback" not in log, log
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.terminate()
                worker.wait(timeout=15)
        await bots.close()
        await server.stop()


# ---------------------------------------------------------------- a lock nobody will let go, at start-up


async def test_at_start_up_a_worker_waits_out_a_dead_drains_lock_and_delivers(
    make_bot, telegram, redis, redis_url, monkeypatch, caplog, short_timings
):
    first = await make_bot(1)
    group = await started_on(first, telegram)
    queued = await queued_without_delivery(first, group, monkeypatch)
    team = [item.chat_id for item in queued if item.key.startswith("card:")]
    client = connect(redis_url)
    application = await start_offline_bot(telegram, client, 2, clock_seconds=CLOCK)
    try:
        # The worker that died had just taken the lock (it lives as long as a lock ever does unrenewed).
        lock_seconds = short_timings.outbox_lock
        await redis.set(keys.outbox_lock(group.game_id), "a-killed-worker", px=int(lock_seconds * 1000))
        started = time.monotonic()
        await application.start()  # the job queue: the clock's first tick comes at once
        done = await wait_until(lambda: all(card_prompts(telegram, u) for u in team), 10, "the card prompts")
        print(f"\ndelivered {done - started:.2f} s after start-up, behind a fresh {lock_seconds:g} s lock")
        assert done - started <= lock_seconds + 0.5  # not at the clock's next tick, CLOCK s later
        assert all(len(card_prompts(telegram, user)) == 1 for user in team)
        await emptied(redis, group.game_id)
        await no_longer_pending(redis, group.game_id, short_timings)
    finally:
        await application.stop()
        await application.shutdown()
        await client.aclose()
    assert errors(caplog) == []


# ---------------------------------------------------------------- Redis goes away in the middle of a delivery


# Redis restarted at once (0), and down for 3 s; OUTAGE_SECONDS="15,30" adds longer outages to measure.
OUTAGES = [0.0, 3.0] + [float(seconds) for seconds in os.environ.get("OUTAGE_SECONDS", "").split(",") if seconds]


async def first_prompt_taken_as_redis_dies(group: SimulatedGroup, aof_server) -> tuple[list[int], int]:
    """The team is approved; Telegram takes the first member's card prompt and Redis dies before the bot
    hears back (the press is answered, the delivery stops). Returns the team's seats and that member."""
    team = list(range(team_size(await group.table())))
    await propose(group, team)
    for seat in range(4):
        await group.send(vote(group, seat))
    first = group.user_ids[team[0]]
    hold = Hold(group.telegram, card_prompt_to(first), after=True)
    deciding = asyncio.create_task(group.send(vote(group, 4)))
    await hold.wait()
    aof_server.kill()
    hold.release()
    await asyncio.wait_for(deciding, 30)
    return team, first


@pytest.mark.parametrize("outage", OUTAGES)
async def test_after_a_redis_outage_what_waits_goes_out_within_2_s_and_nothing_twice(
    aof_server, telegram, caplog, outage, short_timings
):
    client = connect(aof_server.url)
    application = await start_offline_bot(telegram, client, 4, rate_limited=True, clock_seconds=CLOCK)
    await application.start()
    try:
        group = await started_on(application, telegram)
        team, first = await first_prompt_taken_as_redis_dies(group, aof_server)
        assert len(card_prompts(telegram, first)) == 1
        others = [group.user_ids[seat] for seat in team[1:]]
        assert all(card_prompts(telegram, user) == [] for user in others)

        await asyncio.sleep(outage)
        aof_server.start()  # from its append-only file
        back = time.monotonic()
        done = await wait_until(lambda: all(card_prompts(telegram, u) for u in others), 70, "the other prompts")
        print(f"\nafter a {outage:g} s outage, the queue was delivered {done - back:.2f} s after Redis answered")
        assert done - back <= RECOVERY_SECONDS
        for seat in team:
            assert len(card_prompts(telegram, group.user_ids[seat])) == 1, seat
        await emptied(client, group.game_id)
        assert not await client.exists(keys.outbox_lock(group.game_id))
        await no_longer_pending(client, group.game_id, short_timings)
    finally:
        await application.stop()
        await application.shutdown()
        await client.aclose()
    assert errors(caplog) == []


async def test_a_card_prompt_another_worker_sent_again_after_an_outage_leaves_one_copy_to_press(
    aof_server, telegram, caplog, short_timings
):
    """Redis failed in the instant after Telegram took a card prompt, and another worker drained the
    game's queue before the first could settle it: the prompt went out twice, both copies with live
    buttons. The first worker's clock now finds the second copy and takes the older one's buttons away."""
    first_client, second_client = connect(aof_server.url), connect(aof_server.url)
    sender = await start_offline_bot(telegram, first_client, 4)
    other = None
    try:
        group = await started_on(sender, telegram)
        team, first = await first_prompt_taken_as_redis_dies(group, aof_server)
        aof_server.start()

        other = await start_offline_bot(telegram, second_client, 5, clock_seconds=CLOCK)
        await other.start()  # its first tick drains the queue the first worker left
        await wait_until(lambda: len(card_prompts(telegram, first)) == 2, 30, "the prompt sent again")
        await sender.bot_data["service"].fire_due()

        copies = [m for m in telegram.messages(first) if "Play your card" in (m.text or "")]
        assert [bool(m.buttons()) for m in copies] == [False, True]
        # The copy left is the one the game edits once the card is played.
        await group.press(first, first, "c:", ":s")
        assert "Play your card" not in (telegram.message(first, copies[1].message_id).text or "")
    finally:
        if other is not None:
            await other.stop()
            await other.shutdown()
        await sender.shutdown()
        await first_client.aclose()
        await second_client.aclose()
    assert errors(caplog) == []


# ---------------------------------------------------------------- a private message of a key, once


async def test_start_while_the_game_sends_the_role_does_not_double_it(make_bot, telegram, redis):
    application = await make_bot(3)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    last = group.user_ids[4]
    # /startgame's drain is slow to reach the last player (a flood wait): meanwhile they press Start.
    hold = Hold(
        telegram,
        lambda method, p: (
            method == "sendMessage" and int(p["chat_id"]) == last and str(p["text"]).startswith("Your game in")
        ),
    )
    starting = asyncio.create_task(group.start())
    await hold.wait()
    await group.send(telegram.command(last, last, "/start"))
    hold.release()
    await asyncio.wait_for(starting, 15)
    assert len(role_messages(telegram, last)) == 1
    for user in group.user_ids:
        assert len(role_messages(telegram, user)) == 1, user
    assert await redis.llen(keys.outbox(group.game_id)) == 0
    # Start again: nothing more.
    await group.send(telegram.command(last, last, "/start"))
    assert len(role_messages(telegram, last)) == 1


async def test_a_private_message_of_a_key_is_sent_at_most_once(make_bot, telegram, redis):
    application = await make_bot(1)
    outbox = application.bot_data["service"].outbox
    telegram.add_user(77, "Ann")
    telegram.command(77, 77, "/start")  # Ann opened her private chat with the bot
    game_id = "0123456789"
    prompt = Send(77, "Play your card", ((Button("✅", data="c:0123456789:3:s"),),), key="card:3:0", protected=True)
    board = Send(-100, "board", key="board:1")
    telegram.add_group(-100, "Demo group")

    await redis.rpush(keys.outbox(game_id), *[outgoing.dumps(item) for item in (prompt, board, prompt)])
    await outbox.drain(game_id)
    assert [m.text for m in telegram.messages(77) if m.from_bot] == ["Play your card"]
    # Queued again later (a /start, a worker that did not know): still not sent again.
    await redis.rpush(keys.outbox(game_id), outgoing.dumps(prompt))
    await outbox.drain(game_id)
    assert [m.text for m in telegram.messages(77) if m.from_bot] == ["Play your card"]
    assert await redis.llen(keys.outbox(game_id)) == 0
    # A group message of a key is posted again when queued again (as /status does, after an edit
    # that takes the old copy's buttons away).
    await redis.rpush(keys.outbox(game_id), outgoing.dumps(board))
    await outbox.drain(game_id)
    assert [m.text for m in telegram.messages(-100)] == ["board", "board"]


async def test_a_group_message_sent_once_per_key_goes_once_and_not_after_an_edit_left_its_receipt(
    make_bot, telegram, redis
):
    """The end of a game posted again on the bot's return to its group may be queued by two workers, each
    told of the return: it reaches the group once, and not at all when the edit that told the end reached
    the group (and left its receipt under the same key)."""
    application = await make_bot(1)
    outbox = application.bot_data["service"].outbox
    telegram.add_group(-100, "Demo group")
    last_board = Send(-100, "Mission 3", key="board:3")
    end = Edit(-100, "board:3", "The spies win", receipt="result")
    again = Send(-100, "The spies win", key="result", once=True)

    seen = "0123456789"  # the end's edit reached the board
    await redis.rpush(keys.outbox(seen), *[outgoing.dumps(item) for item in (last_board, end, again)])
    await outbox.drain(seen)
    await redis.rpush(keys.outbox(seen), outgoing.dumps(again))
    await outbox.drain(seen)
    [board_message] = telegram.messages(-100)
    assert board_message.text == "The spies win"
    assert await outbox.store.message_of(seen, "result") == (-100, board_message.message_id)

    unseen = "9876543210"  # its board never reached the group, so neither did the end's edit
    await redis.rpush(keys.outbox(unseen), *[outgoing.dumps(item) for item in (end, again, again)])
    await outbox.drain(unseen)
    await redis.rpush(keys.outbox(unseen), outgoing.dumps(again))
    await outbox.drain(unseen)
    assert [m.text for m in telegram.messages(-100)] == ["The spies win", "The spies win"]
    assert await redis.llen(keys.outbox(unseen)) == 0
    # Items that use neither read as before (an older worker's queue, and its reading of ours).
    assert "receipt" not in outgoing.dumps(Edit(-100, "board:3", "x")) and "once" not in outgoing.dumps(last_board)


# ---------------------------------------------------------------- a drain in a long flood wait keeps its lock


async def test_a_drain_waiting_longer_than_its_lock_keeps_it_and_nothing_goes_twice(
    make_bot, telegram, redis, short_timings
):
    group = await started_on(await make_bot(1), telegram)
    other = await make_bot(2)  # another worker, whose clock tries the same outbox meanwhile
    team = list(range(team_size(await group.table())))
    await propose(group, team)
    for seat in range(4):
        await group.send(vote(group, seat))
    wait = int(short_timings.outbox_lock * 2) + 1
    telegram.fail_next(
        "sendMessage", status=429, description=f"Too Many Requests: retry after {wait}", retry_after=wait
    )
    calls = len(telegram.calls)
    deciding = asyncio.create_task(group.send(vote(group, 4)))
    began = time.monotonic()
    while time.monotonic() - began < wait - 0.5:
        await other.bot_data["service"].fire_due()
        await asyncio.sleep(0.3)
    await asyncio.wait_for(deciding, 30)
    for seat in team:
        [prompt] = card_prompts(telegram, group.user_ids[seat])
        assert "👍 Ann, Bob, Cy, Dan, Eve" in prompt, seat
    # An approved team's votes wait for its mission's result: the board is edited once, closing the vote.
    assert [m for m, p in telegram.calls[calls:] if int(p.get("chat_id", 0)) == group.chat_id] == ["editMessageText"]
    assert await redis.llen(keys.outbox(group.game_id)) == 0


# ---------------------------------------------------------------- /status sent again and again


async def test_status_sent_over_and_over_while_the_group_waits_costs_the_game_one_copy(make_bot, telegram, redis):
    """Someone sends /status again and again while the group's messages wait (Telegram lets a bot post 20
    a minute in a group): the copies still queued are not posted one after another, each to lose its
    buttons to the next, ahead of the game's own messages. Only the newest copy goes out, and the game's
    messages queued behind follow it."""
    group = await started_on(await make_bot(1), telegram)
    chat = group.chat_id
    await propose(group, range(team_size(await group.table())))
    board = group.latest_with_button(chat, "v:")
    rejecting = button_data(board, ":r")
    for seat in range(4):
        await group.send(vote(group, seat) if seat < 2 else reject(group, seat))
    first_copy = Hold(telegram, lambda method, p: method == "sendMessage" and int(p["chat_id"]) == chat)
    posting = asyncio.create_task(group.send(telegram.command(group.user_ids[0], chat, "/status")))
    await first_copy.wait()  # the group's flood limit holds it
    for n in range(8):
        await group.send(telegram.command(group.user_ids[n % 5], chat, "/status"))
    # The deciding vote, pressed before the buttons left the proposal's message: the game's messages queue behind.
    await group.send(telegram.forged_press(group.user_ids[4], chat, board.message_id, rejecting))
    assert (await group.table()).game.phase is Phase.PROPOSING
    calls = len(telegram.calls)
    first_copy.release()
    await asyncio.wait_for(posting, 15)

    group_calls = [m for m, p in telegram.calls[calls:] if int(p.get("chat_id", 0)) == chat]
    # The copy on its way, the edit that takes its buttons, the newest copy, the votes revealed on it.
    assert group_calls == ["sendMessage", "editMessageText", "sendMessage", "editMessageText"]
    boards = [m for m in telegram.messages(chat) if m.from_bot and m.message_id >= board.message_id]
    assert len(boards) == 3  # the proposal's message, and two copies
    assert [m.buttons() for m in boards[:-1]] == [[], []]
    assert "Rejected 2–3." in plain_text(boards[-1].text)
    assert await redis.llen(keys.outbox(group.game_id)) == 0


# ---------------------------------------------------------------- /record


async def finished_game(make_bot, telegram):
    group = await started_on(await make_bot(5), telegram)
    table = await group.play(AlwaysApprove(rng=random.Random(5)))
    assert table.game.is_over
    return group


def documents(telegram: FakeTelegram, chat_id: int) -> list:
    return [m for m in telegram.messages(chat_id) if m.document is not None]


async def test_record_survives_a_bad_gateway(make_bot, telegram, redis, caplog, short_timings):
    group = await finished_game(make_bot, telegram)
    # Telegram answers 502 to every try the outbox makes at once; the clock's next tick sends it.
    telegram.fail_next("sendDocument", status=502, description="Bad Gateway", times=ATTEMPTS)
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/record"))
    assert documents(telegram, group.chat_id) == []
    assert errors(caplog) == []
    await group.application.bot_data["service"].fire_due()
    [document] = documents(telegram, group.chat_id)
    record = json.loads(document.document.data)
    assert record["id"] == group.game_id
    assert errors(caplog) == []
    assert all("Traceback" not in (r.exc_text or "") for r in caplog.records)


async def test_record_refused_by_telegram_gets_a_short_message(make_bot, telegram, redis, caplog):
    group = await finished_game(make_bot, telegram)
    telegram.fail_next("sendDocument", status=400, description="Bad Request: file is too big")
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/record"))
    assert documents(telegram, group.chat_id) == []
    assert texts(telegram, group.chat_id)[-1] == "Telegram did not take the record file. Try /record again later."
    assert errors(caplog) == []


async def test_record_is_sent_once(make_bot, telegram, redis):
    group = await finished_game(make_bot, telegram)
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/record"))
    [document] = documents(telegram, group.chat_id)
    assert document.document.filename == f"resistance-{group.game_id}.json"
    assert document.text == f"The record of game {group.game_id} (resistance-record/1)."


# ---------------------------------------------------------------- a drain whose lock another took over


async def test_a_drain_that_lost_its_lock_sends_nothing_more(make_bot, telegram, redis, short_timings):
    application = await make_bot(1)
    outbox = application.bot_data["service"].outbox
    telegram.add_group(-100, "Demo group")
    game_id = "0123456789"
    items = [Send(-100, f"message {n}") for n in range(3)]
    await redis.rpush(keys.outbox(game_id), *[outgoing.dumps(item) for item in items])
    await redis.zadd(keys.pending_outboxes_of(game_id), {game_id: 0})
    hold = Hold(telegram, lambda method, p: method == "sendMessage")
    draining = asyncio.create_task(outbox.drain(game_id))
    await hold.wait()
    # The drain stalls past its lock's life; another drain takes the lock over.
    await redis.set(keys.outbox_lock(game_id), "another-drain", px=10_000)
    await asyncio.sleep(short_timings.outbox_lock / 2)  # a renewal finds the lock taken
    hold.release()
    assert await asyncio.wait_for(draining, 10) is True
    assert [m.text for m in telegram.messages(-100)] == ["message 0"]
    assert await redis.lrange(keys.outbox(game_id), 0, -1) == [outgoing.dumps(item) for item in items[1:]]
    assert await redis.get(keys.outbox_lock(game_id)) == "another-drain"  # not ours to let go


@pytest.mark.parametrize("audited_first", [True, False])
async def test_a_keyed_message_a_failover_forgot_is_not_left_live_twice(make_bot, telegram, redis, audited_first):
    """The script that took a keyed private message off the queue ran on a master whose last writes a
    failover to its replica lost: the queue holds the message again, and its key names nothing. The worker
    that sent it saw Redis fail and doubts what it delivered just before: its clock writes the message's id
    back before another worker sends it again (one copy), or, if another worker was first, takes the older
    copy's buttons away."""
    sender, other = (await make_bot(1)).bot_data["service"], (await make_bot(2)).bot_data["service"]
    user = 4242
    telegram.add_user(user, "Ann")
    telegram.command(user, user, "/start")  # the player opened their private chat with the bot
    game_id = "0123456789"
    await redis.set(keys.game(game_id), "{}")  # the game is still stored (its document is not read here)
    prompt = Send(user, "Play your card", buttons=((Button("Success", data="c:x"),),), key="card-0")
    await redis.rpush(keys.outbox(game_id), outgoing.dumps(prompt))
    assert await sender.outbox.drain(game_id)
    # The failover: the replica never saw the delivery's commit.
    await redis.hdel(keys.messages(game_id), "card-0")
    await redis.rpush(keys.outbox(game_id), outgoing.dumps(prompt))
    sender.outbox.receipts.storage_failed()  # as its tick, or a press, met the failover

    if audited_first:
        await sender.fire_due()  # writes the id back
        assert await other.outbox.drain(game_id)
    else:
        assert await other.outbox.drain(game_id)
        await sender.fire_due()
    copies = [m for m in telegram.messages(user) if m.text == "Play your card"]
    assert [bool(m.buttons()) for m in copies] == ([True] if audited_first else [False, True])
    assert await redis.hget(keys.messages(game_id), "card-0") == f"{user}:{copies[-1].message_id}"
    assert await redis.llen(keys.outbox(game_id)) == 0


# ---------------------------------------------------------------- a worker's copy of the game is old


async def test_a_press_refused_on_a_workers_old_copy_is_checked_against_the_stored_game(make_bot, telegram, redis):
    first, second = await make_bot(1), await make_bot(2)
    group = await started_on(first, telegram)
    await group.table()
    assert (await first.bot_data["store"].load(group.game_id)).game.phase is Phase.PROPOSING  # its copy
    # The leader proposes through the other worker: the first one's copy still waits for a team.
    group.application = second
    await propose(group, range(team_size(await group.table())))
    group.application = first
    update = vote(group, 0)
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"].startswith("You voted")
    assert (await group.table()).game.pending_votes[0] is True


async def test_a_drain_that_stalled_past_its_lock_does_not_send_what_another_delivered(
    make_bot, telegram, redis, monkeypatch, short_timings
):
    stalled = (await make_bot(1, rate_limited=True)).bot_data["service"].outbox
    other = (await make_bot(2)).bot_data["service"].outbox
    telegram.add_group(-100, "Demo group")
    game_id = "0123456789"
    items = [Send(-100, "first"), Send(-100, "second")]
    await redis.rpush(keys.outbox(game_id), *[outgoing.dumps(item) for item in items])
    await redis.zadd(keys.pending_outboxes_of(game_id), {game_id: 0})
    # The first worker's drain takes the lock and then waits out a flood pause longer than the lock
    # lives, with nothing renewing it (its event loop starved, say).
    monkeypatch.setattr("tgbot.outbox._Lock.keep", lambda self: None)
    lock_seconds = short_timings.outbox_lock
    await redis.set(keys.RATE_PAUSE, "1", px=int(lock_seconds * 1000) + 1000)
    stalling = asyncio.create_task(stalled.drain(game_id))
    await asyncio.sleep(lock_seconds + 0.2)
    # The lock lapsed: another worker drains the outbox.
    assert await other.drain(game_id) is True
    assert [m.text for m in telegram.messages(-100)] == ["first", "second"]
    # The stalled drain wakes up, finds it has no lock and nothing left to send.
    assert await asyncio.wait_for(stalling, 10) is True
    assert [m.text for m in telegram.messages(-100)] == ["first", "second"]
    assert await redis.llen(keys.outbox(game_id)) == 0
