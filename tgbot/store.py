"""Redis storage: one document per game, its outbox, and the lookups group -> game, user -> games.

Every change to a game is a compare-and-set: the document is read (GET), the move is worked
out from it, and one Lua script writes the new document only if the stored one is still the
one read, retrying from the read when another writer got there first. The change's
messages are pushed to the game's outbox by that same script, so a change is never stored
without its announcements, nor announced without being stored. Creating a game, ending a
damaged one and the group settings use WATCH and MULTI/EXEC (redis-py's `transaction`).

Key names: `tgbot.keys`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from redis.asyncio import Redis

from tgbot import keys, outgoing
from tgbot.changes import Change
from tgbot.settings import GroupSettings
from tgbot.table import Table, salvage

# A finished game stays long enough for late presses to be told it is over, then goes.
FINISHED_GAME_SECONDS = 7 * 24 * 3600
# Documents and tables kept in memory, for this many games (`Store._table`, `Store.update`).
TABLES_KEPT = 1024


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


# A drain's outbox lock lives this long unless renewed (see `tgbot.outbox`).
OUTBOX_LOCK_SECONDS = 2.0

# Lua: the message keys a queue's items name that a drain must look up (`needs_lookup`).
LOOKUPS_LUA = """
local function lookups_of(items)
    local wanted = {}
    for _, raw in ipairs(items) do
        local ok, item = pcall(cjson.decode, raw)
        if ok and type(item.key) == 'string' and item.key ~= ''
                and (item.kind == 'Edit' or (item.kind == 'Send' and tonumber(item.chat_id) > 0)) then
            wanted[#wanted + 1] = item.key
        end
    end
    return wanted
end
"""

# One game's compare-and-set, with everything that goes with it, in one round trip.
#   KEYS: the game, its outbox, the set of pending outboxes, the outbox lock, the game's message
#   ids; then what the other commands name.
#   ARGV: the document the change was worked out from; the new document ('' leaves it); the game
#   id; the number of messages, the messages; a lock token ('' takes no lock), the lock's life
#   in ms, the number of message keys to look up, the keys; the number of other commands, then
#   each as: name, number of arguments, index of its key among the other commands' keys, arguments.
# Returns {0, the stored document} when it is not the one given (nothing is written); {1} when
# it was written; {2, ids[, items, keys]} when it was written and the outbox lock taken with the
# token: the ids of the keys looked up, and if the queue held more than these messages, all of
# its items and the keys looked up for them.
_UPDATE = (
    LOOKUPS_LUA
    + """
local current = redis.call('GET', KEYS[1])
if current ~= ARGV[1] then return {0, current} end
if ARGV[2] ~= '' then redis.call('SET', KEYS[1], ARGV[2]) end
local count = tonumber(ARGV[4])
local length = 0
if count > 0 then
    length = redis.call('RPUSH', KEYS[2], unpack(ARGV, 5, 4 + count))
    redis.call('SADD', KEYS[3], ARGV[3])
end
local i = 5 + count
local token, life, lookups = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
local first = i + 3
i = first + lookups
local commands = tonumber(ARGV[i])
i = i + 1
for _ = 1, commands do
    local n = tonumber(ARGV[i + 1])
    redis.call(ARGV[i], KEYS[5 + tonumber(ARGV[i + 2])], unpack(ARGV, i + 3, i + 2 + n))
    i = i + 3 + n
end
if count == 0 or token == '' or not redis.call('SET', KEYS[4], token, 'NX', 'PX', life) then return {1} end
if length == count then
    local ids = {}
    if lookups > 0 then ids = redis.call('HMGET', KEYS[5], unpack(ARGV, first, first + lookups - 1)) end
    return {2, ids}
end
local items = redis.call('LRANGE', KEYS[2], 0, -1)
local wanted = lookups_of(items)
local ids = {}
if #wanted > 0 then ids = redis.call('HMGET', KEYS[5], unpack(wanted)) end
return {2, ids, items, wanted}
"""
)


def needs_lookup(item: outgoing.Outgoing) -> bool:
    """Whether a drain must know what its key names before delivering it: an edit (which message),
    a private message of a key (whether it was delivered: `outgoing.once_only`)."""
    return bool(getattr(item, "key", "")) and (isinstance(item, outgoing.Edit) or outgoing.once_only(item))


@dataclass(frozen=True)
class Claim:
    """The outbox lock a write took for its game (this process drains it next), and the queue as
    it stood then: its raw items, the message keys they need looked up, and their ids."""

    token: str
    taken_at: float  # time.monotonic() just before the write went out: the lock lives from then on at most
    raws: list[str]
    wanted: list[str]
    ids: list[str | None]
    items: list[outgoing.Outgoing] | None = None  # the raw items parsed, when the write had them at hand


@dataclass
class _Commands:
    """Commands recorded for the update script, with the pipeline's method names (so the helpers
    below write to either)."""

    keys: list[str] = field(default_factory=list)
    args: list[str | int | float] = field(default_factory=list)
    count: int = 0

    def _add(self, name: str, key: str, *args: str | int | float) -> None:
        if key not in self.keys:
            self.keys.append(key)
        self.args += [name, len(args), self.keys.index(key) + 1, *args]
        self.count += 1

    def set(self, key: str, value: str) -> None:
        self._add("SET", key, value)

    def delete(self, key: str) -> None:
        self._add("DEL", key)

    def expire(self, key: str, seconds: int) -> None:
        self._add("EXPIRE", key, seconds)

    def sadd(self, key: str, *members: str) -> None:
        self._add("SADD", key, *members)

    def srem(self, key: str, *members: str) -> None:
        self._add("SREM", key, *members)

    def zadd(self, key: str, mapping: dict[str, float]) -> None:
        self._add("ZADD", key, *[value for member, score in mapping.items() for value in (score, member)])

    def zrem(self, key: str, *members: str) -> None:
        self._add("ZREM", key, *members)


class Store:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._update = redis.register_script(_UPDATE)
        # Outbox locks that writes of this process took, until its drain of the game takes them over.
        self._claims: dict[str, Claim] = {}
        # The tables of the documents last read or written here, by the exact document: a press
        # mostly reads what the press before it wrote, and reading a table back (with its checks)
        # is the costliest step of a press. Tables are immutable, so they are shared safely.
        self._tables: dict[str, Table] = {}
        # Each game's document as this process last read or wrote it (`update` starts from it).
        self._latest: dict[str, str] = {}

    def _remember_latest(self, game_id: str, raw: str) -> None:
        self._latest.pop(game_id, None)  # re-inserted: the dict stays ordered by last use
        self._latest[game_id] = raw
        if len(self._latest) > TABLES_KEPT:
            del self._latest[next(iter(self._latest))]

    def _table(self, game_id: str, raw: str) -> Table:
        table = self._tables.get(raw)
        if table is None:
            table = _read(game_id, raw)
            self._keep(raw, table)
        return table

    def _keep(self, raw: str, table: Table) -> None:
        self._tables[raw] = table
        if len(self._tables) > TABLES_KEPT:
            del self._tables[next(iter(self._tables))]  # the oldest

    # ---------------------------------------------------------------- reading

    async def load(self, game_id: str) -> Table | None:
        """The stored table, None if there is none; `DamagedGame` if it cannot be read back."""
        raw = await self.redis.get(keys.game(game_id))
        if raw is None:
            return None
        table = self._table(game_id, raw)
        self._remember_latest(game_id, raw)
        return table

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
        self,
        game_id: str,
        mutate: Callable[[Table], Change],
        record: Callable[[Table], str | None] | None = None,
        *,
        claim: bool = True,
    ) -> Change:
        """Apply `mutate` to the stored table and store its result atomically.

        `mutate` may run more than once (when another writer wins the race) and must be
        pure; a `Refused` it raises leaves everything as it was. `record`, given the new
        table, may return a finished game's record to keep for the group. A stored table
        that cannot be read back raises `DamagedGame` and is left as it is.

        A change that queues messages also takes the game's outbox lock if no drain holds it
        (`claim`), in the same step, and keeps it with the queue as it stood for this process's next
        drain of the game (`take_claim`), which the caller starts at once: the drain saves a round
        trip. If this process dies first, the lock lapses after `OUTBOX_LOCK_SECONDS` and the
        messages wait in the outbox (and its pending set) for any worker's clock.
        """
        key = keys.game(game_id)
        # Start from the document this process last read or wrote for the game, without reading it:
        # the script writes only if it is still the stored one, and otherwise answers with the one
        # that is. What a move refuses (or raises) on a document not read just now is checked
        # against a fresh read before it counts.
        raw = self._latest.get(game_id)
        fresh = raw is None
        if fresh:
            raw = await self.redis.get(key)
        while True:
            if raw is None:
                self._latest.pop(game_id, None)
                raise GameGone(game_id)
            before = self._table(game_id, raw)
            try:
                change = mutate(before)
            except Exception:
                if fresh:
                    raise
                current, fresh = await self.redis.get(key), True
                if current == raw:
                    raise
                raw = current
                continue
            after = change.table
            commands = _Commands()
            self._index_players(commands, before, after)
            self._schedule(commands, before, after)
            if before.is_active and not after.is_active:
                commands.delete(keys.chat_game(after.chat_id))
                for kept in (key, keys.outbox(game_id), keys.messages(game_id)):
                    commands.expire(kept, FINISHED_GAME_SECONDS)
                finished = record(after) if record else None
                if finished is not None:
                    commands.set(keys.chat_record(after.chat_id), finished)
            written = after.to_json() if after != before else ""
            messages = [outgoing.dumps(item) for item in change.outgoing]
            lookups = [item.key for item in change.outgoing if needs_lookup(item)] if claim else []
            token = secrets.token_hex(8) if claim and messages else ""
            taken_at = time.monotonic()
            stored = await self._update(
                keys=[
                    key,
                    keys.outbox(game_id),
                    keys.PENDING_OUTBOXES,
                    keys.outbox_lock(game_id),
                    keys.messages(game_id),
                    *commands.keys,
                ],
                args=[
                    raw,
                    written,
                    game_id,
                    len(messages),
                    *messages,
                    token,
                    int(OUTBOX_LOCK_SECONDS * 1000),
                    len(lookups),
                    *lookups,
                    commands.count,
                    *commands.args,
                ],
            )
            if stored[0] == 0:
                # Another writer got there first (or this process's copy was old): work the move out
                # again on what is stored.
                raw, fresh = stored[1], True
                continue
            self._remember_latest(game_id, written or raw)
            if written:
                self._keep(written, after)
            if stored[0] == 2:
                if len(stored) == 2:  # the queue holds exactly these messages
                    self._claims[game_id] = Claim(
                        token, taken_at, messages, lookups, list(stored[1]), list(change.outgoing)
                    )
                else:
                    self._claims[game_id] = Claim(token, taken_at, list(stored[2]), list(stored[3]), list(stored[1]))
            return change

    def take_claim(self, game_id: str) -> Claim | None:
        """The outbox lock a write of this process took for the game, for the drain that goes next."""
        return self._claims.pop(game_id, None)

    async def enqueue(self, game_id: str, items: Iterable[outgoing.Outgoing]) -> None:
        """Queue messages in the game's outbox that no change to the game goes with (a record asked for)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            self._queue(pipe, game_id, items)
            await pipe.execute()

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
    # (the outbox remembers them in its own scripts, as `remembered(chat_id, message_id)`)

    async def message_of(self, game_id: str, key: str) -> tuple[int, int] | None:
        return parse_remembered(await self.redis.hget(keys.messages(game_id), key))

    async def delivered_keys(self, game_id: str, message_keys: list[str]) -> set[str]:
        """Which of these message keys name a message that reached its chat."""
        if not message_keys:
            return set()
        found = await self.redis.hmget(keys.messages(game_id), message_keys)
        return {key for key, value in zip(message_keys, found, strict=True) if value is not None}


def remembered(chat_id: int, message_id: int) -> str:
    return f"{chat_id}:{message_id}"


def parse_remembered(raw: str | bytes | None) -> tuple[int, int] | None:
    if raw is None:
        return None
    chat_id, message_id = (raw.decode() if isinstance(raw, bytes) else raw).rsplit(":", 1)
    return int(chat_id), int(message_id)
