"""Send a game's queued messages, in order, exactly as Telegram lets us.

Any process may drain any game's outbox; a short Redis lock (redis-py's `Lock`) makes
sure only one does at a time, so messages of one game go out in the order their changes
were stored. An item leaves the queue only after it was delivered (or can never be), so
a process that dies mid-way leaves the rest for the next drain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from datetime import timedelta

from redis.asyncio import Redis
from redis.asyncio.lock import Lock
from redis.exceptions import LockError, RedisError
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.warnings import PTBDeprecationWarning

from tgbot import keys, outgoing
from tgbot.outgoing import Document, Edit, Keyboard, Send
from tgbot.store import Store

log = logging.getLogger(__name__)

LOCK_SECONDS = 60
ATTEMPTS = 3


def retry_after_seconds(flood: RetryAfter) -> float:
    with warnings.catch_warnings():
        # python-telegram-bot 22 warns that the attribute will become a timedelta; both are handled.
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = flood.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def markup(buttons: Keyboard) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(b.text, callback_data=b.data, url=b.url) for b in row] for row in buttons]
    )


# Trim the queue through position ARGV[1] only if that position still holds ARGV[2].
_REMOVE_THROUGH = """
if redis.call('LINDEX', KEYS[1], ARGV[1]) == ARGV[2] then
    redis.call('LTRIM', KEYS[1], tonumber(ARGV[1]) + 1, -1)
    return 1
end
return 0
"""


class DeliveryPostponed(Exception):
    """Telegram could not be reached for now; the message stays first in the queue."""


def _next_of_key(item: Edit, later: list[outgoing.Outgoing]) -> Edit | Send | None:
    """The next queued edit or new message of the edit's key, if any."""
    for other in later:
        if isinstance(other, Edit | Send) and other.key == item.key and other.chat_id == item.chat_id:
            return other
    return None


def _superseded(item: outgoing.Outgoing, later: list[outgoing.Outgoing]) -> bool:
    """An edit whose message is edited again later, before any new message takes its key."""
    return isinstance(item, Edit) and isinstance(_next_of_key(item, later), Edit)


def _replaced(item: outgoing.Outgoing, later: list[outgoing.Outgoing]) -> bool:
    """An edit of a message that a new message queued later takes the key of (/status posting
    the board again): if the old message is gone, it need not be posted again."""
    return isinstance(item, Edit) and isinstance(_next_of_key(item, later), Send)


class Outbox:
    def __init__(self, store: Store, bot: Bot) -> None:
        self.store = store
        self.bot = bot
        self._remove_through = store.redis.register_script(_REMOVE_THROUGH)

    @property
    def redis(self) -> Redis:
        return self.store.redis

    async def drain(self, game_id: str) -> None:
        """Deliver everything queued for the game; return at once if another drain is running."""
        queue = keys.outbox(game_id)
        while True:
            lock = self.redis.lock(keys.outbox_lock(game_id), timeout=LOCK_SECONDS, blocking=False)
            if not await lock.acquire():
                return  # the holder looks at the queue again after it lets go
            try:
                await self._deliver_queue(game_id, queue, lock)
            finally:
                with contextlib.suppress(LockError):  # it expired: another drain has taken over
                    await lock.release()
            if not await self.redis.llen(queue):
                # Only now: an item queued after this check re-adds the id in its own transaction.
                await self.redis.srem(keys.PENDING_OUTBOXES, game_id)
                if not await self.redis.llen(queue):
                    return

    async def _deliver_queue(self, game_id: str, queue: str, lock: Lock) -> None:
        """Deliver the queue's oldest message, then look again: what was queued meanwhile (while
        the rate limiter made us wait) is seen, and an edit that a later edit of the same message
        will overwrite is skipped."""
        while True:
            raw_items = await self.redis.lrange(queue, 0, -1)
            if not raw_items:
                return
            items = [outgoing.loads(raw) for raw in raw_items]
            skipped = 0
            while skipped < len(items) - 1 and _superseded(items[skipped], items[skipped + 1 :]):
                skipped += 1
            # A slow delivery (flood waits, retries) must not outlive the lock unnoticed: renew it
            # before each message, and stop if another drain already took over.
            try:
                await lock.reacquire()  # one round trip: it fails if the lock is no longer ours
            except LockError:
                return
            await self._deliver(game_id, items[skipped], repost=not _replaced(items[skipped], items[skipped + 1 :]))
            # Remove exactly what was delivered: nothing, if another drain got there first.
            if not await self._remove_through(keys=[queue], args=[skipped, raw_items[skipped]]):
                return

    async def deliver_now(self, game_id: str, item: outgoing.Outgoing) -> None:
        """Deliver one message outside the queue: for answers that only their reader is waiting for."""
        await self._deliver(game_id, item)

    async def _deliver(self, game_id: str, item: outgoing.Outgoing, repost: bool = True) -> None:
        """Deliver one item, retrying only what can succeed later; never let one item block the queue.
        `repost`: an edit whose message was deleted posts it again."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                if isinstance(item, Send):
                    await self._send(game_id, item)
                elif isinstance(item, Edit):
                    await self._edit(game_id, item, repost)
                else:
                    await self._document(item)
                return
            except RetryAfter as flood:
                # The rate limiter already retried; Telegram still asks us to wait.
                await asyncio.sleep(retry_after_seconds(flood))
            except BadRequest as error:
                log.warning("game %s: Telegram refused a %s: %s", game_id, type(item).__name__, error.message)
                return
            except (TimedOut, NetworkError) as failure:
                log.warning("game %s: delivery attempt %d failed: %s", game_id, attempt, type(failure).__name__)
                await asyncio.sleep(0.5 * attempt)
            except TelegramError as error:
                log.warning("game %s: Telegram refused a %s: %s", game_id, type(item).__name__, type(error).__name__)
                return
        log.warning("game %s: Telegram unreachable; a %s waits for the next try", game_id, type(item).__name__)
        raise DeliveryPostponed(game_id)

    async def _send(self, game_id: str, item: Send) -> None:
        try:
            message = await self.bot.send_message(
                item.chat_id,
                item.text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup(item.buttons),
                disable_web_page_preview=True,
                protect_content=item.protected,
            )
        except Forbidden:
            if item.notice_chat_id is None:
                log.info("game %s: a chat refused a message (403)", game_id)
                return
            log.info("game %s: a player cannot be reached in private; telling the group", game_id)
            await self.bot.send_message(
                item.notice_chat_id,
                item.notice_text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup(item.notice_buttons),
            )
            return
        if item.key:
            await self.store.remember_message(game_id, item.key, item.chat_id, message.message_id)

    async def _edit(self, game_id: str, item: Edit, repost: bool = True) -> None:
        known = await self.store.message_of(game_id, item.key)
        if known is None:
            return  # its Send never reached the chat (a player who could not be reached)
        chat_id, message_id = known
        try:
            await self.bot.edit_message_text(
                item.text,
                chat_id=chat_id,
                message_id=message_id,
                parse_mode=ParseMode.HTML,
                reply_markup=markup(item.buttons),
                disable_web_page_preview=True,
            )
        except BadRequest as error:
            text = str(error).lower()
            if "not modified" in text:
                return
            if "not found" in text or "can't be edited" in text:
                if not repost:
                    return  # a new copy of it is queued next
                # Someone deleted the message: post it again where it was.
                await self._send(
                    game_id, Send(chat_id, item.text, item.buttons, key=item.key, protected=item.protected)
                )
                return
            raise
        except Forbidden:
            log.info("game %s: an edit was refused (403)", game_id)

    async def _document(self, item: Document) -> None:
        await self.bot.send_document(
            item.chat_id, document=item.content.encode(), filename=item.filename, caption=item.caption or None
        )


async def drain_quietly(outbox: Outbox, game_id: str) -> None:
    """Drain, logging instead of raising: a handler's answer must not depend on delivery."""
    try:
        await outbox.drain(game_id)
    except DeliveryPostponed:
        pass  # the clock tries again
    except (TelegramError, RedisError) as error:
        log.warning("game %s: outbox stopped on %s", game_id, type(error).__name__)
