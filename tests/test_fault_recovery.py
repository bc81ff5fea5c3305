"""Crashes and outages: a worker dying before or after it stored a change, Redis restarting from
its append-only file or not answering at all, and Telegram timing out for a while.

Everything runs on a real redis-server and the real python-telegram-bot stack over the fake Bot
API. The module runs its own redis-server (the shared test database may be flushed by another
test run at any moment); the restart tests start one more, with persistence, that they kill.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import time
from dataclasses import replace

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from engine import Phase, public_view
from tests.bot_helpers import (
    AlwaysApprove,
    Bots,
    button_data,
    errors,
    last_message,
    propose,
    started_on,
    team_size,
    texts,
)
from tests.servers import RedisServer, own_redis_url
from tgbot import app, keys, outgoing, redis_client
from tgbot.changes import Change
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.outbox import ATTEMPTS, _superseded
from tgbot.outgoing import Button, Edit, Send
from tgbot.render import board, private
from tgbot.render import pace as pace_render
from tgbot.render.common import group_scene, seat_scene
from tgbot.store import FINISHED_GAME_SECONDS
from tgbot.table import Stage

UNAVAILABLE = "temporarily unavailable"


# ---------------------------------------------------------------- a redis-server of our own


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    """Overrides conftest's: this module's own server, so no other test run can flush it under us."""
    yield from own_redis_url(tmp_path_factory.mktemp("redis"))


@pytest.fixture
async def bot_on(telegram):
    """Like conftest's make_bot, for a Redis URL of the test's choosing."""
    bots = Bots(telegram)
    yield bots.start  # (url, seed=0, *, rate_limited=False)
    await bots.close()


@pytest.fixture(autouse=True)
def info_logs(caplog):
    caplog.set_level(logging.INFO)


# ---------------------------------------------------------------- helpers


def leader_keyboard(group: SimulatedGroup, table) -> tuple[int, object]:
    """The leader and their private keyboard."""
    leader = table.players[table.game.leader].user_id
    return leader, group.latest_with_button(leader, f"t:{group.game_id}:")


def vote_update(group: SimulatedGroup, user_id: int, approve: bool) -> dict:
    """The update Telegram sends when `user_id` presses a button of the current ballot."""
    ballot = group.latest_with_button(group.chat_id, "v:")
    data = button_data(ballot, ":a" if approve else ":r")
    return group.telegram.press(user_id, group.chat_id, ballot.message_id, data)


def sent(telegram, since: int = 0) -> list[tuple[str, int, str]]:
    """(method, chat, text) of every message sent or edited since call number `since`."""
    return [
        (method, int(params["chat_id"]), str(params["text"]))
        for method, params in telegram.calls[since:]
        if method in ("sendMessage", "editMessageText")
    ]


def as_calls(items) -> list[tuple[str, int, str]]:
    """The calls delivering queued items, skipping an edit when the next item of its message key is
    another edit (a new message sent under the key in between takes the key over: the edit is made)."""
    calls = []
    for position, item in enumerate(items):
        if isinstance(item, Edit):
            following = [later for later in items[position + 1 :] if later.key == item.key]
            if following and isinstance(following[0], Edit):
                continue
            calls.append(("editMessageText", item.chat_id, item.text))
        else:
            assert isinstance(item, Send)
            calls.append(("sendMessage", item.chat_id, item.text))
    return calls


async def everything(client: Redis) -> dict:
    """Every key of the database with its type and value (an outage or a crash must change none),
    but for the marks a write sets in the clock's lookups just before it stores anything
    (`tgbot.indexes`): when the game was last marked as holding messages (whether it is, counts)
    and which revision of the table its deadline was last set from."""
    readers = {
        "string": client.get,
        "list": lambda key: client.lrange(key, 0, -1),
        "hash": client.hgetall,
        "set": client.smembers,
        "zset": lambda key: client.zrange(key, 0, -1, withscores=True),
    }
    found = {}
    async for key in client.scan_iter("*"):
        kind = await client.type(key)
        found[key] = (kind, await readers[kind](key))
    for shard in range(keys.CLOCK_SHARDS):
        found.pop(keys.deadline_revisions(shard), None)
        pending = keys.pending_outboxes(shard)
        if pending in found:
            found[pending] = ("zset", sorted(member for member, _ in found[pending][1]))
    return found


def prompts_to(telegram, user_id: int) -> list[str]:
    return [
        text
        for method, chat, text in sent(telegram)
        if method == "sendMessage" and chat == user_id and ("Play your card" in text)
    ]


# ---------------------------------------------------------------- a worker dies after storing, before sending


@pytest.mark.parametrize("trigger", ["status", "clock"])
async def test_announcements_lost_with_a_worker_are_sent_by_the_next_one(
    make_bot, telegram, redis, monkeypatch, caplog, trigger
):
    doomed = await make_bot(1)
    group = await started_on(doomed, telegram)
    table = await group.table()
    team = list(range(team_size(table)))
    await propose(group, team)
    for seat in range(4):
        await group.send(vote_update(group, group.user_ids[seat], approve=True))
    ballot = group.latest_with_button(group.chat_id, "v:")
    shown = telegram.message(group.chat_id, ballot.message_id).text
    shown_buttons = ballot.buttons()
    version = (await group.table()).game.version

    # The worker stores the deciding vote and dies before it sends a single message.
    async def died(game_id: str) -> None:
        return None

    monkeypatch.setattr(doomed.bot_data["service"].outbox, "drain", died)
    before = len(telegram.calls)
    await group.send(vote_update(group, group.user_ids[4], approve=True))

    game = (await group.table()).game
    assert game.phase is Phase.MISSION and game.version == version + 1
    assert game.current_round.proposals[0].votes == (True,) * 5
    # Nobody has seen a card prompt: the group's ballot still asks for votes.
    assert sent(telegram, before) == []
    assert telegram.message(group.chat_id, ballot.message_id).text == shown
    assert telegram.message(group.chat_id, ballot.message_id).buttons() == shown_buttons
    assert "Everyone votes" in plain_text(shown) and "👍 Ann" not in plain_text(shown)
    assert all(prompts_to(telegram, group.user_ids[seat]) == [] for seat in team)
    # Its messages wait in Redis, in order: the board's edit closing the vote, then a card prompt per
    # team member, carrying the votes (the group sees an approved team's votes only with its
    # mission's result).
    queued = [outgoing.loads(raw) for raw in await redis.lrange(keys.outbox(group.game_id), 0, -1)]
    mission_ballot = public_view(game).ballot
    assert [(item.chat_id, item.key) for item in queued] == [(group.chat_id, "board:1")] + [
        (group.user_ids[seat], private.card_key(mission_ballot, seat)) for seat in team
    ]
    closing, prompts = queued[0], queued[1:]
    assert "The mission is under way" in closing.text and "👍 Ann" not in plain_text(closing.text)
    assert all("👍 Ann, Bob, Cy, Dan, Eve" in plain_text(item.text) for item in prompts)

    # The outbox lock the dead worker took with its change lapses (LOCK_SECONDS later; here at once).
    assert await redis.exists(keys.outbox_lock(group.game_id))
    await redis.delete(keys.outbox_lock(group.game_id))

    # A new worker starts. The next change to the game delivers them first, in order: /status in
    # the group, or, with nobody doing anything, the clock's reminder half-way to the deadline.
    group.application = await make_bot(2)
    before = len(telegram.calls)
    table = await group.table()
    if trigger == "status":
        await group.send(telegram.command(group.user_ids[2], group.chat_id, "/status"))
        # The board, posted again: the old copy loses its buttons, the new one carries them.
        text, buttons = board.board(group_scene(table))
        key = board.board_key(group_scene(table))
        then = [Edit(group.chat_id, key, text), Send(group.chat_id, text, buttons, key=key)]
        latest = telegram.messages(group.chat_id)[-1]
        assert latest.message_id > ballot.message_id and latest.text == text
        assert [b["text"] for b in latest.buttons()] == ["⏳ Waiting for…"]
        assert telegram.message(group.chat_id, ballot.message_id).buttons() == []
        board_message = latest.message_id
    else:
        assert await group.application.bot_data["service"].fire_due(now=table.reminder_at) == 1
        # The players the mission waits for are reminded in private; the group hears nothing more.
        until = pace_render.moment(table.deadline, table.settings, "en")
        then = [Send(group.user_ids[seat], private.reminder(seat_scene(table, seat), until)) for seat in team]
        assert telegram.messages(group.chat_id)[-1].message_id == ballot.message_id
        # The vote is closed on the board; the votes wait for the result.
        assert telegram.message(group.chat_id, ballot.message_id).text == closing.text
        board_message = ballot.message_id
    assert sent(telegram, before) == as_calls(queued + then)
    for seat in team:
        [prompt] = prompts_to(telegram, group.user_ids[seat])
        assert "👍 Ann, Bob, Cy, Dan, Eve" in plain_text(prompt)
    assert await redis.llen(keys.outbox(group.game_id)) == 0

    # Nothing goes out twice: a card played now edits its own prompt, and sends nothing.
    before = len(telegram.calls)
    player = group.user_ids[team[0]]
    await group.press(player, player, "c:", ":s")
    assert [(method, chat) for method, chat, _ in sent(telegram, before)] == [("editMessageText", player)]

    table = await group.play(AlwaysApprove(rng=random.Random(5)))
    # The group's board got the votes with the first mission's result.
    revealed = plain_text(telegram.message(group.chat_id, board_message).text)
    assert "👍 Ann, Bob, Cy, Dan, Eve" in revealed and "Approved 5–0." in revealed
    assert "Mission 1 succeeded" in revealed or "Mission 1 failed" in revealed
    assert table.game.is_over
    assert await redis.llen(keys.outbox(group.game_id)) == 0
    for seat in team:
        assert len(prompts_to(telegram, group.user_ids[seat])) == len(
            [r for r in table.game.rounds if r.played and seat in r.team]
        )
    assert errors(caplog) == []


# ---------------------------------------------------------------- a worker dies before storing


class WorkerKilled(BaseException):
    """The process goes away: nothing after this point runs, not even error handlers."""


async def _die_before_exec(application, monkeypatch):
    store = application.bot_data["store"]
    update = store.update

    async def update_then_die(game_id, mutate, record=None):
        def doomed(table):
            mutate(table)  # the move was worked out from what was read...
            raise WorkerKilled  # ...and the worker died before its write reached Redis

        return await update(game_id, doomed, record)

    monkeypatch.setattr(store, "update", update_then_die)


async def _connection_drops_at_the_write(application, monkeypatch):
    """The connection breaks as the compare-and-set script is sent: the write never reaches Redis."""
    store = application.bot_data["store"]
    write = store._update
    armed = [True]

    async def drop_once(*args, **kwargs):
        if armed[0]:
            armed[0] = False
            raise RedisConnectionError("Connection reset by peer")
        return await write(*args, **kwargs)

    monkeypatch.setattr(store, "_update", drop_once)


@pytest.mark.parametrize("crash", [_die_before_exec, _connection_drops_at_the_write], ids=["killed", "connection-lost"])
async def test_a_press_lost_before_it_was_stored_counts_once_when_delivered_again(
    make_bot, telegram, redis, monkeypatch, caplog, crash
):
    first = await make_bot(1)
    group = await started_on(first, telegram)
    team = list(range(team_size(await group.table())))
    await propose(group, team)
    for seat in range(4):
        await group.send(vote_update(group, group.user_ids[seat], approve=seat != 3))
    ballot = group.latest_with_button(group.chat_id, "v:")
    version = (await group.table()).game.version
    update = vote_update(group, group.user_ids[4], approve=True)  # the deciding vote, 4-1

    stored = await everything(redis)
    calls = len(telegram.calls)
    await crash(first, monkeypatch)
    if crash is _die_before_exec:
        with pytest.raises(WorkerKilled):
            await group.send(update)
    else:
        await group.send(update)
        answer = telegram.callback_answers[update["callback_query"]["id"]]
        assert UNAVAILABLE in answer["text"] and answer["show_alert"] is True
    monkeypatch.undo()
    assert await everything(redis) == stored
    assert sent(telegram, calls) == []

    # Telegram delivers the update again, to another worker: it counts, once.
    group.application = await make_bot(2)
    await group.send(update)
    game = (await group.table()).game
    assert game.version == version + 1
    assert game.phase is Phase.MISSION
    assert game.current_round.proposals[0].votes == (True, True, True, False, True)
    # The team's card prompts carry the votes, once each; the board shows them with the result.
    assert "Approved" not in plain_text(telegram.message(group.chat_id, ballot.message_id).text)
    for seat in team:
        [prompt] = prompts_to(telegram, group.user_ids[seat])
        assert "👍 Ann, Bob, Cy, Eve" in plain_text(prompt) and "👎 Dan" in plain_text(prompt)

    # And again: nothing more happens.
    stored = await everything(redis)
    calls = len(telegram.calls)
    await group.send(update)
    assert await everything(redis) == stored
    assert sent(telegram, calls) == []

    table = await group.play(AlwaysApprove(rng=random.Random(6)))
    assert table.game.is_over
    assert await redis.llen(keys.outbox(group.game_id)) == 0
    assert errors(caplog) == []


# ---------------------------------------------------------------- Redis restarts from its append-only file


async def test_the_game_survives_a_redis_restart(aof_server, bot_on, telegram, caplog):
    application = await bot_on(aof_server.url, seed=3)
    group = await started_on(application, telegram, players=6)
    policy = AlwaysApprove(rng=random.Random(3))
    while len((await group.table()).game.played_rounds) < 2:
        assert await group.step(policy)
    table = await group.table()
    assert table.game.phase is Phase.PROPOSING and not table.game.is_over

    inspector = Redis.from_url(aof_server.url, decode_responses=True)
    try:
        before = await everything(inspector)
        game_keys = {keys.game(group.game_id), keys.messages(group.game_id), keys.chat_game(group.chat_id)}
        assert game_keys <= set(before)
        assert {f"rb:user:{user}:games" for user in group.user_ids} <= set(before)

        aof_server.kill()
        aof_server.start()
    finally:
        await inspector.aclose()
    inspector = Redis.from_url(aof_server.url, decode_responses=True)
    try:
        assert await everything(inspector) == before
    finally:
        await inspector.aclose()

    # The same application goes on, without a restart: a connection its pool kept from before the
    # restart is retried, so the player never hears about it.
    leader, keyboard = leader_keyboard(group, table)
    update = telegram.press(leader, leader, keyboard.message_id, button_data(keyboard, ":0"))
    await group.send(update)
    assert UNAVAILABLE not in (telegram.callback_answers[update["callback_query"]["id"]]["text"] or "")
    assert (await group.table()).draft_team == (0,)
    assert "Chosen: Ann" in plain_text(telegram.message(leader, keyboard.message_id).text)
    table = await group.play(policy)
    assert table.game.is_over
    assert "🏁" in plain_text(last_message(telegram, group.chat_id).text)
    assert await group.store.redis.llen(keys.outbox(group.game_id)) == 0
    assert errors(caplog) == []


# ---------------------------------------------------------------- Redis does not answer


async def test_while_redis_is_down_the_bot_says_so_and_recovers_by_itself(aof_server, bot_on, telegram, caplog):
    application = await bot_on(aof_server.url, seed=4, rate_limited=True)  # the limiter needs Redis too
    group = await started_on(application, telegram)
    table = await group.table()
    leader, keyboard = leader_keyboard(group, table)
    keyboard_text = telegram.message(leader, keyboard.message_id).text
    pick = button_data(keyboard, ":0")

    aof_server.kill()
    group_messages = len([m for m in telegram.messages(group.chat_id) if m.from_bot])
    update = telegram.press(leader, leader, keyboard.message_id, pick)
    await group.send(update)
    answer = telegram.callback_answers[update["callback_query"]["id"]]
    assert UNAVAILABLE in answer["text"] and answer["show_alert"] is True

    for user, chat, command in (
        (group.user_ids[1], group.chat_id, "/status"),
        (group.user_ids[2], group.chat_id, "/join"),
        (group.user_ids[3], group.user_ids[3], "/start"),
        (group.user_ids[3], group.user_ids[3], "/hints"),
    ):
        await group.send(telegram.command(user, chat, command))
        reply = telegram.messages(chat)[-1]
        assert reply.from_bot and UNAVAILABLE in reply.text, (command, reply.text)
    assert telegram.message(leader, keyboard.message_id).text == keyboard_text
    assert len([m for m in telegram.messages(group.chat_id) if m.from_bot]) == group_messages + 2  # the answers
    assert errors(caplog) == []
    assert any("storage unavailable" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)

    # Redis is back (from its append-only file): the same press now works, without a restart.
    aof_server.start()
    caplog.clear()
    update = telegram.press(leader, leader, keyboard.message_id, pick)
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] is None
    table = await group.table()
    assert table.draft_team == (0,)
    assert "Chosen: Ann" in plain_text(telegram.message(leader, keyboard.message_id).text)
    await propose(group, range(team_size(table)))
    for seat in range(5):
        await group.send(vote_update(group, group.user_ids[seat], approve=True))
    assert (await group.table()).game.phase is Phase.MISSION
    assert errors(caplog) == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def until(condition, timeout: float = 10.0) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < give_up, "timed out"
        await asyncio.sleep(0.05)


async def test_the_first_tick_after_an_outage_measures_the_shared_clock_again(aof_server, bot_on, monkeypatch):
    """Redis answers again after an outage, perhaps as a replica promoted on a machine whose clock
    differs (seen from the worker just as its own clock standing still 30 s meanwhile): the first
    tick that reaches Redis measures the clock again before it fires anything, not only the next
    periodic measure."""
    monkeypatch.setattr(app, "SYNC_SECONDS", 3600.0)
    stood_still = [0.0]
    application = await bot_on(
        aof_server.url, seed=4, clock_seconds=0.2, local_clock=lambda: time.monotonic() - stood_still[0]
    )
    service, data = application.bot_data["service"], application.bot_data
    redis = service.store.redis
    await application.start()
    try:
        await until(lambda: not data["recovering"])  # the tick at start-up is done
        aof_server.kill()
        await until(lambda: data["recovering"])  # a tick met the outage
        stood_still[0] = 30.0
        aof_server.start()
        await until(lambda: not data["recovering"])
        seconds, micros = await redis.time()
        assert abs(service.clock() - (seconds + micros / 1_000_000)) < 0.5
    finally:
        await application.stop()


# ---------------------------------------------------------------- Telegram times out for a while


async def test_timeouts_during_a_vote_count_each_vote_once_and_deliver_everything(
    make_bot, telegram, redis, short_timings
):
    group = await started_on(await make_bot(1), telegram)
    team = list(range(team_size(await group.table())))
    await propose(group, team)
    ballot = group.latest_with_button(group.chat_id, "v:")
    version = (await group.table()).game.version
    group_messages = len(telegram.messages(group.chat_id))

    # Every call times out, twice: the outbox retries through it; callback answers are simply lost.
    for method in ("sendMessage", "editMessageText", "answerCallbackQuery"):
        telegram.fail_next(method, status=0, description="Timed out", times=ATTEMPTS - 1)
    choices = (True, False, True, False, False)  # rejected: the votes are revealed at once
    answers = []
    for seat, approve in enumerate(choices):
        update = vote_update(group, group.user_ids[seat], approve)
        await group.send(update)
        while update["callback_query"]["id"] not in telegram.callback_answers and seat < 4:
            # The player saw no answer and presses again (even the other button): it is not counted twice.
            assert len(answers) < 10
            update = vote_update(group, group.user_ids[seat], not approve)
            await group.send(update)
            answers.append(telegram.callback_answers.get(update["callback_query"]["id"]))
    assert answers and all(a is None or a["text"] == "You have already voted." for a in answers)
    assert answers[-1] is not None

    game = (await group.table()).game
    assert game.version == version + 5
    assert game.phase is Phase.PROPOSING
    assert game.current_round.proposals[0].votes == choices
    # The group: the same ballot message, now with the reveal; no message posted twice.
    revealed = plain_text(telegram.message(group.chat_id, ballot.message_id).text)
    assert "👍 Ann, Cy" in revealed and "👎 Bob, Dan, Eve" in revealed and "Rejected 2–3." in revealed
    assert len(telegram.messages(group.chat_id)) == group_messages
    # The next leader's keyboard, once.
    leader = group.user_ids[game.leader]
    assert len([m for m in telegram.messages(leader) if "you are the leader" in (m.text or "")]) == 1
    assert await redis.llen(keys.outbox(group.game_id)) == 0

    table = await group.play(AlwaysApprove(rng=random.Random(7)))
    assert table.game.is_over
    assert await redis.llen(keys.outbox(group.game_id)) == 0


async def test_messages_wait_out_a_long_telegram_outage_and_the_clock_sends_them(
    make_bot, telegram, redis, short_timings
):
    group = await started_on(await make_bot(2), telegram)
    team = list(range(team_size(await group.table())))
    await propose(group, team)
    telegram.fail_next("sendMessage", status=0, description="Timed out", times=ATTEMPTS + 1)
    for seat in range(5):
        await group.send(vote_update(group, group.user_ids[seat], True))
    game = (await group.table()).game
    assert game.phase is Phase.MISSION
    # Telegram could not be reached: the card prompts are still queued, none was thrown away.
    assert await redis.llen(keys.outbox(group.game_id)) > 0
    service = group.application.bot_data["service"]
    for _ in range(3):
        await service.fire_due()
    assert await redis.llen(keys.outbox(group.game_id)) == 0
    for seat in team:
        assert len([m for m in telegram.messages(group.user_ids[seat]) if "Play your card" in (m.text or "")]) == 1


async def test_a_game_that_ended_before_its_first_message_went_out_is_forgotten_in_time(
    make_bot, telegram, redis, short_timings
):
    """A lobby opened while Telegram could not be reached closed (its time ran out) before its message
    went out. Its messages are delivered afterwards, and the ids they leave behind are forgotten with
    the game a week later, not kept for good (a Redis hash without an expiry)."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=5)
    telegram.fail_next("sendMessage", status=0, description="Timed out", times=ATTEMPTS)
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    assert await redis.llen(keys.outbox(group.game_id)) == 1  # the lobby's message waits
    service = application.bot_data["service"]
    await service.fire_due((await group.table()).deadline + 1)
    assert not (await group.table()).is_active
    await service.fire_due()
    assert await redis.llen(keys.outbox(group.game_id)) == 0
    assert telegram.messages(group.chat_id), "the lobby's message was not delivered"
    assert await redis.exists(keys.messages(group.game_id))
    for key in (keys.game(group.game_id), keys.messages(group.game_id)):
        assert 0 < await redis.ttl(key) <= FINISHED_GAME_SECONDS, key


# ---------------------------------------------------------------- the outbox: in order, none lost


def test_an_item_is_skipped_only_when_a_later_item_of_its_key_makes_it_redundant():
    chat = -100
    first = Edit(chat, "board:1", "first message, final")
    # Edited again next: only the later edit needs to go out.
    assert _superseded(first, [Edit(chat, "board:1", "first message, later")])
    assert _superseded(first, [Send(7, "elsewhere"), Edit(chat, "board:2", "x"), Edit(chat, "board:1", "later")])
    # A new message takes the key first (/status posting the board again): the edit is still owed
    # to the old message, whatever edits the new one gets afterwards.
    assert not _superseded(first, [Send(chat, "again", key="board:1"), Edit(chat, "board:1", "again, edited")])
    # Other keys, other chats and sends never make an edit redundant.
    assert not _superseded(first, [Edit(chat, "board:2", "x"), Edit(7, "board:1", "y"), Send(chat, "z")])
    assert not _superseded(first, [])
    assert not _superseded(Send(chat, "new", key="board:1"), [Edit(chat, "board:1", "edited")])
    # A group message of a key is skipped only when a later copy takes the key (/status sent again while
    # it waited), and so are the edits of it; the edit that takes the buttons off the copy before still goes.
    copy = Send(chat, "copy", key="board:1")
    assert _superseded(copy, [Edit(chat, "board:1", "copy, bare"), Send(chat, "newer copy", key="board:1")])
    assert _superseded(first, [copy, Edit(chat, "board:1", "copy, bare"), Send(chat, "newer copy", key="board:1")])
    assert not _superseded(first, [copy, Edit(chat, "board:1", "copy, edited")])
    assert not _superseded(copy, [Send(chat, "other", key="board:2"), Send(chat, "copy", key="board:3")])
    # Never a private message, nor a message without a key.
    assert not _superseded(Send(7, "prompt", key="card:3:0"), [Send(7, "prompt", key="card:3:0")])
    assert not _superseded(Send(chat, "note"), [Send(chat, "note")])


async def test_an_edit_before_a_new_message_of_its_key_reaches_the_old_message(make_bot, telegram, redis):
    application = await make_bot(1)
    outbox = application.bot_data["service"].outbox
    telegram.add_group(-100, "Demo group")
    game_id = "0123456789"

    async def queue_and_drain(*items) -> None:
        await redis.rpush(keys.outbox(game_id), *[outgoing.dumps(item) for item in items])
        await outbox.drain(game_id)
        assert await redis.llen(keys.outbox(game_id)) == 0

    vote = ((Button("👍", data="v:0123456789:1:a"),),)
    await queue_and_drain(Send(-100, "old board", vote, key="board:1"))
    [old] = telegram.messages(-100)

    # Queued together, as one change (the votes revealed, then /status) would queue them.
    before = len(telegram.calls)
    await queue_and_drain(
        Edit(-100, "board:1", "old board, revealed", vote),  # edited again next: skipped
        Edit(-100, "board:1", "old board, revealed"),  # the old copy loses its buttons
        Send(-100, "new board", vote, key="board:1"),  # the new copy takes the key
        Edit(-100, "board:1", "new board, revealed"),  # and later edits reach it
    )
    assert [(method, int(params["chat_id"]), params["text"]) for method, params in telegram.calls[before:]] == [
        ("editMessageText", -100, "old board, revealed"),
        ("sendMessage", -100, "new board"),
        ("editMessageText", -100, "new board, revealed"),
    ]
    assert int(telegram.calls[before][1]["message_id"]) == old.message_id
    old_now, new = telegram.messages(-100)
    assert (old_now.message_id, old_now.text, old_now.buttons()) == (old.message_id, "old board, revealed", [])
    assert new.message_id > old.message_id and new.text == "new board, revealed"
    assert await redis.hget(keys.messages(game_id), "board:1") == f"-100:{new.message_id}"


async def test_a_write_whose_answer_was_lost_and_that_ran_again_counts_once(make_bot, telegram, redis, monkeypatch):
    """Redis ran the compare-and-set, the connection broke before its answer arrived, and the
    client ran it again: the second run finds the document it wrote itself. The press counts once
    and its presser is told it counted."""
    application = await make_bot(1)
    group = await started_on(application, telegram)
    await propose(group, range(team_size(await group.table())))
    store = group.store
    script = store._update

    async def ran_twice(*args, **kwargs):
        await script(*args, **kwargs)
        return await script(*args, **kwargs)

    monkeypatch.setattr(store, "_update", ran_twice)
    voter = group.user_ids[2]
    update = vote_update(group, voter, approve=True)
    await group.send(update)
    monkeypatch.undo()
    game = (await group.table()).game
    assert game.pending_votes[2] is True and sum(v is not None for v in game.pending_votes) == 1
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"].startswith("You voted")
    table = await group.play(AlwaysApprove(rng=random.Random(4)))
    assert table.game.is_over


async def test_a_redis_that_stops_answering_fails_a_command_instead_of_hanging_it(tmp_path, monkeypatch):
    """A Redis that accepts connections but answers nothing (frozen, or cut off by the network without
    the connection being closed) made every command wait until TCP gave up, minutes later: the
    player's press hung and no retry or failover began. A command now fails as a refused connection
    would, once its retries have waited `SOCKET_TIMEOUT` each."""
    monkeypatch.setattr(redis_client, "SOCKET_TIMEOUT", 0.3)
    server = RedisServer(tmp_path, appendonly=False)
    server.start()
    redis = redis_client.connect(server.url)
    try:
        await redis.set("k", "v")
        os.kill(server.process.pid, signal.SIGSTOP)
        with pytest.raises(RedisError):
            await asyncio.wait_for(redis.get("k"), 30)
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
        await redis.aclose()
        server.stop()


# ---------------------------------------------------------------- a deadline while Redis is down


async def test_a_deadline_that_passes_while_redis_is_down_leaves_the_players_their_time(
    aof_server, bot_on, telegram, caplog
):
    """The mission's time runs out while no worker can reach Redis: its team, told the game was
    unavailable, could not play their cards. When Redis answers again the deadline does not play their
    cards for them (a spy's Fail counted as a Success): the mission gets back the time it had left."""
    application = await bot_on(aof_server.url, seed=5, clock_seconds=0.2)
    service, data = application.bot_data["service"], application.bot_data
    await application.start()
    try:
        group = await started_on(application, telegram)
        team = list(range(team_size(await group.table())))
        await propose(group, team)
        for seat in range(5):
            await group.send(vote_update(group, group.user_ids[seat], approve=True))
        assert (await group.table()).game.phase is Phase.MISSION
        # One second of the mission's time is left when Redis goes away.
        deadline = service.clock() + 1.0
        await group.store.update(
            group.game_id,
            lambda table: Change(replace(table, deadline=deadline, reminder_at=None)),
            settle_deadline=True,
        )
        await until(lambda: not data["recovering"])
        aof_server.kill()
        await until(lambda: data["recovering"])
        await asyncio.sleep(2.0)  # the deadline passes meanwhile
        aof_server.start()
        await until(lambda: not data["recovering"])
        await asyncio.sleep(0.5)  # more ticks

        table = await group.table()
        assert table.game.phase is Phase.MISSION and table.game.pending_cards == ()
        assert table.deadline > service.clock() + 10  # the step's time, from Redis's return
        first = group.user_ids[team[0]]
        await group.press(first, first, "c:", ":s")
        assert len((await group.table()).game.pending_cards) == 1
    finally:
        await application.stop()
    assert errors(caplog) == []


# ---------------------------------------------------------------- Redis down when the bot starts


async def test_a_bot_started_while_redis_is_down_waits_for_it_and_then_plays(
    tmp_path, bot_on, telegram, caplog, short_timings
):
    """A worker started before its Redis (a machine booting both, Redis restarting) waits for it instead
    of exiting with a traceback: run without a supervisor that starts it again, the bot stayed dead."""
    server = RedisServer(tmp_path, appendonly=False)
    starting = asyncio.create_task(bot_on(server.url, seed=1))
    try:
        await asyncio.sleep(1.5)
        assert not starting.done(), starting.exception() if starting.done() else None
        server.start()
        application = await asyncio.wait_for(starting, 30)
        group = await started_on(application, telegram)
        assert (await group.table()).game.phase is Phase.PROPOSING
    finally:
        if not starting.done():
            starting.cancel()
        server.stop()
    assert errors(caplog) == []
    assert any("waiting for it" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


async def test_a_worker_that_waited_for_redis_at_start_leaves_the_players_the_time_they_had(
    aof_server, bot_on, telegram, caplog, short_timings
):
    """Redis goes away with one second of a mission's time left, and a worker starts meanwhile (the
    others stopped, or restarted): the deadline that passed while it waited is not met for the team."""
    first = await bot_on(aof_server.url, seed=5)  # ticks no clock of its own
    group = await started_on(first, telegram)
    team = list(range(team_size(await group.table())))
    await propose(group, team)
    for seat in range(5):
        await group.send(vote_update(group, group.user_ids[seat], approve=True))
    deadline = first.bot_data["service"].clock() + 1.0
    await group.store.update(
        group.game_id, lambda table: Change(replace(table, deadline=deadline, reminder_at=None)), settle_deadline=True
    )
    aof_server.kill()
    starting = asyncio.create_task(bot_on(aof_server.url, seed=6, clock_seconds=0.2))
    await asyncio.sleep(2.0)
    aof_server.start()
    second = await asyncio.wait_for(starting, 30)
    await second.start()
    try:
        await until(lambda: not second.bot_data["recovering"])
        await asyncio.sleep(0.5)  # more ticks
        table = await group.table()
        assert table.game.phase is Phase.MISSION and table.game.pending_cards == ()
        assert table.deadline > second.bot_data["service"].clock() + 10
    finally:
        await second.stop()
    assert errors(caplog) == []


# ---------------------------------------------------------------- word of the group while Redis is down


async def test_word_of_the_group_that_came_while_redis_was_down_is_acted_on_once_it_is_back(
    aof_server, bot_on, telegram, caplog
):
    """A player leaves the group and the bot is removed from it while Redis does not answer. Nobody waits
    for an answer to that word (Telegram does not send it again), and it was dropped: the lobby stayed
    open, its leaver seated, and it would have started at its deadline in a group the bot is not in. It is
    acted on as soon as Redis answers again, and nothing is said in the group meanwhile."""
    application = await bot_on(aof_server.url, seed=7, clock_seconds=0.2)
    data = application.bot_data
    await application.start()
    try:
        group = SimulatedGroup(telegram, application, title="Night", players=6)
        await group.open_lobby_and_join()
        leaver, stayed = group.user_ids[5], group.user_ids[:5]
        before = {user: texts(telegram, user) for user in group.user_ids}
        said = len([m for m in telegram.messages(group.chat_id) if m.from_bot])
        await until(lambda: not data["recovering"])
        aof_server.kill()
        await group.send(telegram.leave_group(group.chat_id, leaver))
        await group.send(telegram.remove_bot(group.chat_id))
        assert len([m for m in telegram.messages(group.chat_id) if m.from_bot]) == said
        await until(lambda: data["recovering"])
        aof_server.start()
        await until(lambda: not data["recovering"])
        await asyncio.sleep(0.5)  # more ticks

        table = await group.table()
        assert table.stage is Stage.CANCELLED and table.seat_of(leaver) is None
        removed = "I was removed from the group «Night», so the game that was being gathered there will not start."
        for user in stayed:
            assert texts(telegram, user) == before[user] + [removed]
        assert texts(telegram, leaver) == before[leaver]
    finally:
        await application.stop()
    assert errors(caplog) == []
