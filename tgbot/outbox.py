"""Send a game's queued messages, in order, each once, exactly as Telegram lets us.

Any process may drain any game's outbox; a short Redis lock makes sure only one does at a
time, so messages of one game go out in the order their changes were stored. The lock lives
`LOCK_SECONDS` and is renewed in the background while its drain runs (flood waits included),
so a drain that dies with its process holds nobody up for long. A change that queues messages
takes the lock in the same script that stores it (`Store.update`), and this process's drain
goes on from there; otherwise the drain takes it (`_TAKE`).

Each message leaves the queue by one Lua script run right after Telegram has answered: it
checks that the message is still first, removes it, remembers the new message's id under its
key, and once the queue is empty lets the lock go (the game leaves the set of pending outboxes
after that: `tgbot.indexes`). It checks that the lock is still ours too, unless the drain knows
it is: it took or renewed it less than `LOCK_SECONDS - LEASE_MARGIN_SECONDS` ago (a lease, on this process's
clock). A message is removed only once delivered (or once it can never be), so a process that
dies mid-way leaves the rest for the next drain. If Redis fails just after Telegram answered,
the delivery is kept in memory and settled by this process's next drain of the game, so it is
not sent again.

A private message with a key (the role, a card prompt, the leader's keyboard) reaches its
player at most once per key: a queued one whose key already names a delivered message is
dropped unsent. Where Redis may have lost the id next to a failure, and a second copy went out,
the older copy loses its buttons (`tgbot.receipts`).

A group upgraded to a supergroup has a new chat id, and Telegram refuses every call naming the
old one with `ChatMigrated`. A message for the old chat then moves the group (`tgbot.chat_move`)
and goes to the new chat; this process remembers the move, so what else it holds for the old chat
goes straight there. An edit of a message posted in the old chat posts it anew in the new one:
message ids do not carry over.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta

from redis.asyncio import Redis
from redis.exceptions import RedisError
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.warnings import PTBDeprecationWarning, PTBUserWarning

from tgbot import keys, outgoing
from tgbot.chat_move import move_chat
from tgbot.indexes import MARKS_KEPT, PENDING_GRACE_MS
from tgbot.outgoing import Button, Delete, Document, Edit, Keyboard, Photo, Send, once_only
from tgbot.receipts import Receipts
from tgbot.store import LOOKUPS_LUA, OUTBOX_LOCK_SECONDS, Store, parse_remembered, remembered

log = logging.getLogger(__name__)

LOCK_SECONDS = OUTBOX_LOCK_SECONDS  # a drain's lock, unless renewed: what a dead drain can hold its game up
RENEW_SECONDS = LOCK_SECONDS / 4  # how often a running drain renews it
LEASE_MARGIN_SECONDS = 0.5  # a lock is checked again once it is this close to lapsing (by our clock)
LOOK_AGAIN_SECONDS = 0.2  # a delivery slower than this (flood waits) reads the queue again after it
ATTEMPTS = 3
RETRY_SECONDS = 0.5  # after a timeout, a delivery's next attempt waits this long times the attempts made
# How long a delivery waits for Telegram's answer. python-telegram-bot's client gives up after 5 s, but
# Telegram goes on with a call it received: a message whose answer came later than that was posted, and
# sent again it was posted twice (three times a drain, and again at every tick of the clock while Telegram
# stayed that slow), and an edit timed out at every try, holding up everything queued behind it.
ANSWER_WAIT_SECONDS = 60.0

_LOCK_MS = int(LOCK_SECONDS * 1000)


def retry_after_seconds(flood: RetryAfter) -> float:
    with warnings.catch_warnings():
        # python-telegram-bot 22 warns that the attribute will become a timedelta; both are handled.
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = flood.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def topic_gone(error: BadRequest) -> bool:
    """Whether Telegram refused a message because its forum topic was deleted or closed."""
    text = error.message.lower()
    return any(sign in text for sign in ("thread not found", "topic_closed", "topic_deleted", "topic_id_invalid"))


def markup(buttons: Keyboard) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(b.text, callback_data=b.data, url=b.url) for b in row] for row in buttons]
    )


# The outbox calls the two methods it uses most with plain parameters (`Bot.do_api_request`),
# through the same request and rate limiter as any call, and reads only the new message's id
# from the answer: building python-telegram-bot objects for every keyboard and parsing every
# returned Message was the largest part of a delivery's CPU. The parameters are the ones
# `send_message` and `edit_message_text` send. PTB suggests those methods instead; not here. A
# reminder taken back (`deleteMessage`) goes the same way, under the same outbox lock.
warnings.filterwarnings(
    "ignore", message=r"Please use 'Bot\.(sendMessage|editMessageText|deleteMessage)'", category=PTBUserWarning
)
_NO_PREVIEW = {"is_disabled": True}


def plain_markup(buttons: Keyboard) -> dict | None:
    """The inline keyboard as the Bot API's JSON."""
    if not buttons:
        return None
    return {"inline_keyboard": [[_plain_button(b) for b in row] for row in buttons]}


def _plain_button(button: outgoing.Button) -> dict:
    plain = {"text": button.text}
    if button.url is not None:
        plain["url"] = button.url
    if button.data is not None:
        plain["callback_data"] = button.data
    return plain


def message_link(chat_id: int, message_id: int) -> str | None:
    """A link that opens a supergroup's message for its members; None for a basic group, whose
    messages have none."""
    internal = -chat_id - 10**12
    return f"https://t.me/c/{internal}/{message_id}" if internal > 0 else None


def _replying_to(message_id: int) -> dict:
    # Sent all the same if the message was deleted meanwhile.
    return {"message_id": message_id, "allow_sending_without_reply": True}


def _message_parameters(chat_id: int, text: str, buttons: Keyboard, **more: object) -> dict:
    parameters = {"chat_id": chat_id, "text": text, **more, "parse_mode": ParseMode.HTML.value}
    keyboard = plain_markup(buttons)
    if keyboard is not None:
        parameters["reply_markup"] = keyboard
    return parameters


# Take the lock and read the queue, with the message ids its items need.
#   KEYS: lock, queue, messages. ARGV: token, lock ms, a token of this process's that Redis kept
#   when it could not be let go ('' if none).
# Returns false if another drain holds the lock; {} if the queue is empty (the lock let go again);
# else {items, keys, ids}.
_TAKE = (
    LOOKUPS_LUA
    + """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    if ARGV[3] == '' or redis.call('GET', KEYS[1]) ~= ARGV[3] then return false end
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
local items = redis.call('LRANGE', KEYS[2], 0, -1)
if #items == 0 then
    redis.call('DEL', KEYS[1])
    return {}
end
local wanted = lookups_of(items)
local ids = {}
if #wanted > 0 then ids = redis.call('HMGET', KEYS[3], unpack(wanted)) end
return {items, wanted, ids}
"""
)

# After Telegram answered: remove the delivered item (and the superseded edits before it).
#   KEYS: lock, queue, messages. ARGV: token, lock ms, position of the item, the item, key to
#   remember ('' none), its "chat:message", mode, '1' to check the lock and renew it ('0': the
#   drain's lease says it is still ours), an edit's receipt to remember with the same "chat:message"
#   ('' none).
#   mode 'next': more items follow; 'look': also return the queue as it is now; 'last': the
#   drain has nothing more in hand.
# Returns -1 if another drain took the lock over (stop), -2 if the queue is not as read (read it
# again), 1 to go on, 0 when the queue is empty (the lock is let go), or the queue's items (with
# the keys and ids they need) when there is more.
_COMMIT = (
    LOOKUPS_LUA
    + """
if ARGV[8] == '1' then
    local holder = redis.call('GET', KEYS[1])
    if holder == ARGV[1] then
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
    elseif holder then
        return -1
    else
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])  -- it lapsed and nobody took it
    end
end
local position = tonumber(ARGV[3])
if position == 0 then
    local head = redis.call('LPOP', KEYS[2])
    if head ~= ARGV[4] then
        if head then redis.call('LPUSH', KEYS[2], head) end
        return -2
    end
else
    if redis.call('LINDEX', KEYS[2], position) ~= ARGV[4] then return -2 end
    redis.call('LTRIM', KEYS[2], position + 1, -1)
end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[3], ARGV[5], ARGV[6]) end
if ARGV[9] ~= '' then redis.call('HSET', KEYS[3], ARGV[9], ARGV[6]) end
if ARGV[7] == 'next' then return 1 end
if redis.call('LLEN', KEYS[2]) == 0 then
    redis.call('DEL', KEYS[1])
    return 0
end
local items = redis.call('LRANGE', KEYS[2], 0, -1)
local wanted = lookups_of(items)
local ids = {}
if #wanted > 0 then ids = redis.call('HMGET', KEYS[3], unpack(wanted)) end
return {items, wanted, ids}
"""
)

# Keep the lock while the drain runs. KEYS: lock. ARGV: token, lock ms. 1 if renewed, 0 if
# another drain has it, 2 if it lapsed: it is not taken again here (a renewal still on its way
# when the drain let go would take it back); the drain's next commit does that.
_RENEW = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if holder then return 0 end
return 2
"""

# Let the lock go if it is still ours. KEYS: lock. ARGV: token.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

_LOST, _CHANGED = -1, -2


class DeliveryPostponed(Exception):
    """Telegram could not be reached for now; the message stays first in the queue."""


class LockLost(Exception):
    """Another drain holds the game's outbox lock now: this one sends nothing more."""


class _LockLapsed(Exception):
    """Nobody holds the lock any more (this drain stalled past its life): what it read may have
    been delivered meanwhile, so it reads the queue again before it sends anything."""


@dataclass(frozen=True)
class Guarded:
    """`rate_limit_args` of a request that must pass `check` right before it goes out, after any
    flood-limit wait (`tgbot.ratelimit.RedisRateLimiter` honours it): the outbox checks that its
    lock is still its own, so a drain that stalled while another took over sends nothing more."""

    check: Callable[[], Awaitable[None]]
    retries: int | None = None


def _next_of_key(item: Edit, later: list[outgoing.Outgoing]) -> Edit | Send | None:
    """The next queued edit or new message of the edit's key that goes out, if any: a copy of a group
    message that a later copy takes the key of does not (`_posted_again`)."""
    same = [other for other in later if isinstance(other, Edit | Send) and _same_key(item, other)]
    last_copy = max((i for i, other in enumerate(same) if isinstance(other, Send)), default=None)
    for i, other in enumerate(same):
        if isinstance(other, Send) and other.chat_id < 0 and i != last_copy:
            continue
        return other
    return None


def _same_key(item: Edit | Send, other: Edit | Send) -> bool:
    return other.key == item.key and other.chat_id == item.chat_id


def _posted_again(item: outgoing.Outgoing, later: list[outgoing.Outgoing]) -> bool:
    """A group message of a key that a new message queued later takes the key of (/status sent again
    while the first copy still waited, behind the group's flood limit): the later copy shows the board
    as it reads then, and the first would lose its buttons to it at once. Posting each copy would put
    the game's own messages behind all of them."""
    return (
        isinstance(item, Send)
        and bool(item.key)
        and item.chat_id < 0
        and any(isinstance(other, Send) and _same_key(item, other) for other in later)
    )


def _superseded(item: outgoing.Outgoing, later: list[outgoing.Outgoing]) -> bool:
    """An edit whose message is edited again later, before any new message takes its key; a group
    message posted again later (`_posted_again`), and the edits of it before that."""
    if isinstance(item, Send):
        return _posted_again(item, later)
    return isinstance(item, Edit) and isinstance(_next_of_key(item, later), Edit)


def _replaced(item: outgoing.Outgoing, later: list[outgoing.Outgoing]) -> bool:
    """An edit of a message that a new message queued later takes the key of (/status posting
    the board again): if the old message is gone, it need not be posted again."""
    return isinstance(item, Edit) and isinstance(_next_of_key(item, later), Send)


@dataclass
class _Queue:
    """What a drain holds of the queue: the raw items as stored, parsed, and the message ids
    (as "chat:message", None if never delivered) of the keys they need."""

    raws: list[str]
    items: list[outgoing.Outgoing]
    ids: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def read(
        cls, raws: list[str], wanted: list[str], ids: list[str | None], items: list[outgoing.Outgoing] | None = None
    ) -> _Queue:
        parsed = list(items) if items is not None else [outgoing.loads(raw) for raw in raws]
        return cls(list(raws), parsed, dict(zip(wanted, ids, strict=True)))

    def drop_through(self, position: int) -> None:
        del self.raws[: position + 1]
        del self.items[: position + 1]


@dataclass(frozen=True)
class _Unsettled:
    """A message Telegram took whose removal never reached Redis."""

    position: int
    raw: str
    key: str
    value: str
    receipt: str


@dataclass
class _Lock:
    """A drain's lock, renewed in the background while the drain runs; `sure_until` (this process's
    monotonic clock) is how long it is known to stay ours without asking Redis."""

    outbox: Outbox
    game_id: str
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    sure_until: float = 0.0
    lost: bool = False
    marked_pending_at: float | None = None  # when the write this drain started from marked the game pending
    _timer: asyncio.TimerHandle | None = None
    _task: asyncio.Task | None = None

    def held_from(self, moment: float) -> None:
        """Redis (re)set the lock to live `LOCK_SECONDS` at some point after `moment`."""
        self.sure_until = max(self.sure_until, moment + LOCK_SECONDS - LEASE_MARGIN_SECONDS)

    @property
    def sure(self) -> bool:
        return time.monotonic() < self.sure_until

    async def ensure(self) -> None:
        """Right before a message goes out: the lock is still this drain's, by its lease or by
        asking Redis (and renewing it). `LockLost` if another drain holds it, `_LockLapsed` if
        nobody does."""
        if self.lost:
            raise LockLost(self.game_id)
        if self.sure:
            return
        asked = time.monotonic()
        renewed = await self.outbox._renew(keys=[keys.outbox_lock(self.game_id)], args=[self.token, _LOCK_MS])
        if renewed == 1:
            self.held_from(asked)
            return
        if renewed == 0:
            self.lost = True
            raise LockLost(self.game_id)
        raise _LockLapsed(self.game_id)

    def keep(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(RENEW_SECONDS, self._start)

    def _start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        key = keys.outbox_lock(self.game_id)
        while True:
            asked = time.monotonic()
            try:
                renewed = await self.outbox._renew(keys=[key], args=[self.token, _LOCK_MS])
            except RedisError:
                renewed = None  # the lock lapses unless Redis is back in time; the next commit says which
            if renewed == 0:
                self.lost = True
                return
            if renewed == 1:
                self.held_from(asked)
            await asyncio.sleep(RENEW_SECONDS)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()


class Outbox:
    def __init__(self, store: Store, bot: Bot) -> None:
        self.store = store
        self.bot = bot
        redis = store.redis
        self._take = redis.register_script(_TAKE)
        self._commit = redis.register_script(_COMMIT)
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        # Keyed private messages delivered lately, checked again where Redis may have lost their ids.
        self.receipts = Receipts(redis, self._strip_buttons)
        # What Redis did not hear because it failed: deliveries to settle, locks to let go.
        self._unsettled: dict[str, _Unsettled] = {}
        self._kept_locks: dict[str, str] = {}
        # Groups that Telegram said became supergroups: old chat id -> new chat id.
        self._moved_chats: dict[int, int] = {}
        # Forum topics Telegram refused (closed or deleted), so the rest of their games' messages go
        # straight to General instead of being refused first, each at a cost to the flood limits.
        self._gone_topics: dict[tuple[int, int], None] = {}

    @property
    def redis(self) -> Redis:
        return self.store.redis

    def _keys(self, game_id: str) -> list[str]:
        return [keys.outbox_lock(game_id), keys.outbox(game_id), keys.messages(game_id)]

    async def drain(self, game_id: str) -> bool:
        """Deliver everything queued for the game. False if another drain holds its lock: that
        drain looks at the queue again before it lets go, so it sends what was queued meanwhile."""
        claim = self.store.take_claim(game_id)
        if claim is not None and time.monotonic() - claim.taken_at < LOCK_SECONDS - LEASE_MARGIN_SECONDS:
            lock = _Lock(self, game_id, claim.token)  # the write that queued the messages took the lock
            lock.held_from(claim.taken_at)
            lock.marked_pending_at = claim.taken_at
            queue = _Queue.read(claim.raws, claim.wanted, claim.ids, claim.items)
        else:
            if claim is not None:  # kept too long (its write was not followed by a drain): let it go
                await self._let_go(game_id, claim.token)
            lock = _Lock(self, game_id)
            stale = self._kept_locks.get(game_id, "")
            asked = time.monotonic()
            reply = await self._take(keys=self._keys(game_id), args=[lock.token, _LOCK_MS, stale])
            self._kept_locks.pop(game_id, None)
            if reply is None:
                return False
            if not reply:
                self._unsettled.pop(game_id, None)
                await self.store.indexes.settle_pending(game_id)
                return True
            lock.held_from(asked)
            queue = _Queue.read(*reply)
        lock.keep()
        done = False
        try:
            done = await self._deliver_queue(game_id, queue, lock)
        finally:
            lock.stop()
            if not done:
                await self._let_go(game_id, lock.token)
        return True

    async def _emptied(self, game_id: str, lock: _Lock) -> None:
        """The drain emptied the queue and let the lock go: take the game off the pending set, unless
        the write this drain started from marked it too recently for that to be allowed yet
        (`tgbot.indexes.PENDING_GRACE_MS`): the clock's next look after that does it, saving a
        round trip on every quick drain."""
        marked = lock.marked_pending_at
        if marked is not None and time.monotonic() - marked < PENDING_GRACE_MS / 1000:
            return
        await self.store.indexes.settle_pending(game_id)

    async def _let_go(self, game_id: str, token: str) -> None:
        try:
            await self._release(keys=[keys.outbox_lock(game_id)], args=[token])
        except RedisError:
            self._kept_locks[game_id] = token  # the next drain here takes it over at once

    async def pending_lock_ms(self, game_id: str) -> int:
        """How long the game's outbox lock still lives (0 if nobody holds it)."""
        return max(0, await self.redis.pttl(keys.outbox_lock(game_id)))

    async def _deliver_queue(self, game_id: str, queue: _Queue, lock: _Lock) -> bool:
        """Deliver the queue's oldest message, then the next: an edit that a later edit of the same
        message overwrites is skipped. A delivery slow enough for more to have been queued meanwhile
        (flood waits) reads the queue again, so what piled up is coalesced too. True once the queue
        is empty and the lock let go; False if the drain stopped with messages left."""
        while True:
            if lock.lost:
                return False
            items = queue.items
            skipped = 0
            while skipped < len(items) - 1 and _superseded(items[skipped], items[skipped + 1 :]):
                skipped += 1
            item, raw = items[skipped], queue.raws[skipped]
            started = time.monotonic()
            unsettled = self._unsettled.pop(game_id, None)
            if unsettled is not None and (unsettled.position, unsettled.raw) == (skipped, raw):
                # It reached Telegram before Redis failed.
                key, value, receipt = unsettled.key, unsettled.value, unsettled.receipt
            else:
                try:
                    key, value, receipt = await self._deliver_item(game_id, item, queue, items[skipped + 1 :], lock)
                except LockLost:
                    log.info("game %s: another drain took the outbox over", game_id)
                    return False
                except _LockLapsed:
                    queue = await self._read_again(game_id, lock)  # takes the lock back, as the queue is now
                    if queue is None:
                        return True
                    continue
            if skipped == len(items) - 1:
                mode = "last"
            elif time.monotonic() - started > LOOK_AGAIN_SECONDS:
                mode = "look"
            else:
                mode = "next"
            check = not lock.sure
            asked = time.monotonic()
            keyed = once_only(item) and bool(key)
            try:
                reply = await self._commit(
                    keys=self._keys(game_id),
                    args=[lock.token, _LOCK_MS, skipped, raw, key, value, mode, "1" if check else "0", receipt],
                )
            except RedisError:
                self._unsettled[game_id] = _Unsettled(skipped, raw, key, value, receipt)
                if keyed:
                    self.receipts.delivered(game_id, key, value, committed=False)
                self.receipts.storage_failed()
                raise
            if keyed:
                self.receipts.delivered(game_id, key, value, committed=True)
            if check and reply != _LOST:
                lock.held_from(asked)
            for remembered_key in (key, receipt):
                if remembered_key:
                    queue.ids[remembered_key] = value
            if reply == 1:
                queue.drop_through(skipped)
            elif reply == 0:
                await self._emptied(game_id, lock)
                return True
            elif reply == _LOST:
                log.info("game %s: another drain took the outbox over", game_id)
                return False
            elif reply == _CHANGED:
                queue = await self._read_again(game_id, lock)
                if queue is None:
                    return True
            else:
                queue = _Queue.read(*reply)

    async def _read_again(self, game_id: str, lock: _Lock) -> _Queue | None:
        """The queue changed under a drain that holds the lock (something other than a drain
        trimmed it): read it again, keeping the lock."""
        asked = time.monotonic()
        reply = await self._take(keys=self._keys(game_id), args=[lock.token, _LOCK_MS, lock.token])
        if reply is None:
            lock.lost = True
            return _Queue([], [])
        lock.held_from(asked)
        if not reply:
            await self._emptied(game_id, lock)
            return None
        return _Queue.read(*reply)

    async def _deliver_item(
        self, game_id: str, item: outgoing.Outgoing, queue: _Queue, later: list[outgoing.Outgoing], lock: _Lock
    ) -> tuple[str, str, str]:
        """Deliver one item; returns the message key and "chat:message" to remember ("" if none), and
        an edit's receipt to remember with it ("" if none, or if the edit did not reach the chat)."""
        if once_only(item) and queue.ids.get(item.key) is not None:
            log.info("game %s: a message already delivered was not sent again", game_id)
            return "", "", ""
        if isinstance(item, Edit):
            known = parse_remembered(queue.ids.get(item.key))
            if known is None and item.key not in queue.ids:
                known = await self.store.message_of(game_id, item.key)
            if known is None:
                return "", "", ""  # its Send never reached the chat (a player who could not be reached)
            shown = await self._deliver(game_id, item, lock, known=known, repost=not _replaced(item, later))
            if shown is None:
                return "", "", ""
            # Posted anew (the message was deleted, or left in the group's old chat): its key names the new one.
            key = item.key if shown != known else ""
            return key, remembered(*shown), item.receipt
        if isinstance(item, Delete):
            known = parse_remembered(queue.ids.get(item.key)) if item.key in queue.ids else None
            if known is None:
                known = await self.store.message_of(game_id, item.key)
            if known is not None:
                await self._take_back(game_id, item, known, lock)
            return "", "", ""
        reply_to = None
        if isinstance(item, Send) and item.link_key:
            item, reply_to = await self._linked(game_id, item, queue)
        sent = await self._deliver(game_id, item, lock, reply_to=reply_to)
        if sent is None or not getattr(item, "key", ""):
            return "", "", ""
        return item.key, remembered(sent[0], sent[1]), ""

    async def _linked(self, game_id: str, item: Send, queue: _Queue) -> tuple[Send, int | None]:
        """The message with its link to the message of `link_key` made, and the id of the message it
        replies to: that one, in the same chat; in the group, a button opens it instead. As it is when
        that message never reached its chat."""
        raw = queue.ids.get(item.link_key)
        target = parse_remembered(raw) if raw is not None else await self.store.message_of(game_id, item.link_key)
        if target is None:
            return item, None
        chat_id, message_id = target
        if chat_id == item.chat_id:
            return item, message_id
        url = message_link(chat_id, message_id)
        if url is None:
            return item, None
        return replace(item, buttons=(*item.buttons, (Button(item.link_text, url=url),))), None

    async def _take_back(self, game_id: str, item: Delete, known: tuple[int, int], lock: _Lock) -> None:
        """Delete the message; edit it to the fallback text where Telegram no longer lets it be deleted.
        Either failing leaves it as it was: a reminder left standing is no harm worth a retry."""
        chat_id, message_id = known
        try:
            await self._call(lock, "deleteMessage", {"chat_id": chat_id, "message_id": message_id})
            return
        except BadRequest as error:
            if not item.fallback_text or "not found" in str(error).lower():
                return
        except TelegramError as error:
            log.info("game %s: a message was not taken back: %s", game_id, type(error).__name__)
            return
        try:
            await self._call(lock, "editMessageText", _message_parameters(chat_id, item.fallback_text, ()))
        except TelegramError as error:
            log.info("game %s: a message was not taken back: %s", game_id, type(error).__name__)

    async def _deliver(
        self,
        game_id: str,
        item: outgoing.Outgoing,
        lock: _Lock,
        known: tuple[int, int] | None = None,
        repost: bool = True,
        reply_to: int | None = None,
    ) -> tuple[int, int] | None:
        """Deliver one item, retrying only what can succeed later; never let one item block the queue.
        Returns (chat, message id) of a message it posted, or for an edit of the message that reads as
        the edit says now. `known`: the message an edit changes; `repost`: an edit whose message was
        deleted posts it again."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                if isinstance(item, Send):
                    return await self._send(game_id, item, lock, reply_to)
                if isinstance(item, Edit):
                    return await self._edit(game_id, item, lock, known, repost)
                if isinstance(item, Photo):
                    return await self._photo(game_id, item, lock)
                await self._document(game_id, item, lock)
                return None
            except RetryAfter as flood:
                # The rate limiter already retried; Telegram still asks us to wait.
                await asyncio.sleep(retry_after_seconds(flood))
            except BadRequest as error:
                log.warning("game %s: Telegram refused a %s: %s", game_id, type(item).__name__, error.message)
                return None
            except (TimedOut, NetworkError) as failure:
                log.warning("game %s: delivery attempt %d failed: %s", game_id, attempt, type(failure).__name__)
                await asyncio.sleep(RETRY_SECONDS * attempt)
            except TelegramError as error:
                log.warning("game %s: Telegram refused a %s: %s", game_id, type(item).__name__, type(error).__name__)
                return None
        log.warning("game %s: Telegram unreachable; a %s waits for the next try", game_id, type(item).__name__)
        raise DeliveryPostponed(game_id)

    def _chat_now(self, chat_id: int) -> int:
        """The chat's id as far as this process knows: a group's new one once it became a supergroup."""
        return self._moved_chats.get(chat_id, chat_id)

    async def _chat_moved(self, game_id: str, old_chat_id: int, moved: ChatMigrated) -> int:
        """Telegram refused a call for `old_chat_id`, which became a supergroup: the group and the game
        move to the new chat (`tgbot.chat_move`); returns the new id."""
        new_chat_id = int(moved.new_chat_id)
        log.info("game %s: its group became a supergroup; delivering there", game_id)
        await move_chat(self.store, old_chat_id, new_chat_id, game_id)
        self._remember_move(old_chat_id, new_chat_id)
        return new_chat_id

    async def _learn_move(self, chat_id: int) -> None:
        """Whether the group `chat_id` became a supergroup, as whoever moved it left word in Redis."""
        new_chat_id = await self.store.indexes.chat_now(chat_id)
        if new_chat_id != chat_id:
            self._remember_move(chat_id, new_chat_id)

    def _remember_move(self, old_chat_id: int, new_chat_id: int) -> None:
        self._moved_chats[old_chat_id] = new_chat_id
        if len(self._moved_chats) > MARKS_KEPT:
            del self._moved_chats[next(iter(self._moved_chats))]

    async def _send_text(
        self,
        game_id: str,
        lock: _Lock,
        chat_id: int,
        text: str,
        buttons: Keyboard,
        topic: int | None = None,
        **more: object,
    ) -> tuple[int, dict]:
        """sendMessage to the chat (in a group, to its forum `topic` if given), or to the supergroup
        it became; returns the chat it went to and Telegram's answer."""
        chat_id = self._chat_now(chat_id)
        if topic is not None and chat_id < 0 and (chat_id, topic) not in self._gone_topics:
            more["message_thread_id"] = topic
        try:
            return chat_id, await self._call(lock, "sendMessage", _message_parameters(chat_id, text, buttons, **more))
        except ChatMigrated as moved:
            chat_id = await self._chat_moved(game_id, chat_id, moved)
            more.pop("message_thread_id", None)  # a basic group has no topics
        except BadRequest as error:
            if "message_thread_id" not in more or not topic_gone(error):
                raise
            log.info("game %s: its forum topic was closed or deleted; posting in General", game_id)
            more.pop("message_thread_id")
            self._gone_topics[(chat_id, topic)] = None
            if len(self._gone_topics) > MARKS_KEPT:
                del self._gone_topics[next(iter(self._gone_topics))]
        return chat_id, await self._call(lock, "sendMessage", _message_parameters(chat_id, text, buttons, **more))

    async def _call(self, lock: _Lock, method: str, parameters: dict) -> object:
        """One Bot API call, once the lock is known to be still this drain's: checked after the flood
        limits' wait by the rate limiter (`Guarded`), or here when there is none."""
        if getattr(self.bot, "rate_limiter", None) is not None and getattr(
            self.bot.rate_limiter, "checks_before_send", False
        ):
            return await self.bot.do_api_request(
                method, parameters, rate_limit_args=Guarded(lock.ensure), read_timeout=ANSWER_WAIT_SECONDS
            )
        await lock.ensure()
        return await self.bot.do_api_request(method, parameters, read_timeout=ANSWER_WAIT_SECONDS)

    async def _strip_buttons(self, chat_id: int, message_id: int) -> None:
        """Take a message's buttons away (a second copy of a keyed message: `tgbot.receipts`)."""
        try:
            await self.bot.edit_message_reply_markup(
                chat_id=chat_id, message_id=message_id, reply_markup=None, read_timeout=ANSWER_WAIT_SECONDS
            )
        except TelegramError as error:  # deleted, or its buttons gone already: nothing left to press
            log.info("a second copy's buttons were not removed: %s", type(error).__name__)

    async def _send(self, game_id: str, item: Send, lock: _Lock, reply_to: int | None = None) -> tuple[int, int] | None:
        try:
            chat_id, message = await self._send_text(
                game_id,
                lock,
                item.chat_id,
                item.text,
                item.buttons,
                item.topic,
                link_preview_options=_NO_PREVIEW,
                protect_content=item.protected,
                **({} if reply_to is None else {"reply_parameters": _replying_to(reply_to)}),
            )
        except Forbidden:
            if item.notice_chat_id is None:
                log.info("game %s: a chat refused a message (403)", game_id)
                return None
            log.info("game %s: a player cannot be reached in private; telling the group", game_id)
            await self._send_text(game_id, lock, item.notice_chat_id, item.notice_text, item.notice_buttons, item.topic)
            return None
        return chat_id, int(message["message_id"])

    async def _edit(
        self, game_id: str, item: Edit, lock: _Lock, known: tuple[int, int] | None, repost: bool
    ) -> tuple[int, int] | None:
        """The message that reads as the edit says now: `known`, or a copy posted anew; None if the
        edit did not reach the chat."""
        chat_id, message_id = known
        if chat_id != item.chat_id and self._chat_now(chat_id) == chat_id:
            # The message and its edit name two chats: the group moved, one way or the other (the message
            # may be the copy another worker posted in the supergroup). Which way is kept in Redis.
            await self._learn_move(chat_id)
        if self._chat_now(chat_id) != chat_id:
            # The message stayed in a group that has become a supergroup since.
            return await self._post_anew(game_id, item, lock, repost)
        try:
            await self._call(
                lock,
                "editMessageText",
                _message_parameters(
                    chat_id, item.text, item.buttons, message_id=message_id, link_preview_options=_NO_PREVIEW
                ),
            )
        except ChatMigrated as moved:
            await self._chat_moved(game_id, chat_id, moved)
            return await self._post_anew(game_id, item, lock, repost)
        except BadRequest as error:
            text = str(error).lower()
            if "not modified" in text:
                return known  # it reads so already (an edit sent again after a worker died)
            if "not found" in text or "can't be edited" in text:
                if not repost:
                    return None  # a new copy of it is queued next
                # Someone deleted the message: post it again where it was.
                return await self._send(game_id, item.posted_anew(chat_id), lock)
            raise
        except Forbidden:
            log.info("game %s: an edit was refused (403)", game_id)
            return None
        return known

    async def _post_anew(self, game_id: str, item: Edit, lock: _Lock, repost: bool) -> tuple[int, int] | None:
        """An edit of a message left in a group's old chat: message ids do not carry over to the
        supergroup, so the message is posted there as it reads now (unless a new copy is queued next)."""
        if not repost:
            return None
        return await self._send(game_id, item.posted_anew(item.chat_id), lock)

    async def _document(self, game_id: str, item: Document, lock: _Lock) -> None:
        chat_id = self._chat_now(item.chat_id)
        try:
            await self._send_document(lock, chat_id, item)
        except ChatMigrated as moved:
            chat_id = await self._chat_moved(game_id, chat_id, moved)
            await self._send_document(lock, chat_id, item)
        except BadRequest as error:
            if not item.refused_text:
                raise
            log.warning("game %s: Telegram refused a Document: %s", game_id, error.message)
            await self._send_text(game_id, lock, chat_id, item.refused_text, (), item.topic)

    async def _send_document(self, lock: _Lock, chat_id: int, item: Document) -> None:
        checked = getattr(getattr(self.bot, "rate_limiter", None), "checks_before_send", False)
        if not checked:
            await lock.ensure()
        await self.bot.send_document(
            chat_id,
            document=item.content.encode(),
            filename=item.filename,
            caption=item.caption or None,
            message_thread_id=item.topic if chat_id < 0 else None,
            read_timeout=ANSWER_WAIT_SECONDS,
            **({"rate_limit_args": Guarded(lock.ensure)} if checked else {}),
        )

    async def _photo(self, game_id: str, item: Photo, lock: _Lock) -> tuple[int, int]:
        """sendPhoto, to the supergroup the group became if it did, in General if its topic is gone.
        A photo Telegram refuses otherwise is left out by `_deliver` (logged, never blocking the queue)."""
        chat_id = self._chat_now(item.chat_id)
        topic = item.topic if chat_id < 0 and (chat_id, item.topic) not in self._gone_topics else None
        try:
            message = await self._send_photo(lock, chat_id, item, topic)
        except ChatMigrated as moved:
            chat_id = await self._chat_moved(game_id, chat_id, moved)
            message = await self._send_photo(lock, chat_id, item, None)
        except BadRequest as error:
            if topic is None or not topic_gone(error):
                raise
            log.info("game %s: its forum topic was closed or deleted; posting in General", game_id)
            self._gone_topics[(chat_id, topic)] = None
            if len(self._gone_topics) > MARKS_KEPT:
                del self._gone_topics[next(iter(self._gone_topics))]
            message = await self._send_photo(lock, chat_id, item, None)
        return chat_id, int(message.message_id)

    async def _send_photo(self, lock: _Lock, chat_id: int, item: Photo, topic: int | None):
        checked = getattr(getattr(self.bot, "rate_limiter", None), "checks_before_send", False)
        if not checked:
            await lock.ensure()
        return await self.bot.send_photo(
            chat_id,
            photo=item.content,
            filename=item.filename,
            caption=item.caption or None,
            message_thread_id=topic,
            read_timeout=ANSWER_WAIT_SECONDS,
            **({"rate_limit_args": Guarded(lock.ensure)} if checked else {}),
        )


async def drain_quietly(outbox: Outbox, game_id: str) -> bool:
    """Drain, logging instead of raising: a handler's answer must not depend on delivery.
    False if another drain holds the game's lock."""
    try:
        return await outbox.drain(game_id)
    except DeliveryPostponed:
        pass  # the clock tries again
    except (TelegramError, RedisError) as error:
        log.warning("game %s: outbox stopped on %s", game_id, type(error).__name__)
    return True
