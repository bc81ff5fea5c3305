"""Redis storage: one document per game, its outbox, and the lookups group -> game, user -> games.

Every change to a game is a compare-and-set: the document is read (GET), the move is worked
out from it, and one Lua script writes the new document only if the stored one is still the
one read, retrying from the read when another writer got there first. The change's
messages are pushed to the game's outbox by that same script, so a change is never stored
without its announcements, nor announced without being stored. Nothing here uses WATCH/MULTI:
each compare-and-set is one script.

The script touches the game's own keys only (one hash tag, so one Redis Cluster slot). The
lookups across games (the clock's deadlines and pending outboxes, each group's game, each user's
games) are written just before and just after it, in the order `tgbot.indexes` explains, and
repaired by whoever finds them behind.

Key names: `tgbot.keys`.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from redis.asyncio import Redis
from redis.exceptions import RedisError

from tgbot import keys, outgoing
from tgbot.changes import Change
from tgbot.indexes import CLOCK_PATIENCE_SECONDS, Indexes
from tgbot.memory_store import GroupMemory
from tgbot.memory_summary import summary_of
from tgbot.settings import GroupSettings
from tgbot.table import LEFT_KEPT, Stage, Table, salvage

# A finished game stays long enough for late presses to be told it is over, then goes.
FINISHED_GAME_SECONDS = 7 * 24 * 3600
# A field of a game's message ids that names no message: set when the game ends, so that the hash exists
# and expires with the game however late its last messages are delivered.
ENDED_FIELD = "(ended)"
# A group's pointer to a game not (yet) written is taken for a creation on its way for this long.
CREATION_SECONDS = 1.0
# Documents and tables kept in memory, for this many games (`Store._table`, `Store.update`).
TABLES_KEPT = 1024
# Open and running games this process read or wrote, remembered for this many games (`remembered_active`).
ACTIVE_KEPT = 20_000


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


def _with_left(before: Table, after: Table) -> Table:
    """`after`, remembering the people of `before` who are not seated in it (they left the lobby, or the
    group) until the table ends: their lists of games name it until then (`_settle_finished`)."""
    seated = {p.user_id for p in after.people}
    gone = [p.user_id for p in before.people if p.user_id not in seated] if before.is_active else []
    left = [u for u in (*after.left, *gone) if u not in seated]
    left = tuple(dict.fromkeys(left))[-LEFT_KEPT:]
    return after if left == after.left else replace(after, left=left)


@dataclass(frozen=True)
class ActiveGame:
    """Where an open or running game is played, as this process last saw it."""

    chat_id: int
    topic: int | None
    language: str
    lobby: bool


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
                and (item.kind == 'Edit' or item.kind == 'Delete'
                     or (item.kind == 'Send' and (tonumber(item.chat_id) > 0 or item.once == true))) then
            wanted[#wanted + 1] = item.key
        end
    end
    return wanted
end
"""

# One game's compare-and-set, with everything that goes with it, in one round trip, on the game's
# own keys only.
# The document keeps its expiry when written again (KEEPTTL): a finished game that follows its group
# to a supergroup is still forgotten a week after it ended.
#   KEYS: the game, its outbox, the outbox lock, the game's message ids; then what the other
#   commands name (keys of the game's too).
#   ARGV: the document the change was worked out from ('' when the game must not exist yet); the
#   new document ('' leaves it); the number of messages, the messages; a lock token ('' takes no
#   lock), the lock's life in ms, the number of message keys to look up, the keys; the number of
#   other commands, then each as: name, number of arguments, index of its key among the other
#   commands' keys, arguments.
# Returns {0, the stored document} when it is not the one given (nothing is written); {1} when
# it was written; {2, ids[, items, keys]} when it was written and the outbox lock taken with the
# token: the ids of the keys looked up, and if the queue held more than these messages, all of
# its items and the keys looked up for them.
_UPDATE = (
    LOOKUPS_LUA
    + """
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
    if current then return {0, current} end
elseif current ~= ARGV[1] then
    return {0, current}
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') end
local count = tonumber(ARGV[3])
local length = 0
if count > 0 then length = redis.call('RPUSH', KEYS[2], unpack(ARGV, 4, 3 + count)) end
local i = 4 + count
local token, life, lookups = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
local first = i + 3
i = first + lookups
local commands = tonumber(ARGV[i])
i = i + 1
for _ = 1, commands do
    local n = tonumber(ARGV[i + 1])
    redis.call(ARGV[i], KEYS[4 + tonumber(ARGV[i + 2])], unpack(ARGV, i + 3, i + 2 + n))
    i = i + 3 + n
end
if count == 0 or token == '' or not redis.call('SET', KEYS[3], token, 'NX', 'PX', life) then return {1} end
if length == count then
    local ids = {}
    if lookups > 0 then ids = redis.call('HMGET', KEYS[4], unpack(ARGV, first, first + lookups - 1)) end
    return {2, ids}
end
local items = redis.call('LRANGE', KEYS[2], 0, -1)
local wanted = lookups_of(items)
local ids = {}
if #wanted > 0 then ids = redis.call('HMGET', KEYS[4], unpack(wanted)) end
return {2, ids, items, wanted}
"""
)


# A compare-and-set of one string key (a script rather than WATCH/MULTI: on Redis Cluster, redis-py
# may retry an EXEC on a new connection, where the WATCH no longer guards it).
#   KEYS: the key. ARGV: the value read ('' if there was none), the new value. 1 if written.
_REPLACE = """
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""


def needs_lookup(item: outgoing.Outgoing) -> bool:
    """Whether a drain must know what its key names before delivering it: an edit or a deletion (which
    message), a message sent once per key (whether it was delivered: `outgoing.once_only`)."""
    return bool(getattr(item, "key", "")) and (
        isinstance(item, outgoing.Edit | outgoing.Delete) or outgoing.once_only(item)
    )


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
    """Commands on the game's own keys that the update script runs after its write (expiries,
    the finished game's record, setting a damaged document aside)."""

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

    def hsetnx(self, key: str, name: str, value: str) -> None:
        self._add("HSETNX", key, name, value)


class Store:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.indexes = Indexes(redis)
        self.memory = GroupMemory(redis)
        self.wall_clock: Callable[[], float] = time.time  # seconds since the epoch (`GameService` sets its own)
        self._update = redis.register_script(_UPDATE)
        self._replace = redis.register_script(_REPLACE)
        # Outbox locks that writes of this process took, until its drain of the game takes them over.
        self._claims: dict[str, Claim] = {}
        # The tables of the documents last read or written here, by the exact document: a press
        # mostly reads what the press before it wrote, and reading a table back (with its checks)
        # is the costliest step of a press. Tables are immutable, so they are shared safely.
        self._tables: dict[str, Table] = {}
        # Each game's document as this process last read or wrote it (`update` starts from it).
        self._latest: dict[str, str] = {}
        # Where each open or running game this process saw is played: what is left of it if Redis loses it.
        self._active: dict[str, ActiveGame] = {}

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
        self._saw(table)
        return table

    def _saw(self, table: Table) -> None:
        self._active.pop(table.id, None)  # re-inserted: the dict stays ordered by last sight
        if table.is_active:
            self._active[table.id] = ActiveGame(table.chat_id, table.topic, table.language, table.stage is Stage.LOBBY)
            if len(self._active) > ACTIVE_KEPT:
                del self._active[next(iter(self._active))]

    def remembered_active(self, game_id: str) -> ActiveGame | None:
        """Where the game was played, if this process last saw it open or running."""
        return self._active.get(game_id)

    def forget_active_game(self, game_id: str) -> None:
        self._active.pop(game_id, None)

    def forget_active(self) -> dict[str, ActiveGame]:
        """Every game this process last saw open or running, forgotten here (Redis lost them)."""
        active, self._active = self._active, {}
        self._latest.clear()
        return active

    async def lost_mark(self, game_id: str, seconds: int = FINISHED_GAME_SECONDS) -> bool:
        """Mark the game as lost with Redis's data; True for whoever marks it first (they tell the group)."""
        return bool(await self.redis.set(keys.lost(game_id), "1", nx=True, ex=seconds))

    async def was_lost(self, game_id: str) -> bool:
        return bool(await self.redis.exists(keys.lost(game_id)))

    async def was_damaged(self, game_id: str) -> bool:
        return bool(await self.redis.exists(keys.damaged(game_id)))

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

    async def _current_of_chat(self, chat_id: int) -> tuple[str, Table | None] | None:
        """The group's open lobby or running game: its id and its table (None if it cannot be read
        back: whoever reads it ends it); None if the group has none.

        The group's pointer is let go just after its game's last write (`update`); if the process
        died in between, it still names a game that is over, and is let go here. A pointer to a
        game that was never written (its creator died between the two steps of `create`) is let go
        once it is clearly not one on its way. A group that became a supergroup may leave a pointer
        behind in its old chat (let go here) or have its new one ahead of its game (the game is moved
        here): see `tgbot.chat_move`."""
        game_id = await self.redis.get(keys.chat_game(chat_id))
        if game_id is None:
            return None
        try:
            table = await self.load(game_id)
        except DamagedGame:
            return game_id, None
        if table is None:
            await asyncio.sleep(CREATION_SECONDS)
            table = await self.load(game_id)  # (damaged now: raised, for the caller to end)
            if table is not None:
                return game_id, table
        elif table.is_active and table.chat_id != chat_id and table.moved_from != chat_id:
            # The group became a supergroup, and whoever moved the game claimed this chat for it and
            # died (or is still at work) before the game followed (`tgbot.chat_move`): finish the move.
            moved_from = table.chat_id
            try:
                table = await self.move_game(game_id, moved_from, chat_id)
            except DamagedGame:
                return game_id, None
            await self.indexes.release_chat(moved_from, game_id)
            if table is not None and table.is_active:
                return game_id, table
        elif table.is_active and table.chat_id != chat_id:
            # The group's old chat: its game moved with it to the supergroup, and this pointer stayed behind.
            await self.indexes.release_chat(chat_id, game_id)
            return None
        elif table.is_active:
            return game_id, table
        await self.indexes.release_chat(chat_id, game_id)
        if table is not None:
            await self._settle_finished(table)
        return None

    async def game_of_chat(self, chat_id: int) -> str | None:
        """The id of the group's open lobby or running game (see `_current_of_chat`)."""
        current = await self._current_of_chat(chat_id)
        return None if current is None else current[0]

    async def table_of_chat(self, chat_id: int) -> Table | None:
        """The group's open or running table; `DamagedGame` if it cannot be read back."""
        current = await self._current_of_chat(chat_id)
        if current is None:
            return None
        game_id, table = current
        return table if table is not None else await self.load(game_id)

    async def tables_of_user(self, user_id: int) -> list[tuple[str, Table | None]]:
        """The open or running games the user sits in, by id, each with its table (None for one that
        cannot be read back: whoever reads it ends it). The user's list may still name a lobby they
        left (a player who leaves is not taken off it, so that a late write can never take off one
        who joined again) and games that are over; those are left out, and the ones that are over
        let go."""
        seated, over = [], []
        for game_id in sorted(await self.redis.smembers(keys.user_games(user_id))):
            try:
                table = await self.load(game_id)
            except DamagedGame:
                seated.append((game_id, None))
                continue
            if table is None or not table.is_active:
                over.append(game_id)
            elif table.seat_of(user_id) is not None:
                seated.append((game_id, table))
        for game_id in over:
            await self.indexes.remove_player_games(game_id, [user_id])
        return seated

    async def games_of_user(self, user_id: int) -> list[str]:
        """Ids of the open or running games the user sits in (see `tables_of_user`)."""
        return [game_id for game_id, _ in await self.tables_of_user(user_id)]

    async def last_record(self, chat_id: int) -> str | None:
        """The record of the group's last finished game (resistance-record/1 JSON)."""
        pointer = await self.redis.get(keys.chat_record(chat_id))
        if pointer is None or pointer.startswith(keys.LEGACY_CHAT_RECORD_PREFIX):
            return pointer  # a record stored by a version that kept it in the group's key
        return await self.redis.get(keys.record(pointer))

    # ---------------------------------------------------------------- writing

    async def create(self, change: Change) -> None:
        """Store a new game as the group's current one, unless the group already has one.

        The group is claimed first, then the game written: a pointer to a game not yet written is
        what `game_of_chat` tolerates for `CREATION_SECONDS`. The clock's and the players' lookups
        go between the two: ahead of the game, and only for a game the group let in (a group with a
        game refuses many a /newgame, each of which would have left its sender's list of games naming
        a game never written)."""
        change = change.in_topic()
        table = replace(change.table, write_id=secrets.token_hex(6))
        held = await self.indexes.claim_chat(table.chat_id, table.id)
        if held is not None:
            raise ChatBusy(held)
        await self._ahead(None, table, bool(change.outgoing))
        document = table.to_json()
        messages = [outgoing.dumps(item) for item in change.outgoing]
        lookups = [item.key for item in change.outgoing if needs_lookup(item)]
        # Like `update`, the write takes the outbox lock for this process's drain: otherwise another
        # worker's clock, seeing the outbox pending, could take it in between and post the lobby later.
        token = secrets.token_hex(8) if messages else ""
        taken_at = time.monotonic()
        stored = await self._update(
            keys=[keys.game(table.id), keys.outbox(table.id), keys.outbox_lock(table.id), keys.messages(table.id)],
            args=["", document, len(messages), *messages, token, int(OUTBOX_LOCK_SECONDS * 1000)]
            + [len(lookups), *lookups, 0],
        )
        if stored[0] == 0 and stored[1] != document:  # (equal: this write, run again: see `update`)
            # Ids are random: a clash is next to impossible, but never overwrite a game.
            await self.indexes.release_chat(table.chat_id, table.id)
            raise ChatBusy(table.id)
        if stored[0] == 2:
            self._keep_claim(table.id, stored, token, taken_at, messages, lookups, change.outgoing)
        self._remember_latest(table.id, document)
        self._saw(table)
        await self.indexes.settle_deadline(table.id, table.next_wake, table.revision)

    async def update(
        self,
        game_id: str,
        mutate: Callable[[Table], Change],
        record: Callable[[Table], str | None] | None = None,
        *,
        claim: bool = True,
        settle_deadline: bool = False,
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
        messages wait in the outbox (marked pending) for any worker's clock.

        `settle_deadline` (the clock): write the game's deadline to the clock's index even if the
        change leaves it as it was, since the clock woke for it (`tgbot.indexes`).
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
            change = change.in_topic()
            after = change.table
            after = _with_left(before, after)
            if after != before:
                after = replace(after, revision=before.revision + 1, write_id=secrets.token_hex(6))
                change = replace(change, table=after)
            finishing = before.is_active and not after.is_active
            commands = _Commands()
            finished = None
            if finishing:
                # The message ids exist from now on, so that they expire: ids of messages still queued,
                # delivered after this write, would otherwise start a hash without an expiry.
                commands.hsetnx(keys.messages(game_id), ENDED_FIELD, "1")
                for kept in (key, keys.outbox(game_id), keys.messages(game_id)):
                    commands.expire(kept, FINISHED_GAME_SECONDS)
                finished = record(after) if record else None
                if finished is not None:
                    commands.set(keys.record(game_id), finished)
                    commands.expire(keys.record(game_id), FINISHED_GAME_SECONDS)
            written = after.to_json() if after != before else ""
            messages = [outgoing.dumps(item) for item in change.outgoing]
            lookups = [item.key for item in change.outgoing if needs_lookup(item)] if claim else []
            token = secrets.token_hex(8) if claim and messages else ""
            await self._ahead(before, after, bool(messages))
            taken_at = time.monotonic()
            stored = await self._update(
                keys=[key, keys.outbox(game_id), keys.outbox_lock(game_id), keys.messages(game_id), *commands.keys],
                args=[
                    raw,
                    written,
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
            if stored[0] == 0 and written and stored[1] == written:
                # This very write (its `write_id` is this attempt's own): the script ran, its answer was
                # lost with the connection, and the client ran it again (a Redis or cluster master
                # restarting). Working the move out again on it would apply the press twice.
                stored = [1]
            elif stored[0] == 0:
                # Another writer got there first (or this process's copy was old): work the move out
                # again on what is stored.
                raw, fresh = stored[1], True
                continue
            self._remember_latest(game_id, written or raw)
            if written:
                self._keep(written, after)
                self._saw(after)
            if stored[0] == 2:
                self._keep_claim(game_id, stored, token, taken_at, messages, lookups, change.outgoing)
            if settle_deadline or before.next_wake != after.next_wake:
                await self.indexes.settle_deadline(game_id, after.next_wake, after.revision)
            if finishing:
                await self._settle_finished(after, finished is not None)
            return change

    async def move_game(self, game_id: str, old_chat_id: int, new_chat_id: int) -> Table | None:
        """The game follows its group, which became a supergroup: the stored table names the new chat
        (if it named the old one; run again, it changes nothing). Returns the table as stored, None
        if the game is not stored; `DamagedGame` if it cannot be read back. The messages queued for
        the old chat follow when the outbox is told the new id (`tgbot.outbox`)."""
        try:
            change = await self.update(
                game_id, lambda table: Change(table.moved_to(old_chat_id, new_chat_id)), claim=False
            )
        except GameGone:
            return None
        return change.table

    async def move_settings(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group's settings follow it to the supergroup it became, unless the supergroup has some
        of its own already (set there since: they are the newer)."""
        await self.indexes.move_chat_key(keys.chat_settings(old_chat_id), keys.chat_settings(new_chat_id))

    async def _ahead(self, before: Table | None, after: Table, pending: bool) -> None:
        """The lookups written before a write of `after` (see `tgbot.indexes`)."""
        then = {p.user_id for p in before.people} if before is not None and before.is_active else set()
        now = {p.user_id for p in after.people} if after.is_active else set()
        # Only a deadline that comes sooner is written ahead: one that moves later is no later in the
        # index than the table's until the write after the table's (and a late write of an older
        # revision leaves it sooner still, never later).
        sooner = after.next_wake is not None and (
            before is None or before.next_wake is None or after.next_wake < before.next_wake
        )
        earlier = after.next_wake if sooner else None
        await self.indexes.ahead(after.id, pending=pending, earlier_wake=earlier, revision=after.revision)
        if now - then:
            await self.indexes.add_player_games(after.id, now - then)

    async def _settle_finished(self, table: Table, recorded: bool | None = None) -> None:
        """The lookups let go once a game is over, after its last write; again by whoever finds them
        behind (`game_of_chat`). `recorded`: whether the game's record was written (None: look).

        A game played to its end is counted into its group's memory first: if this process dies
        before, the group's pointer still names the game, and whoever finds it behind counts it (once:
        `GroupMemory.count`)."""
        if table.stage is Stage.OVER and table.game is not None and table.game.is_over:
            await self.memory.count(summary_of(table, self.wall_clock()))
        await self.indexes.release_chat(table.chat_id, table.id)
        await self.indexes.remove_player_games(table.id, [p.user_id for p in table.people] + list(table.left))
        if recorded is None:
            recorded = bool(await self.redis.exists(keys.record(table.id)))
        if recorded:
            await self.indexes.set_last_record(table.chat_id, table.id)

    def _keep_claim(self, game_id, stored, token, taken_at, messages, lookups, items) -> None:
        """The outbox lock the write script took (`stored[0] == 2`), for this process's next drain."""
        if len(stored) == 2:  # the queue holds exactly these messages
            self._claims[game_id] = Claim(token, taken_at, messages, lookups, list(stored[1]), list(items))
        else:
            self._claims[game_id] = Claim(token, taken_at, list(stored[2]), list(stored[3]), list(stored[1]))

    def take_claim(self, game_id: str) -> Claim | None:
        """The outbox lock a write of this process took for the game, for the drain that goes next."""
        return self._claims.pop(game_id, None)

    async def enqueue(self, game_id: str, items: Iterable[outgoing.Outgoing]) -> None:
        """Queue messages in the game's outbox that no change to the game goes with (a record asked for)."""
        encoded = [outgoing.dumps(item) for item in items]
        if encoded:
            await self.indexes.mark_pending(game_id)
            await self.redis.rpush(keys.outbox(game_id), *encoded)

    async def end_damaged(
        self,
        game_id: str,
        notice: Callable[[int, str | None], list[outgoing.Outgoing]],
        chat_id: int | None = None,
    ) -> Ended | None:
        """Take a game whose document cannot be read back out of play.

        The document is set aside (not deleted, so it can be looked at), atomically with queuing
        `notice(chat, language)` for its group if it was the group's open or running game; then
        the game leaves the clock and its players' and group's lookups. `chat_id` is where the
        request came from, if known: the group, when the document cannot say. Returns None when
        there was nothing to end: another worker ended it first, or it reads again.
        """
        key = keys.game(game_id)
        raw = await self.redis.get(key)
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
        if group is None and chat_id is not None and await self.redis.get(keys.chat_game(chat_id)) == game_id:
            group = chat_id
        if group is None:
            # A rare path (a document too broken to name its group): look the group up.
            group = await self._chat_of_game(game_id)
        # Likewise for its players (a lobby may have none; the lookup then finds none).
        user_ids = list(salvaged.user_ids) or await self._users_of_game(game_id)
        running = group is not None and await self.redis.get(keys.chat_game(group)) == game_id
        messages = []
        if running:
            language = salvaged.language or (await self.settings(group)).language
            messages = [outgoing.dumps(item) for item in notice(group, language)]
            await self.indexes.mark_pending(game_id)
        commands = _Commands()
        commands.set(keys.damaged(game_id), raw)
        commands.expire(keys.damaged(game_id), FINISHED_GAME_SECONDS)
        commands.delete(key)
        commands.hsetnx(keys.messages(game_id), ENDED_FIELD, "1")
        for kept in (keys.outbox(game_id), keys.messages(game_id)):
            commands.expire(kept, FINISHED_GAME_SECONDS)
        stored = await self._update(
            keys=[key, keys.outbox(game_id), keys.outbox_lock(game_id), keys.messages(game_id), *commands.keys],
            args=[raw, "", len(messages), *messages, "", 0, 0, commands.count, *commands.args],
        )
        if stored[0] == 0:
            return None  # another worker ended it (or wrote it) first
        self._latest.pop(game_id, None)
        self._active.pop(game_id, None)
        await self.indexes.forget_deadline(game_id)
        await self.indexes.remove_player_games(game_id, user_ids)
        if running:
            await self.indexes.release_chat(group, game_id)
        return Ended(group if running else None)

    async def _users_of_game(self, game_id: str) -> list[int]:
        return [
            int(key[len(keys.PREFIX) :].split(":")[1])
            async for key in self.redis.scan_iter(match=keys.USER_GAMES_PATTERN, count=1000)
            if await self.redis.sismember(key, game_id)
        ]

    async def _chat_of_game(self, game_id: str) -> int | None:
        async for key in self.redis.scan_iter(match=keys.CHAT_GAME_PATTERN, count=1000):
            if await self.redis.get(key) == game_id:
                return keys.chat_of_chat_game_key(key)
        return None

    async def due(self, now: float, limit: int = 100) -> list[str]:
        """Ids of games whose clock has something to do by `now`."""
        return await self.indexes.due(now, limit)

    async def settle_owed(self) -> int:
        """Write again, from the stored tables, the clock entries that writes gave up on while their
        shard did not answer (`tgbot.indexes`); returns how many were written. A shard still silent
        is tried once per call."""
        settled = 0
        silent: set[int] = set()
        for game_id in self.indexes.owed():
            shard = keys.clock_shard(game_id)
            if shard in silent:
                continue
            self.indexes.paid(game_id)
            try:
                async with asyncio.timeout(CLOCK_PATIENCE_SECONDS):
                    raw = await self.redis.get(keys.game(game_id))
                    queued = raw is not None and await self.redis.llen(keys.outbox(game_id))
            except (RedisError, TimeoutError):
                self.indexes.owe(game_id)  # the game's own master is down too: its next move writes it
                continue
            if raw is None:
                continue  # gone: nothing of it is owed to the clock
            try:
                table = self._table(game_id, raw)
            except DamagedGame:
                continue  # ended by whoever reads it next
            if queued:
                await self.indexes.mark_pending(game_id)
            await self.indexes.settle_deadline(game_id, table.next_wake, table.revision)
            if self.indexes.is_owed(game_id):
                silent.add(shard)
            else:
                settled += 1
        return settled

    async def pending_outboxes(self) -> list[str]:
        return await self.indexes.pending()

    async def forget_deadline(self, game_id: str) -> None:
        await self.indexes.forget_deadline(game_id)

    # ---------------------------------------------------------------- group settings

    async def settings(self, chat_id: int) -> GroupSettings:
        return GroupSettings.from_json(await self.redis.get(keys.chat_settings(chat_id)))

    async def update_settings(
        self, chat_id: int, change: Callable[[GroupSettings], GroupSettings]
    ) -> tuple[GroupSettings, GroupSettings]:
        """Compare-and-set the group's settings; returns (before, after)."""
        key = keys.chat_settings(chat_id)
        while True:
            raw = await self.redis.get(key)
            before = GroupSettings.from_json(raw)
            after = change(before)
            if after == before or await self._replace(keys=[key], args=[raw or "", after.to_json()]):
                return before, after

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
