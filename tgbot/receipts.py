"""Private messages of a key (a role, a card prompt, the leader's keyboard) once, across an outage.

The outbox remembers which message a key names in the game's message hash, in the same script that
takes the message off the queue (`tgbot.outbox`). Two things can undo that next to a Redis failure: the
script never ran (Redis failed in the instant after Telegram took the message, and another worker
drained the queue before this one could settle it), or it ran on a master whose last writes a failover
to its replica lost. Either way the queue holds the message again with no id for its key, and the next
drain sends a second copy, the first still carrying live buttons (4 of 12,382 such messages next to a
failover).

So each worker keeps, for a while, the keyed messages it delivered, and doubts those that Redis may not
have kept: one whose commit failed, and every one committed in the `DOUBT_SECONDS` before this worker
saw Redis fail. The clock's tick checks each doubted delivery against the hash (`audit`) for
`AUDIT_SECONDS`:

- the key names no message: its id is written back, so that no drain sends it again;
- it names this very message: nothing to do;
- it names another copy: the two were both sent, and the older one (the smaller message id in the
  chat) loses its buttons, so that only one copy can be pressed; the key is made to name the newer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.asyncio import Redis

from tgbot import keys
from tgbot.store import parse_remembered, remembered

log = logging.getLogger(__name__)

# A delivery committed this long before Redis failed may be lost with a failover (replication is
# asynchronous: a replica is typically well under a second behind its master).
DOUBT_SECONDS = 10.0
# How long a doubted delivery is checked: long enough for another worker to have drained the game's
# queue after the outage (its first tick waits out lapsed outbox locks, `RECOVERY_SECONDS`).
AUDIT_SECONDS = 30.0
KEPT = 1024

# KEYS: the game's message ids, the game. ARGV: the message key, this delivery's "chat:message".
# Returns what the key names, after writing this delivery's id where it names nothing (and the game
# is still stored: a hash written for a forgotten game would never expire).
_AUDIT = """
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if stored then return stored end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return ARGV[2]
"""

# KEYS: the game's message ids. ARGV: the message key, the id it must still name, the id to name.
_REPLACE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return -1
"""


@dataclass
class _Delivery:
    game_id: str
    key: str
    chat_id: int
    message_id: int
    delivered_at: float
    doubted_at: float | None = None

    @property
    def value(self) -> str:
        return remembered(self.chat_id, self.message_id)


class Receipts:
    """The keyed private messages this worker delivered lately, and the check of those Redis may have lost.

    `strip(chat_id, message_id)` takes a message's buttons away (a Bot API call)."""

    def __init__(
        self, redis: Redis, strip: Callable[[int, int], Awaitable[None]], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.clock = clock
        self._strip = strip
        self._audit = redis.register_script(_AUDIT)
        self._replace = redis.register_script(_REPLACE)
        self._deliveries: dict[tuple[str, str], _Delivery] = {}

    def delivered(self, game_id: str, key: str, value: str, *, committed: bool) -> None:
        """Telegram took the message of `key` (`value`: its "chat:message"); `committed`: whether the
        script that records it answered."""
        shown = parse_remembered(value)
        if shown is None:
            return
        now = self.clock()
        delivery = _Delivery(game_id, key, shown[0], shown[1], now, None if committed else now)
        self._deliveries.pop((game_id, key), None)
        self._deliveries[(game_id, key)] = delivery
        self._forget_old(now)

    def storage_failed(self) -> None:
        """Redis failed: what it took lately may be lost (a failover to a replica that missed it)."""
        now = self.clock()
        for delivery in self._deliveries.values():
            if delivery.doubted_at is None and now - delivery.delivered_at <= DOUBT_SECONDS:
                delivery.doubted_at = now

    @property
    def doubted(self) -> int:
        return sum(1 for delivery in self._deliveries.values() if delivery.doubted_at is not None)

    async def audit(self) -> int:
        """Check every doubted delivery against Redis; returns how many copies lost their buttons.
        Raises RedisError if Redis fails meanwhile (the rest are checked at the next call)."""
        stripped = 0
        now = self.clock()
        for delivery in [d for d in self._deliveries.values() if d.doubted_at is not None]:
            stored = await self._audit(
                keys=[keys.messages(delivery.game_id), keys.game(delivery.game_id)], args=[delivery.key, delivery.value]
            )
            if stored != delivery.value:
                stripped += await self._one_copy(delivery, stored)
                self._deliveries.pop((delivery.game_id, delivery.key), None)
            elif now - delivery.doubted_at > AUDIT_SECONDS:
                self._deliveries.pop((delivery.game_id, delivery.key), None)
        self._forget_old(now)
        return stripped

    async def _one_copy(self, delivery: _Delivery, stored: str) -> int:
        """Two copies of the key's message went out: the older loses its buttons, the key names the newer."""
        other = parse_remembered(stored)
        if other is None:
            return 0
        mine_is_older = (delivery.chat_id, delivery.message_id) < other
        if not mine_is_older:
            replaced = await self._replace(
                keys=[keys.messages(delivery.game_id)], args=[delivery.key, stored, delivery.value]
            )
            if replaced == -1:
                return 0  # the key moved on meanwhile (a newer copy): that copy's sender decides
        chat_id, message_id = (delivery.chat_id, delivery.message_id) if mine_is_older else other
        log.info(
            "game %s: a private message went out twice next to a Redis failure; the older lost its buttons",
            delivery.game_id,
        )
        await self._strip(chat_id, message_id)
        return 1

    def _forget_old(self, now: float) -> None:
        for pair, delivery in list(self._deliveries.items()):
            if delivery.doubted_at is None and now - delivery.delivered_at > DOUBT_SECONDS:
                del self._deliveries[pair]
        while len(self._deliveries) > KEPT:
            del self._deliveries[next(iter(self._deliveries))]
