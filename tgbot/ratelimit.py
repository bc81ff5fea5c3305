"""Telegram's flood limits kept across every worker: about 30 messages a second per bot and
20 a minute per group, counted in Redis, and a 429's `retry_after` honoured by all workers.

python-telegram-bot's `AIORateLimiter` counts within one process; behind a load balancer
each worker would spend the whole budget. This limiter has the same shape (a
`BaseRateLimiter`) but keeps its counters in Redis: a generic cell rate algorithm in one
Lua script per request, so workers never race on a counter.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError
from telegram.error import RetryAfter, TelegramError
from telegram.ext import BaseRateLimiter

from tgbot import keys
from tgbot.outbox import Guarded, retry_after_seconds

log = logging.getLogger(__name__)

# Returns how many milliseconds to wait before the request may go (0: go now, and counted).
# A wait is at least 1 ms: Redis turns a Lua number into an integer by rounding down, and a
# fraction of a millisecond must not come back as "go" without having been counted.
# ARGV: the interval between requests, the burst (ms), the rate's whole window (ms). No use of the
# budget puts the counter further ahead than the window: one that is was written by a clock ahead of
# this Redis's (a failover to a replica whose machine's clock is behind), and starts over from now
# rather than hold every request up by the difference.
_GCRA = """
local now_parts = redis.call('TIME')
local now = now_parts[1] * 1000 + math.floor(now_parts[2] / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now or tat > now + tonumber(ARGV[3]) then tat = now end
if tat - burst > now then return math.max(1, math.ceil(tat - burst - now)) end
local next_tat = tat + interval
redis.call('SET', KEYS[1], next_tat, 'PX', math.ceil(next_tat - now + burst))
return 0
"""

PAUSE_KEY = keys.RATE_PAUSE

# What an answer to someone (a reply to a command, the pressed message edited) leaves of a group's
# budget for the games' own messages, and how long it may wait for its turn (`Answer`).
ANSWER_RESERVE = 5
ANSWER_PATIENCE_SECONDS = 5.0
# Calls that post no message: Telegram's flood limits are not theirs, nor a 429's pause (answering a
# press that waited one out kept the presser's spinner on, in every group, and their update open).
UNMETERED = frozenset({"answerCallbackQuery"})
# Questions about a chat post nothing in it: they wait out a 429's pause, but spend none of the messages
# a group or the bot may send (a player joining from a link, asked whether they are in the group, took
# one of the group's 20 a minute, holding the lobby's and the game's own messages back).
QUESTIONS = frozenset({"getChat", "getChatMember", "getChatAdministrators", "getChatMemberCount", "getMe"})


@dataclass(frozen=True)
class Answer:
    """`rate_limit_args` of an answer to someone's command. It takes a group's budget only while
    `reserve` messages of it remain for the games' own messages (a proposal's board, a result), and it
    is not sent (`Crowded`) rather than wait longer than `patience` seconds for its turn. So commands
    sent over and over in a group (each answered) neither put the game's messages behind their answers
    nor hold their updates open for minutes: a webhook worker answers Telegram only once the handler is
    done, and Telegram sends a bot at most 40 updates at a time.

    `patience=None`: an answer someone must act on (it carries the buttons they press), which waits
    for its turn however long it takes (`tgbot.handlers.ask` keeps such waits off the update)."""

    reserve: int = ANSWER_RESERVE
    patience: float | None = ANSWER_PATIENCE_SECONDS


MUST_ARRIVE = Answer(patience=None)


class Crowded(TelegramError):
    """An `Answer` would have waited longer than its patience: it was not sent."""


class RedisRateLimiter(BaseRateLimiter[int | Guarded | Answer]):
    # `rate_limit_args` may be a `tgbot.outbox.Guarded`: its check runs after the wait, right before
    # the request goes out (the outbox's lock, which a long wait could have let lapse); or an `Answer`.
    checks_before_send = True
    takes_answers = True

    def __init__(
        self,
        redis: Redis,
        bot_rate: tuple[int, float] = (30, 1.0),
        group_rate: tuple[int, float] = (20, 60.0),
        max_retries: int = 3,
    ) -> None:
        self.redis = redis
        self.bot_rate = bot_rate
        self.group_rate = group_rate
        self.max_retries = max_retries
        self._take = redis.register_script(_GCRA)

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def _wait_turn(
        self, key: str, rate: tuple[int, float], reserve: int = 0, give_up: float | None = None
    ) -> None:
        """Wait until the request may go, counted; `reserve`: messages of the budget it must leave;
        `give_up`: `Crowded` if it would have to wait past that moment (the loop's clock)."""
        count, seconds = rate
        interval = seconds * 1000 / count
        burst = interval * max(0, count - 1 - reserve)
        while True:
            wait_ms = await self._take(keys=[key], args=[interval, burst, seconds * 1000])
            if not wait_ms:
                return
            await self._sleep(int(wait_ms) / 1000, give_up)

    async def _wait_for_pause(self, give_up: float | None = None) -> None:
        remaining = await self.redis.pttl(PAUSE_KEY)
        if remaining and remaining > 0:
            await self._sleep(remaining / 1000, give_up)

    @staticmethod
    async def _sleep(seconds: float, give_up: float | None) -> None:
        if give_up is not None and asyncio.get_running_loop().time() + seconds > give_up:
            raise Crowded(f"an answer would wait {seconds:.1f} s for the flood limits")
        await asyncio.sleep(seconds)

    async def _before(self, chat_id: Any, answer: Answer | None = None) -> None:
        patience = None if answer is None else answer.patience
        give_up = None if patience is None else asyncio.get_running_loop().time() + patience
        try:
            await self._wait_for_pause(give_up)
            if chat_id is None:
                return
            if isinstance(chat_id, int) and chat_id < 0 or isinstance(chat_id, str):
                reserve = 0 if answer is None else answer.reserve
                await self._wait_turn(keys.rate_chat(chat_id), self.group_rate, reserve, give_up)
            await self._wait_turn(keys.RATE_BOT, self.bot_rate, 0, give_up)
        except RedisError as error:
            # Without Redis the bot can still say it is unavailable; it must not wait forever to do so.
            log.warning("rate limiter without storage (%s): sending unmetered", type(error).__name__)

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | Guarded | None,
    ) -> Any:
        if endpoint in UNMETERED:
            return await callback(*args, **kwargs)
        chat_id = None if endpoint in QUESTIONS else data.get("chat_id")  # (None: no chat's budget)
        with contextlib.suppress(TypeError, ValueError):
            chat_id = int(chat_id) if chat_id is not None else None
        check = None
        answer = None
        if isinstance(rate_limit_args, Guarded):
            check, rate_limit_args = rate_limit_args.check, rate_limit_args.retries
        elif isinstance(rate_limit_args, Answer):
            answer, rate_limit_args = rate_limit_args, None
        retries = rate_limit_args if rate_limit_args is not None else self.max_retries
        for attempt in range(retries + 1):
            await self._before(chat_id, answer)
            if check is not None:
                await check()
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as flood:
                if attempt == retries:
                    raise
                pause = retry_after_seconds(flood) + 0.1
                log.info("flood control on %s: every worker pauses %.1f s", endpoint, pause)
                try:
                    await self.redis.set(PAUSE_KEY, "1", px=int(pause * 1000))
                except RedisError:
                    await asyncio.sleep(pause)
        raise AssertionError("unreachable")
