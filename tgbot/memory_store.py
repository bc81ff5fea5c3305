"""A group's memory in Redis: its finished games, each person's counts and rating, and who wants to
hear of its next lobby.

All of one group's memory shares one hash tag (`keys.group_memory`), so one script writes a game into
all of it at once. Each write compares and sets the group's version: counts and ratings are worked
out here from what was read, and written only if nothing changed meanwhile. A game is counted at most
once, by its id: the script refuses one already in the group's games, so a game's end told again (a
replay, a worker that died after counting it, the end found behind by the next command) counts nothing
twice. Everything but the list of games can be worked out again from that list (`rebuild`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from redis.asyncio import Redis

from memory.ratings import Rating, rate
from memory.stats import PersonStats, added
from memory.summary import GameSummary
from tgbot import keys

log = logging.getLogger(__name__)

# Write a group's memory if its version is still the one read.
#   KEYS: the group's memory keys (`keys.group_memory`).
#   ARGV: version read ('' none), game id to add ('' none), its summary, its time; then counts of:
#   stats pairs, ratings pairs, names pairs, each count followed by field, value...; then fields to
#   delete from stats, ratings and names (a count, then fields), and games to rewrite (count, id, summary...);
#   last '1' to empty stats and ratings first (a rebuild).
# Returns 1 if written, 0 if the game is counted already, -1 if the version moved (read again).
_WRITE = """
local games, ended, stats, ratings, names, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
if (redis.call('GET', version) or '') ~= ARGV[1] then return -1 end
local game = ARGV[2]
if game ~= '' and redis.call('HEXISTS', games, game) == 1 then return 0 end
local i = 5
local function pairs_into(key)
    local n = tonumber(ARGV[i])
    if n > 0 then redis.call('HSET', key, unpack(ARGV, i + 1, i + 2 * n)) end
    i = i + 1 + 2 * n
end
local function fields_out(key)
    local n = tonumber(ARGV[i])
    if n > 0 then redis.call('HDEL', key, unpack(ARGV, i + 1, i + n)) end
    i = i + 1 + n
end
if ARGV[#ARGV] == '1' then redis.call('DEL', stats, ratings) end
if game ~= '' then
    redis.call('HSET', games, game, ARGV[3])
    redis.call('ZADD', ended, ARGV[4], game)
end
pairs_into(stats)
pairs_into(ratings)
pairs_into(names)
fields_out(stats)
fields_out(ratings)
fields_out(names)
pairs_into(games)
redis.call('INCR', version)
return 1
"""


# A group's memory taken over by the supergroup the group became, unless the supergroup has one.
#   KEYS: the new group's memory keys. ARGV: then for games, ended, stats, ratings, names in turn:
#   a count of pairs, then the pairs. Returns 1 if written, 0 if the new group had a memory already.
_ADOPT = """
if redis.call('EXISTS', KEYS[6]) == 1 then return 0 end
local i = 1
for part = 1, 5 do
    local n = tonumber(ARGV[i])
    if n > 0 then
        if part == 2 then
            for j = i + 1, i + 2 * n, 2 do redis.call('ZADD', KEYS[2], ARGV[j + 1], ARGV[j]) end
        else
            redis.call('HSET', KEYS[part], unpack(ARGV, i + 1, i + 2 * n))
        end
    end
    i = i + 1 + 2 * n
end
redis.call('SET', KEYS[6], 1)
return 1
"""


@dataclass(frozen=True)
class Standing:
    """A person's place on the group's leaderboard."""

    user_id: int
    name: str
    rating: Rating
    stats: PersonStats


def _pairs(mapping: dict) -> list:
    flat: list = [len(mapping)]
    for key, value in mapping.items():
        flat += [key, value]
    return flat


def _fields(fields: Iterable) -> list:
    fields = list(fields)
    return [len(fields), *fields]


def new_ratings(ratings: dict[int, Rating], summary: GameSummary) -> dict[int, Rating]:
    """The ratings of the game's people after it: the two sides rated as teams, computer players at
    the default rating and never rated."""
    resistance, spies, computers = [], [], {True: 0, False: 0}
    for seat, s in enumerate(summary.seats):
        if s.computer or s.user_id is None:
            computers[summary.is_spy(seat)] += 1
        elif str(s.user_id) not in resistance + spies:
            (spies if summary.is_spy(seat) else resistance).append(str(s.user_id))
    rated = rate(
        {str(user): rating for user, rating in ratings.items()},
        resistance,
        spies,
        summary.resistance_won,
        summary.players,
        resistance_computers=computers[False],
        spy_computers=computers[True],
    )
    return {int(user): rating for user, rating in rated.items()}


class GroupMemory:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._write = redis.register_script(_WRITE)
        self._adopt = redis.register_script(_ADOPT)

    # ---------------------------------------------------------------- counting a game

    async def count(self, summary: GameSummary) -> bool:
        """Count a finished game into its group's memory: True if it was counted now, False if it
        had been already."""
        chat = summary.chat_id
        memory = keys.group_memory(chat)
        people = list(summary.people())
        while True:
            # One round trip for what the count is worked out from (all in the group's slot).
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(memory[5])
                pipe.hexists(memory[0], summary.game_id)
                if people:  # (a game needs two people; HMGET of no field is an error)
                    pipe.hmget(memory[2], people)
                    pipe.hmget(memory[3], people)
                version, counted, *read = await pipe.execute()
            stats_read, ratings_read = read or ([], [])
            if counted:
                return False
            version = version or ""
            stats = {user: PersonStats.from_json(v) for user, v in zip(people, stats_read, strict=True) if v}
            ratings = {user: Rating.from_text(v) for user, v in zip(people, ratings_read, strict=True) if v}
            new_stats = added(stats, summary)
            rated = new_ratings(ratings, summary)
            names = {user: summary.seats[summary.seats_of(user)[0]].name for user in people}
            written = await self._write(
                keys=memory,
                args=[version, summary.game_id, summary.to_json(), summary.ended_at]
                + _pairs({user: s.to_json() for user, s in new_stats.items()})
                + _pairs({user: r.to_text() for user, r in rated.items()})
                + _pairs(names)
                + _fields(())
                + _fields(())
                + _fields(())
                + _pairs({})
                + ["0"],
            )
            if written == -1:
                continue
            if written == 1:
                # Ahead of nothing: a lost add leaves a group out of someone's private /stats until
                # their next game there, never a game counted twice.
                async with self.redis.pipeline(transaction=False) as pipe:
                    for user in people:
                        pipe.sadd(keys.user_groups(user), chat)
                    await pipe.execute()
                log.info("game %s: counted in its group's memory", summary.game_id)
            return written == 1

    # ---------------------------------------------------------------- reading

    async def _stats_of(self, chat_id: int, users: list[int]) -> dict[int, PersonStats]:
        if not users:
            return {}
        values = await self.redis.hmget(keys.group_memory(chat_id)[2], users)
        return {user: PersonStats.from_json(value) for user, value in zip(users, values, strict=True) if value}

    async def _ratings_of(self, chat_id: int, users: list[int]) -> dict[int, Rating]:
        if not users:
            return {}
        values = await self.redis.hmget(keys.group_memory(chat_id)[3], users)
        return {user: Rating.from_text(value) for user, value in zip(users, values, strict=True) if value}

    async def stats_in_group(self, chat_id: int, user_id: int) -> PersonStats:
        return (await self._stats_of(chat_id, [user_id])).get(user_id, PersonStats())

    async def rating_in_group(self, chat_id: int, user_id: int) -> Rating | None:
        return (await self._ratings_of(chat_id, [user_id])).get(user_id)

    async def groups_of(self, user_id: int) -> list[int]:
        return sorted(int(chat) for chat in await self.redis.smembers(keys.user_groups(user_id)))

    async def stats_everywhere(self, user_id: int) -> PersonStats:
        """The person's counts over every group they played in."""
        total = PersonStats()
        for chat in await self.groups_of(user_id):
            total = total.merged(await self.stats_in_group(chat, user_id))
        return total

    async def standings(self, chat_id: int) -> list[Standing]:
        """Everyone the group has a rating for, best first (by the rating's conservative estimate)."""
        memory = keys.group_memory(chat_id)
        ratings = await self.redis.hgetall(memory[3])
        if not ratings:
            return []
        users = [int(user) for user in ratings]
        stats = await self._stats_of(chat_id, users)
        names = await self.redis.hmget(memory[4], users)
        rows = [
            Standing(user, name or "?", Rating.from_text(ratings[str(user)]), stats.get(user, PersonStats()))
            for user, name in zip(users, names, strict=True)
        ]
        return sorted(rows, key=lambda row: (-row.rating.ordinal, row.name))

    async def recent_games(self, chat_id: int, limit: int) -> list[GameSummary]:
        """The group's last games, the newest first."""
        memory = keys.group_memory(chat_id)
        ids = await self.redis.zrevrange(memory[1], 0, limit - 1)
        if not ids:
            return []
        return [GameSummary.from_json(text) for text in await self.redis.hmget(memory[0], ids) if text]

    async def game(self, chat_id: int, game_id: str) -> GameSummary | None:
        text = await self.redis.hget(keys.group_memory(chat_id)[0], game_id)
        return None if text is None else GameSummary.from_json(text)

    async def _all_games(self, chat_id: int) -> list[GameSummary]:
        games = [
            GameSummary.from_json(text) for text in (await self.redis.hgetall(keys.group_memory(chat_id)[0])).values()
        ]
        return sorted(games, key=lambda g: (g.ended_at, g.game_id))

    # ---------------------------------------------------------------- forgetting and rebuilding

    async def forget(self, user_id: int) -> int:
        """Take the person's counts, rating and name out of every group's memory; their seats in stored
        games stay (the games happened) without their id or name. Returns how many groups held them."""
        groups = await self.groups_of(user_id)
        for chat in groups:
            memory = keys.group_memory(chat)
            while True:
                version = await self.redis.get(memory[5]) or ""
                rewritten = {
                    g.game_id: g.without(user_id).to_json() for g in await self._all_games(chat) if g.seats_of(user_id)
                }
                written = await self._write(
                    keys=memory,
                    args=[version, "", "", 0, 0, 0, 0] + _fields([user_id]) * 3 + _pairs(rewritten) + ["0"],
                )
                if written == 1:
                    break
            await self.redis.srem(keys.group_next_game(chat), user_id)
        await self.redis.delete(keys.user_groups(user_id))
        log.info("a person's memory was forgotten in %d groups", len(groups))
        return len(groups)

    async def rebuild_group(self, chat_id: int) -> int:
        """Work the group's counts and ratings out again from its stored games, in the order they
        ended. Returns how many games it counted."""
        memory = keys.group_memory(chat_id)
        while True:
            version = await self.redis.get(memory[5]) or ""
            games = await self._all_games(chat_id)
            stats: dict[int, PersonStats] = {}
            ratings: dict[int, Rating] = {}
            for summary in games:
                stats |= added(stats, summary)
                ratings |= new_ratings(ratings, summary)
            written = await self._write(
                keys=memory,
                args=[version, "", "", 0]
                + _pairs({user: s.to_json() for user, s in stats.items()})
                + _pairs({user: r.to_text() for user, r in ratings.items()})
                + _pairs({})
                + _fields(()) * 3
                + _pairs({})
                + ["1"],
            )
            if written == 1:
                for summary in games:
                    for user in summary.people():
                        await self.redis.sadd(keys.user_groups(user), chat_id)
                return len(games)

    async def rebuild(self) -> tuple[int, int]:
        """Rebuild every group's memory (`rebuild_group`); returns (groups, games)."""
        # Found first, rebuilt after: a scan may name a key twice, more so while its keys are written.
        groups = {keys.group_of_games_key(key) async for key in self.redis.scan_iter(match=keys.GROUP_GAMES_PATTERN)}
        games = 0
        for chat_id in sorted(groups):
            games += await self.rebuild_group(chat_id)
        return len(groups), games

    async def move(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group became a supergroup: its memory follows to the new chat id. The two live in
        different slots, so this is copy, then delete; run again (by any worker), a copy already made
        is not made twice and only the old keys go."""
        old = keys.group_memory(old_chat_id)
        if not await self.redis.exists(old[5]):
            return
        games, stats = await self.redis.hgetall(old[0]), await self.redis.hgetall(old[2])
        ended = dict(await self.redis.zrange(old[1], 0, -1, withscores=True))
        ratings, names = await self.redis.hgetall(old[3]), await self.redis.hgetall(old[4])
        args = []
        for part in (games, ended, stats, ratings, names):
            args += _pairs(part)
        await self._adopt(keys=keys.group_memory(new_chat_id), args=args)
        for user in stats:
            await self.redis.sadd(keys.user_groups(int(user)), new_chat_id)
            await self.redis.srem(keys.user_groups(int(user)), old_chat_id)
        asked = await self.waiting_for_next_game(old_chat_id)
        if asked:
            await self.redis.sadd(keys.group_next_game(new_chat_id), *asked)
        await self.redis.delete(*old, keys.group_next_game(old_chat_id))

    # ---------------------------------------------------------------- the next lobby

    async def want_next_game(self, chat_id: int, user_id: int) -> bool:
        """Remember to tell the person of the group's next lobby; False if they had asked already."""
        return bool(await self.redis.sadd(keys.group_next_game(chat_id), user_id))

    async def waiting_for_next_game(self, chat_id: int) -> list[int]:
        return sorted(int(user) for user in await self.redis.smembers(keys.group_next_game(chat_id)))

    async def told_of_next_game(self, chat_id: int, user_ids: Iterable[int]) -> None:
        users = list(user_ids)
        if users:
            await self.redis.srem(keys.group_next_game(chat_id), *users)
