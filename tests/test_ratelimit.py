"""The flood limits are shared by every worker through Redis, and a 429 pauses them all."""

from __future__ import annotations

import asyncio
import time

import pytest
from telegram.error import RetryAfter
from telegram.ext import ExtBot

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
    first, second = limiters(redis, group_rate=(4, 1.0), bot_rate=(1000, 1.0), group_margin=0.05)
    sent = []
    started = time.monotonic()
    await asyncio.gather(*(send_through(w, -100, sent, i) for i, w in enumerate([first, second] * 4)))
    assert len(sent) == 8
    # Four go at once; the other four once the first have left the group's window (a second), whichever
    # worker sends them.
    times = sorted(at - started for _, at in sent)
    assert times[3] - times[0] < 0.5
    assert times[4] - times[0] >= 1.0


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
    (limiter,) = limiters(redis, count=1, group_rate=(4, 1.0), bot_rate=(1000, 1.0), group_margin=0.05)
    sent = []

    async def send(label, args):
        async def call():
            sent.append((label, time.monotonic()))
            return True

        return await limiter.process_request(call, (), {}, "sendMessage", {"chat_id": -100}, args)

    # Of the group's four a second, answers take two; a plain answer that would wait is dropped, an answer
    # that must arrive waits until the first has left the window.
    started = time.monotonic()
    await send("answer", Answer(reserve=2))
    await send("question", Answer(reserve=2, patience=None))
    with pytest.raises(Crowded):
        await send("plain", Answer(reserve=2, patience=0.1))
    await send("question again", Answer(reserve=2, patience=None))
    assert [label for label, _ in sent] == ["answer", "question", "question again"]
    assert sent[2][1] - started >= 1.0
    # Then, as before, the game's own messages find their share.
    board_sent = time.monotonic()
    await send_through(limiter, -100, [], "board")
    assert time.monotonic() - board_sent < 0.2


async def test_a_log_written_by_a_clock_ahead_holds_a_message_up_one_window_at_most(redis):
    """A group's messages stamped by a Redis whose clock was ten minutes ahead (the group's master failed
    over to a replica whose machine's clock is behind) count from now: they hold the group's messages up
    for one window at most, not for ten minutes more."""
    (limiter,) = limiters(redis, count=1, group_rate=(4, 60.0), bot_rate=(1000, 1.0))
    seconds, micros = await redis.time()
    now_ms = seconds * 1000 + micros // 1000
    await redis.zadd(keys.rate_chat(-100), {f"ahead {i}": now_ms + 10 * 60_000 for i in range(3)})
    sent = []
    await asyncio.wait_for(send_through(limiter, -100, sent, "board"), 2.0)
    assert [label for label, _ in sent] == ["board"]
    stamps = [score for _, score in await redis.zrange(keys.rate_chat(-100), 0, -1, withscores=True)]
    assert len(stamps) == 4 and max(stamps) < now_ms + 2000
    # The four of the window are used: the fifth waits for the window (61 s), not for ten minutes.
    with pytest.raises(Crowded, match="would wait 6[01]"):
        await limiter.process_request(
            lambda: asyncio.sleep(0), (), {}, "sendMessage", {"chat_id": -100}, Answer(reserve=0, patience=1.0)
        )


# ---------------------------------------------------------------- as Telegram counts it, across workers

GROUP = -100


@pytest.fixture
async def workers(redis, telegram):
    """`await workers(count, **rates)`: bots on the fake Bot API, each with a limiter of its own on the
    same Redis, as separate worker processes have."""
    started = []

    async def start(count: int = 3, **rates) -> list[ExtBot]:
        telegram.add_group(GROUP, "Busy group")
        for _ in range(count):
            bot = ExtBot(telegram.token, request=telegram.request(), rate_limiter=RedisRateLimiter(redis, **rates))
            await bot.initialize()
            started.append(bot)
        return started[-count:]

    yield start
    for bot in started:
        await bot.shutdown()


async def test_no_sliding_minute_holds_more_than_twenty_of_a_groups_messages(workers, telegram):
    """Telegram lets a bot post 20 messages a minute in a group. The generic cell rate algorithm let its burst
    (19) through and then one message every 3 s, 39 within the first minute (here a second stands for the
    minute): sends and edits, from three workers, now never more than 20 in any minute, measured where
    Telegram gets them."""
    bots = await workers(group_rate=(20, 1.0), group_margin=0.05)
    started = time.monotonic()
    sent = await asyncio.wait_for(
        asyncio.gather(*(bot.send_message(GROUP, f"{w}.{i}") for w, bot in enumerate(bots) for i in range(15))), 20
    )
    await asyncio.wait_for(
        asyncio.gather(*(bots[i % 3].edit_message_text(f"{i}", GROUP, m.message_id) for i, m in enumerate(sent[:15]))),
        20,
    )
    took = time.monotonic() - started
    assert len(telegram.messages(GROUP)) == 45
    assert telegram.most_in_window(GROUP, 1.0) <= 20, telegram.most_in_window(GROUP, 1.0)
    assert took < 4.5  # 60 in three windows: the budget is used, not wasted


def flood(telegram, seconds: int) -> None:
    """Telegram answers the next sendMessage with a 429: retry after `seconds`."""
    telegram.fail_next(
        "sendMessage", status=429, description=f"Too Many Requests: retry after {seconds}", retry_after=seconds
    )


async def until(condition, timeout: float = 5.0) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < give_up, "timed out"
        await asyncio.sleep(0.005)


async def test_a_message_waiting_for_its_groups_turn_waits_out_a_pause_another_worker_was_told(workers, telegram):
    """A request looked for a pause once, before it waited for its group's turn: one that waited while
    another worker was told to pause went out during the pause. Now every request looks again after its
    waits, right before it goes."""
    bots = await workers(group_rate=(5, 1.0), group_margin=0.05)
    sends = asyncio.gather(*(bot.send_message(GROUP, f"{w}.{i}") for w, bot in enumerate(bots) for i in range(5)))
    await until(lambda: len(telegram.messages(GROUP)) >= 5)
    flood(telegram, 1)  # the next message that reaches Telegram: the others wait for their turn meanwhile
    await asyncio.wait_for(sends, 20)
    assert len(telegram.flood_waits) == 1
    assert telegram.during_flood_waits() == []
    assert len(telegram.messages(GROUP)) == 15  # the one refused went again after the pause


async def test_a_429_on_the_last_try_still_pauses_every_worker(workers, telegram):
    """A request out of retries raised Telegram's 429 without telling the other workers to pause: they went
    on sending through the retry_after."""
    told, other = await workers(count=2, max_retries=0)
    flood(telegram, 1)
    with pytest.raises(RetryAfter):
        await told.send_message(GROUP, "refused")
    await asyncio.sleep(0.2)  # a moment later, on another worker
    await asyncio.wait_for(other.send_message(GROUP, "after the pause"), 5)
    assert telegram.during_flood_waits() == []
    assert [m.text for m in telegram.messages(GROUP)] == ["after the pause"]


async def test_a_shorter_retry_after_does_not_cut_a_pause_short(workers, telegram):
    """A request already on its way when another was told to wait 2 s is told to wait less (Telegram counts
    its own wait from its own refusal): the shorter pause replaced the longer one in Redis, and the workers
    sent within the first 429's retry_after."""
    told, on_its_way, other = await workers(count=3, max_retries=1)
    answered = asyncio.Event()
    tries = []

    async def telegram_answers_later():
        tries.append(time.monotonic())
        if len(tries) == 1:
            await answered.wait()
            raise RetryAfter(0)
        return True

    in_flight = asyncio.create_task(
        on_its_way.rate_limiter.process_request(telegram_answers_later, (), {}, "sendMessage", {"chat_id": GROUP}, None)
    )
    await asyncio.sleep(0.05)  # it passed the limiter before any pause
    flood(telegram, 2)
    refused = asyncio.create_task(told.send_message(GROUP, "refused, then sent after the pause"))
    await until(lambda: telegram.flood_waits)
    answered.set()
    await asyncio.sleep(0.2)  # a moment later, on another worker
    await asyncio.wait_for(asyncio.gather(in_flight, refused, other.send_message(GROUP, "after the pause")), 5)
    assert telegram.during_flood_waits() == []
    assert tries[1] >= telegram.flood_waits[0][1]  # the one told to wait less waited the whole pause too
    assert len(telegram.messages(GROUP)) == 2
