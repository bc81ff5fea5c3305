"""The flood limits are shared by every worker through Redis, and a 429 pauses them all."""

from __future__ import annotations

import asyncio
import time

import pytest
from telegram.error import RetryAfter

from tgbot import keys
from tgbot.ratelimit import PAUSE_KEY, Answer, Crowded, RedisRateLimiter


def limiters(redis, count=2, **rates):
    return [RedisRateLimiter(redis, **rates) for _ in range(count)]


async def send_through(limiter, chat_id, sent, label):
    async def call():
        sent.append((label, time.monotonic()))
        return True

    return await limiter.process_request(call, (), {}, "sendMessage", {"chat_id": chat_id}, None)


async def test_a_group_budget_is_shared_by_two_workers(redis):
    first, second = limiters(redis, group_rate=(4, 1.0), bot_rate=(1000, 1.0))
    sent = []
    started = time.monotonic()
    await asyncio.gather(*(send_through(w, -100, sent, i) for i, w in enumerate([first, second] * 4)))
    assert len(sent) == 8
    # Four go at once; the other four follow at the group's rate (a quarter second apart),
    # whichever worker sends them.
    times = sorted(at - started for _, at in sent)
    assert times[7] - times[0] >= 0.9
    assert times[3] - times[0] < times[7] - times[3]


async def test_private_chats_only_count_against_the_bot_budget(redis):
    (limiter,) = limiters(redis, count=1, group_rate=(1, 60.0), bot_rate=(1000, 1.0))
    sent = []
    # Counted as one group at one message a minute, these would take nine minutes.
    await asyncio.wait_for(asyncio.gather(*(send_through(limiter, user, sent, user) for user in range(1, 11))), 10)
    assert len(sent) == 10


async def test_questions_about_a_group_leave_its_messages_their_whole_budget(redis):
    """Asking Telegram who is in a group (whether a player joining from a link is a member, whether the
    presser is an admin) posts no message there: it spends none of the group's 20 messages a minute, so
    ten people joining a lobby in a minute do not hold up the lobby's and the game's own messages."""
    (limiter,) = limiters(redis, count=1, group_rate=(20, 60.0), bot_rate=(1000, 1.0))

    async def ask(endpoint):
        async def call():
            return True

        return await limiter.process_request(call, (), {}, endpoint, {"chat_id": -100, "user_id": 5}, None)

    for _ in range(20):
        await asyncio.wait_for(ask("getChatMember"), 1)
    await asyncio.wait_for(ask("getChat"), 1)
    sent = []
    started = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(send_through(limiter, -100, sent, i) for i in range(19))), 10)
    assert len(sent) == 19 and time.monotonic() - started < 1.0


async def test_a_flood_answer_pauses_every_worker(redis):
    first, second = limiters(redis)
    calls = []

    async def flooded():
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise RetryAfter(1)
        return True

    started = time.monotonic()
    assert await first.process_request(flooded, (), {}, "sendMessage", {"chat_id": 5}, None)
    assert calls[1] - started >= 1.0
    # While one worker was told to wait, the pause is in Redis for the others too.
    await redis.set(PAUSE_KEY, "1", px=600)
    other_started = time.monotonic()
    await send_through(second, 7, [], "other")
    assert time.monotonic() - other_started >= 0.5


async def test_flood_answers_beyond_the_retries_are_raised(redis):
    (limiter,) = limiters(redis, count=1, max_retries=1)

    async def always_flooded():
        raise RetryAfter(0)

    with pytest.raises(RetryAfter):
        await limiter.process_request(always_flooded, (), {}, "sendMessage", {"chat_id": 5}, None)


async def test_an_answer_leaves_the_group_its_reserve_and_is_dropped_rather_than_kept_waiting(redis):
    (limiter,) = limiters(redis, count=1, group_rate=(4, 60.0), bot_rate=(1000, 1.0))
    sent = []

    async def answer(chat_id, label):
        async def call():
            sent.append(label)
            return True

        args = Answer(reserve=2, patience=5.0)
        return await limiter.process_request(call, (), {}, "sendMessage", {"chat_id": chat_id}, args)

    # Of the group's four at once, answers take two; the next is a turn (15 s) away: not waited for.
    await answer(-100, "answer 1")
    await answer(-100, "answer 2")
    with pytest.raises(Crowded):
        await answer(-100, "answer 3")
    # The game's own messages still have the two left.
    await send_through(limiter, -100, [], "board")
    await send_through(limiter, -100, [], "result")
    # Another group's budget is its own; a private chat counts against the bot's only.
    await answer(-200, "elsewhere")
    await answer(7, "in private")
    assert sent == ["answer 1", "answer 2", "elsewhere", "in private"]


async def test_an_answer_that_must_arrive_waits_for_its_turn_and_still_leaves_the_reserve(redis):
    (limiter,) = limiters(redis, count=1, group_rate=(4, 2.0), bot_rate=(1000, 1.0))
    sent = []

    async def send(label, args):
        async def call():
            sent.append((label, time.monotonic()))
            return True

        return await limiter.process_request(call, (), {}, "sendMessage", {"chat_id": -100}, args)

    # Of the group's four at once (a turn every half second), answers take two; a plain answer that
    # would wait is dropped, an answer that must arrive waits for the next turn.
    started = time.monotonic()
    await send("answer", Answer(reserve=2))
    await send("question", Answer(reserve=2, patience=None))
    with pytest.raises(Crowded):
        await send("plain", Answer(reserve=2, patience=0.1))
    await send("question again", Answer(reserve=2, patience=None))
    assert [label for label, _ in sent] == ["answer", "question", "question again"]
    assert sent[2][1] - started >= 0.45
    # Then, as before, the game's own messages find their share.
    board_sent = time.monotonic()
    await send_through(limiter, -100, [], "board")
    assert time.monotonic() - board_sent < 0.2


async def test_a_counter_written_by_a_clock_ahead_holds_no_message_up(redis):
    """A group's counter stamped by a Redis whose clock was ten minutes ahead (the group's master failed
    over to a replica whose machine's clock is behind) lies further ahead than any use of the budget can
    put it: the message goes at once, not ten minutes later, and the budget counts on from there."""
    (limiter,) = limiters(redis, count=1, group_rate=(4, 60.0), bot_rate=(1000, 1.0))
    seconds, micros = await redis.time()
    await redis.set(keys.rate_chat(-100), seconds * 1000 + micros // 1000 + 10 * 60_000)
    sent = []
    await asyncio.wait_for(send_through(limiter, -100, sent, "board"), 2.0)
    assert [label for label, _ in sent] == ["board"]
    # The budget holds from there: three more at once, the fifth a turn (15 s) away.
    for label in ("2", "3", "4"):
        await send_through(limiter, -100, sent, label)
    with pytest.raises(Crowded):
        await limiter.process_request(
            lambda: asyncio.sleep(0), (), {}, "sendMessage", {"chat_id": -100}, Answer(reserve=0, patience=1.0)
        )
