"""Telegram's flood limits kept across every worker: about 30 messages a second per bot and
20 a minute per group, counted in Redis, and a 429's `retry_after` honoured by all workers.

python-telegram-bot's `AIORateLimiter` counts within one process; behind a load balancer
each worker would spend the whole budget. This limiter has the same shape (a
`BaseRateLimiter`) but keeps its counters in Redis, each in one Lua script per request (one key
each, so that they run on a Redis Cluster too), so workers never race on a counter:

- a group's messages (everything the bot does in the group: sending, editing, deleting; like
  `AIORateLimiter`, which counts every request naming a group) in a log of when each went, a sorted set:
  a message goes only while fewer than 20 went in the last minute (`GROUP_MARGIN_SECONDS` more), so no
  sliding minute ever holds more than 20 of them. (A generic cell rate algorithm with a burst, which
  this replaced, let the burst and then one message every 3 s through: 39 in the first minute.)
- the bot's 30 a second in a generic cell rate algorithm, which a burst may run ahead of a little.
- a 429's pause, in Redis for every worker (`PAUSE_KEY`) and in the worker that was told (at once, before
  Redis has it). It is looked at again after every wait, right before the request goes: a request that
  waited for its group's turn while another worker was told to pause does not go until the pause ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
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

# The bot's rate. Returns how many milliseconds to wait before the request may go (0: go now, and counted).
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

# A group's log: when each of its messages in the window went (ms, Redis's clock), one member each.
# ARGV: the window (ms), how many the log may hold for this request to go, its member. Returns 0 (go:
# stamped now) or how many milliseconds until the log holds fewer. An entry stamped ahead of this clock
# (by a master whose clock was ahead, before a failover) counts from now: its message held up for one
# window at most, not for the difference.
_WINDOW = """
local now_parts = redis.call('TIME')
local now = now_parts[1] * 1000 + math.floor(now_parts[2] / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')) do
    redis.call('ZADD', KEYS[1], now, member)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local held = redis.call('ZCARD', KEYS[1])
if held < limit then
    redis.call('ZADD', KEYS[1], now, ARGV[3])
    redis.call('PEXPIRE', KEYS[1], window)
    return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], held - limit, held - limit, 'WITHSCORES')
return math.max(1, math.ceil(tonumber(oldest[2]) + window - now))
"""

# Pause every worker for ARGV[1] ms, unless a pause already lasts longer (a shorter retry_after, told to
# another request meanwhile, must not cut it short).
_PAUSE = """
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
    redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return 0
"""

PAUSE_KEY = keys.RATE_PAUSE
# A group's log counts back this much further than Telegram's minute: a message that took longer to reach
# Telegram than the one 20 messages after it (a new connection, a slow moment) must not make a sliding
# minute of Telegram's hold 21.
GROUP_MARGIN_SECONDS = 1.0

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
        group_margin: float = GROUP_MARGIN_SECONDS,
    ) -> None:
        self.redis = redis
        self.bot_rate = bot_rate
        self.group_rate = group_rate
        self.group_margin = group_margin
        self.max_retries = max_retries
        self._take = redis.register_script(_GCRA)
        self._log = redis.register_script(_WINDOW)
        self._pause = redis.register_script(_PAUSE)
        self._paused_until = 0.0  # this worker's own pause, on the loop's clock: a 429 it was told

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    @property
    def group_window_ms(self) -> float:
        """How far back a group's log counts its messages."""
        return (self.group_rate[1] + self.group_margin) * 1000

    def _local_pause(self) -> float:
        return max(0.0, self._paused_until - asyncio.get_running_loop().time())

    async def _pause_left(self) -> float:
        """Seconds until the pause every worker keeps ends (0: none)."""
        remaining = await self.redis.pttl(PAUSE_KEY)
        return max(self._local_pause(), remaining / 1000 if remaining and remaining > 0 else 0.0)

    async def _bot_turn(self) -> float:
        """0: the bot's turn, taken; else seconds to wait for it."""
        count, seconds = self.bot_rate
        interval = seconds * 1000 / count
        wait_ms = await self._take(keys=[keys.RATE_BOT], args=[interval, interval * (count - 1), seconds * 1000])
        return int(wait_ms) / 1000

    async def _group_turn(self, chat_id: int | str, member: str, reserve: int) -> float:
        """0: the group's turn, stamped in its log under `member`; else seconds to wait for it. `reserve`:
        turns of the group's window the request must leave."""
        limit = max(1, self.group_rate[0] - reserve)
        wait_ms = await self._log(keys=[keys.rate_chat(chat_id)], args=[self.group_window_ms, limit, member])
        return int(wait_ms) / 1000

    async def _give_back(self, chat_id: int | str, member: str) -> None:
        """A turn taken that goes unused (a pause began meanwhile, the request was given up): out of the
        group's log."""
        with contextlib.suppress(RedisError):
            await self.redis.zrem(keys.rate_chat(chat_id), member)

    @staticmethod
    async def _sleep(seconds: float, give_up: float | None) -> None:
        if give_up is not None and asyncio.get_running_loop().time() + seconds > give_up:
            raise Crowded(f"an answer would wait {seconds:.1f} s for the flood limits")
        await asyncio.sleep(seconds)

    async def _turn(self, group: int | str | None, counted: bool, member: str, reserve: int, give_up: float | None):
        """Wait for the group's turn (stamped in its log under `member`), then the bot's (both if `counted`),
        then for no pause to be in force, looked at last so that no wait comes after it. A group's turn
        that would go stale waiting (a pause, a long wait for the bot's turn) is given back and taken again
        after the wait, so that its stamp is when the message goes, give or take the margin. Returns
        whether the request holds a turn of the group's."""
        while True:
            held = counted and group is not None
            if held and (wait := await self._group_turn(group, member, reserve)):
                await self._sleep(wait, give_up)
                continue
            try:
                waited = 0.0
                while counted and (wait := await self._bot_turn()):
                    waited += wait
                    if held and waited > self.group_margin / 2:
                        break
                    await self._sleep(wait, give_up)
                else:
                    if not (wait := await self._pause_left()):
                        return held
            except BaseException:
                if held:
                    await self._give_back(group, member)
                raise
            if held:
                await self._give_back(group, member)
            await self._sleep(wait, give_up)

    async def _before(self, chat_id: Any, counted: bool, answer: Answer | None, check) -> None:
        """Everything a request waits for before it goes; it goes as soon as this returns."""
        patience = None if answer is None else answer.patience
        give_up = None if patience is None else asyncio.get_running_loop().time() + patience
        group = chat_id if isinstance(chat_id, int) and chat_id < 0 or isinstance(chat_id, str) else None
        reserve = 0 if answer is None else answer.reserve
        member = secrets.token_hex(8)
        while True:
            try:
                held = await self._turn(group, counted, member, reserve, give_up)
            except RedisError as error:
                # Without Redis the bot can still say it is unavailable; it must not wait forever to do so.
                # It still keeps out of a pause this worker was told.
                log.warning("rate limiter without storage (%s): sending unmetered", type(error).__name__)
                if pause := self._local_pause():
                    await self._sleep(pause, give_up)
                if check is not None:
                    await check()
                return
            try:
                if check is not None:
                    await check()
            except BaseException:
                if held:
                    await self._give_back(group, member)
                raise
            # A 429 this worker was told meanwhile (its own pause comes before Redis has it): the turn is
            # given back and taken again once the pause is over.
            if not (pause := self._local_pause()):
                return
            if held:
                await self._give_back(group, member)
            await self._sleep(pause, give_up)

    async def _flooded(self, endpoint: str, flood: RetryAfter) -> None:
        """Telegram said to wait: this worker waits from now, and every worker once Redis has it."""
        pause = retry_after_seconds(flood) + 0.1
        loop = asyncio.get_running_loop()
        self._paused_until = max(self._paused_until, loop.time() + pause)
        log.info("flood control on %s: every worker pauses %.1f s", endpoint, pause)
        with contextlib.suppress(RedisError):
            await self._pause(keys=[PAUSE_KEY], args=[int(pause * 1000)])

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | Guarded | Answer | None,
    ) -> Any:
        if endpoint in UNMETERED:
            return await callback(*args, **kwargs)
        chat_id = data.get("chat_id")  # (None: no chat's budget, nor the bot's)
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
            await self._before(chat_id, chat_id is not None and endpoint not in QUESTIONS, answer, check)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as flood:
                await self._flooded(endpoint, flood)
                if attempt == retries:
                    raise
        raise AssertionError("unreachable")
