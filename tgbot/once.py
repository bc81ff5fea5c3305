"""A webhook update changes a game once, however often it is processed.

Telegram delivers an update again until a worker answers it. A worker that dies after it stored
the update's change, but before it could mark the update done, leaves the update to be processed
again by another worker; applying it twice would apply the press twice (a seat ticked, then
unticked by the same press). So while webhook mode processes an update (`current` is set), the
first change it makes to a game also writes the update's id into the game's document
(`Table.applied_updates`, the last `KEEP` of them), in the same compare-and-set. Processing the
update again finds the id there and stores nothing (`AlreadyApplied`). What the first processing
answered is kept beside, best effort (`remember`, `answered`), so the person gets the same answer;
those answers go once the update is marked done.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from redis.asyncio import Redis

from tgbot import keys
from tgbot.changes import Change, Reply
from tgbot.table import Table

# Update ids remembered per game: redeliveries of an update come within seconds of its worker dying,
# far fewer updates than this apart.
KEEP = 32
# An answer is kept as long as Telegram may deliver its update again (as long as it stays marked done).
ANSWER_SECONDS = 24 * 3600


class AlreadyApplied(Exception):
    """The update changed this game when it was processed before."""


@dataclass
class Processing:
    """An update being processed in webhook mode."""

    update_id: int
    changed: set[str] = field(default_factory=set)  # the games this processing has changed so far

    def guard(self, game_id: str, mutate: Callable[[Table], Change]) -> Callable[[Table], Change]:
        """`mutate`, refusing a game this update changed before and recording it in the change.

        Only the update's first change to a game is guarded: later ones in the same processing (a lobby
        following the settings step by step) are its own."""
        if game_id in self.changed:
            return mutate
        update_id = self.update_id

        def once(table: Table) -> Change:
            if update_id in table.applied_updates:
                raise AlreadyApplied(update_id)
            change = mutate(table)
            applied = (*table.applied_updates, update_id)[-KEEP:]
            return replace(change, table=replace(change.table, applied_updates=applied))

        return once

    async def remember(self, redis: Redis, game_id: str, reply: Reply | None) -> None:
        """Keep what this change answered, for a processing of the same update after this one."""
        self.changed.add(game_id)
        if reply is None or not reply.text:
            return  # nothing to repeat
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hset(keys.update_answers(self.update_id), game_id, json.dumps([reply.text, reply.alert]))
            pipe.expire(keys.update_answers(self.update_id), ANSWER_SECONDS)
            await pipe.execute()

    async def answered(self, redis: Redis, game_id: str) -> Reply:
        """What the processing that changed the game answered; no text if it died before keeping it."""
        stored = await redis.hget(keys.update_answers(self.update_id), game_id)
        if stored is None:
            return Reply("")
        text, alert = json.loads(stored)
        return Reply(text, alert)


# Set by the webhook around each update it processes; None in polling mode and in the tests' harness.
current: ContextVar[Processing | None] = ContextVar("tgbot_processing_update", default=None)
