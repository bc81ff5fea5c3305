"""Redis storage: one document per game, its outbox, and the lookups group -> game, user -> games.

Every change is a compare-and-set: the game's key is WATCHed while it is read and the
new document is written in the same MULTI/EXEC (redis-py's `transaction` helper, which
retries when another writer got there first). The change's messages are pushed to the
game's outbox in that same transaction, so a change is never stored without its
announcements, nor announced without being stored.

Key names: `tgbot.keys`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from redis.asyncio import Redis

from tgbot import keys, outgoing
from tgbot.changes import Change
from tgbot.settings import GroupSettings
from tgbot.table import Table, salvage

# A finished game stays long enough for late presses to be told it is over, then goes.
FINISHED_GAME_SECONDS = 7 * 24 * 3600


class ChatBusy(Exception):
    """The group already has an open lobby or a running game."""

    def __init__(self, game_id: str) -> None:
        super().__init__(game_id)
        self.game_id = game_id


class GameGone(Exception):
    """The game named by a press or a lookup is not stored (any more)."""


class DamagedGame(Exception):
    """The game's stored document cannot be read back as a table (`Table.from_json` refused it).

    Carries the game id and the kind of damage only, never the document: it holds the roles.
    """

    def __init__(self, game_id: str, cause: Exception) -> None:
        super().__init__(game_id)
        self.game_id = game_id
        self.kind = type(cause).__name__


def _read(game_id: str, raw: str | bytes) -> Table:
    try:
        return Table.from_json(raw)
    except ValueError as exc:  # StateFormatError and TableFormatError are ValueErrors
        raise DamagedGame(game_id, exc) from None


@dataclass(frozen=True)
class Ended:
    """A damaged game taken out of play: the group that was told, if it was the group's open or running game."""

    told_chat_id: int | None


class Store:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    # ---------------------------------------------------------------- reading

    async def load(self, game_id: str) -> Table | None:
        """The stored table, None if there is none; `DamagedGame` if it cannot be read back."""
        raw = await self.redis.get(keys.game(game_id))
        return None if raw is None else _read(game_id, raw)

    async def game_of_chat(self, chat_id: int) -> str | None:
        return await self.redis.get(keys.chat_game(chat_id))

    async def table_of_chat(self, chat_id: int) -> Table | None:
        """The group's open or running table; `DamagedGame` if it cannot be read back."""
        game_id = await self.game_of_chat(chat_id)
        return None if game_id is None else await self.load(game_id)

    async def games_of_user(self, user_id: int) -> list[str]:
        return sorted(await self.redis.smembers(keys.user_games(user_id)))

    async def last_record(self, chat_id: int) -> str | None:
        return await self.redis.get(keys.chat_record(chat_id))

    # ---------------------------------------------------------------- writing

    async def create(self, change: Change) -> None:
        """Store a new game as the group's current one, unless the group already has one."""
        table = change.table
        chat = keys.chat_game(table.chat_id)

        async def write(pipe) -> None:
            current = await pipe.get(chat)
            if current is not None:
                raise ChatBusy(current)
            pipe.multi()
            pipe.set(keys.game(table.id), table.to_json())
            pipe.set(chat, table.id)
            self._queue(pipe, table.id, change.outgoing)
            self._index_players(pipe, None, table)
            self._schedule(pipe, None, table)

        await self.redis.transaction(write, chat)

    async def update(
        self, game_id: str, mutate: Callable[[Table], Change], record: Callable[[Table], str | None] | None = None
    ) -> Change:
        """Apply `mutate` to the stored table and store its result atomically.

        `mutate` may run more than once (when another writer wins the race) and must be
        pure; a `Refused` it raises leaves everything as it was. `record`, given the new
        table, may return a finished game's record to keep for the group. A stored table
        that cannot be read back raises `DamagedGame` and is left as it is.
        """
        key = keys.game(game_id)

        async def write(pipe) -> Change:
            raw = await pipe.get(key)
            if raw is None:
                raise GameGone(game_id)
            before = _read(game_id, raw)
            change = mutate(before)
            after = change.table
            pipe.multi()
            if after != before:
                pipe.set(key, after.to_json())
            self._queue(pipe, game_id, change.outgoing)
            self._index_players(pipe, before, after)
            self._schedule(pipe, before, after)
            if before.is_active and not after.is_active:
                pipe.delete(keys.chat_game(after.chat_id))
                for kept in (key, keys.outbox(game_id), keys.messages(game_id)):
                    pipe.expire(kept, FINISHED_GAME_SECONDS)
                finished = record(after) if record else None
                if finished is not None:
                    pipe.set(keys.chat_record(after.chat_id), finished)
            return change

        return await self.redis.transaction(write, key, value_from_callable=True)

    async def end_damaged(
        self,
        game_id: str,
        notice: Callable[[int, str | None], list[outgoing.Outgoing]],
        chat_id: int | None = None,
    ) -> Ended | None:
        """Take a game whose document cannot be read back out of play, atomically.

        The document is set aside (not deleted, so it can be looked at), the game leaves the
        clock and its players' and group's lookups, and if it was the group's open or running
        game the group gets `notice(chat, language)` through the game's outbox. `chat_id` is
        where the request came from, if known: the group, when the document cannot say. Returns
        None when there was nothing to end: another worker ended it first, or it reads again.
        """
        key = keys.game(game_id)

        async def write(pipe) -> Ended | None:
            raw = await pipe.get(key)
            if raw is None:
                return None
            try:
                Table.from_json(raw)
            except ValueError:
                pass
            else:
                return None
            salvaged = salvage(raw)
            group = salvaged.chat_id
            if group is None and chat_id is not None and await self.game_of_chat(chat_id) == game_id:
                group = chat_id
            if group is None:
                # A rare path (a document too broken to name its group): look the group up.
                group = await self._chat_of_game(game_id)
            # Likewise for its players (a lobby may have none; the lookup then finds none).
            user_keys = [keys.user_games(u) for u in salvaged.user_ids] or await self._user_keys_of_game(game_id)
            running = False
            language = salvaged.language
            if group is not None:
                await pipe.watch(keys.chat_game(group))
                running = await pipe.get(keys.chat_game(group)) == game_id
                language = language or (await self.settings(group)).language
            pipe.multi()
            pipe.set(keys.damaged(game_id), raw, ex=FINISHED_GAME_SECONDS)
            pipe.delete(key)
            pipe.zrem(keys.DEADLINES, game_id)
            for players_games in user_keys:
                pipe.srem(players_games, game_id)
            for kept in (keys.outbox(game_id), keys.messages(game_id)):
                pipe.expire(kept, FINISHED_GAME_SECONDS)
            if running:
                pipe.delete(keys.chat_game(group))
                self._queue(pipe, game_id, notice(group, language))
            return Ended(group if running else None)

        return await self.redis.transaction(write, key, value_from_callable=True)

    async def _user_keys_of_game(self, game_id: str) -> list[str]:
        return [
            key
            async for key in self.redis.scan_iter(match=keys.USER_GAMES_PATTERN, count=1000)
            if await self.redis.sismember(key, game_id)
        ]

    async def _chat_of_game(self, game_id: str) -> int | None:
        async for key in self.redis.scan_iter(match=keys.CHAT_GAME_PATTERN, count=1000):
            if await self.redis.get(key) == game_id:
                return keys.chat_of_chat_game_key(key)
        return None

    @staticmethod
    def _queue(pipe, game_id: str, items: Iterable[outgoing.Outgoing]) -> None:
        encoded = [outgoing.dumps(item) for item in items]
        if encoded:
            pipe.rpush(keys.outbox(game_id), *encoded)
            pipe.sadd(keys.PENDING_OUTBOXES, game_id)

    @staticmethod
    def _schedule(pipe, before: Table | None, after: Table) -> None:
        wake = after.next_wake
        if before is not None and before.next_wake == wake:
            return
        if wake is None:
            pipe.zrem(keys.DEADLINES, after.id)
        else:
            pipe.zadd(keys.DEADLINES, {after.id: wake})

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """Ids of games whose clock has something to do by `now`."""
        return await self.redis.zrangebyscore(keys.DEADLINES, "-inf", now, start=0, num=limit)

    async def pending_outboxes(self) -> list[str]:
        return sorted(await self.redis.smembers(keys.PENDING_OUTBOXES))

    async def forget_deadline(self, game_id: str) -> None:
        await self.redis.zrem(keys.DEADLINES, game_id)

    # ---------------------------------------------------------------- group settings

    async def settings(self, chat_id: int) -> GroupSettings:
        return GroupSettings.from_json(await self.redis.get(keys.chat_settings(chat_id)))

    async def update_settings(
        self, chat_id: int, change: Callable[[GroupSettings], GroupSettings]
    ) -> tuple[GroupSettings, GroupSettings]:
        """Compare-and-set the group's settings; returns (before, after)."""
        key = keys.chat_settings(chat_id)

        async def write(pipe) -> tuple[GroupSettings, GroupSettings]:
            before = GroupSettings.from_json(await pipe.get(key))
            after = change(before)
            pipe.multi()
            if after != before:
                pipe.set(key, after.to_json())
            return before, after

        return await self.redis.transaction(write, key, value_from_callable=True)

    @staticmethod
    def _index_players(pipe, before: Table | None, after: Table) -> None:
        now = {p.user_id for p in after.players} if after.is_active else set()
        then = {p.user_id for p in before.players} if before is not None and before.is_active else set()
        for user_id in then - now:
            pipe.srem(keys.user_games(user_id), after.id)
        for user_id in now - then:
            pipe.sadd(keys.user_games(user_id), after.id)

    # ---------------------------------------------------------------- messages already sent

    async def remember_message(self, game_id: str, key: str, chat_id: int, message_id: int) -> None:
        await self.redis.hset(keys.messages(game_id), key, f"{chat_id}:{message_id}")

    async def message_of(self, game_id: str, key: str) -> tuple[int, int] | None:
        raw = await self.redis.hget(keys.messages(game_id), key)
        if raw is None:
            return None
        chat_id, message_id = raw.rsplit(":", 1)
        return int(chat_id), int(message_id)
