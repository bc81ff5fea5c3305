"""The lookups across games (`tgbot.indexes`): written around each game's own write so that a
process dying in between, or two writes overtaking each other, leave nothing that is not repaired.

Each game's keys share a hash tag, so on Redis Cluster each game's script stays in one slot
(tests/test_cluster.py plays games on a real cluster); here the same is checked key by key."""

from __future__ import annotations

import asyncio
import random

import pytest
from redis.cluster import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError

from engine import Phase
from tests.bot_helpers import AlwaysApprove, command_text, started_on
from tests.test_bot_deadlines import PROPOSAL, T0, started_game
from tgbot import keys, migrate
from tgbot.indexes import Indexes
from tgbot.offline.simulation import SimulatedGroup

pytestmark = pytest.mark.usefixtures("no_handler_errors")


def slot(key: str) -> int:
    return key_slot(key.encode())


async def test_every_key_of_a_game_shares_one_slot_and_the_clocks_keys_another(make_bot, telegram, redis):
    group = await started_on(await make_bot(1), telegram)
    await group.play(AlwaysApprove(rng=random.Random(1)))
    game_keys = [key async for key in redis.scan_iter(match=keys.game(group.game_id) + "*")]
    assert {keys.game(group.game_id), keys.messages(group.game_id), keys.record(group.game_id)} <= set(game_keys)
    assert {slot(key) for key in game_keys} == {slot(keys.game(group.game_id))}
    named = [keys.outbox_lock(group.game_id), keys.damaged(group.game_id), keys.record(group.game_id)]
    assert {slot(key) for key in named} == {slot(keys.game(group.game_id))}
    for shard in range(keys.CLOCK_SHARDS):
        clock_keys = [keys.deadlines(shard), keys.deadline_revisions(shard), keys.pending_outboxes(shard)]
        assert len({slot(key) for key in clock_keys}) == 1
    # The shards spread over the slots, so a cluster's masters share them (tests/test_cluster.py).
    assert len({slot(keys.deadlines(shard)) for shard in range(keys.CLOCK_SHARDS)}) == keys.CLOCK_SHARDS
    assert slot(keys.update_claim(7)) == slot(keys.update_answers(7))


async def test_a_late_deadline_write_never_undoes_a_newer_one(redis):
    indexes = Indexes(redis)
    await indexes.settle_deadline("g", 500.0, revision=7)
    assert not await indexes.settle_deadline("g", 900.0, revision=6)  # an older table's, arriving late
    assert await redis.zscore(keys.deadlines_of("g"), "g") == 500.0
    # Ahead of a write, a deadline only ever comes forward, and an older revision's settle after
    # that is refused too.
    await indexes.ahead("g", pending=False, earlier_wake=800.0, revision=8)
    assert await redis.zscore(keys.deadlines_of("g"), "g") == 500.0
    await indexes.ahead("g", pending=False, earlier_wake=300.0, revision=9)
    assert await redis.zscore(keys.deadlines_of("g"), "g") == 300.0
    assert not await indexes.settle_deadline("g", 900.0, revision=8)
    assert await indexes.settle_deadline("g", 800.0, revision=9)
    assert await redis.zscore(keys.deadlines_of("g"), "g") == 800.0
    assert await indexes.settle_deadline("g", None, revision=10)
    assert await redis.zscore(keys.deadlines_of("g"), "g") is None


async def test_a_fresh_pending_mark_outlives_an_empty_drain(redis, monkeypatch):
    """A drain that finds the outbox empty must not take off a mark a write set a moment ago: the
    write's messages may be on their way."""
    indexes = Indexes(redis)
    await indexes.mark_pending("g")
    await indexes.settle_pending("g")
    assert await redis.zscore(keys.pending_outboxes_of("g"), "g") is not None
    monkeypatch.setattr("tgbot.indexes.PENDING_GRACE_MS", 0)
    await indexes.settle_pending("g")
    assert await redis.zscore(keys.pending_outboxes_of("g"), "g") is None


async def test_a_pending_mark_stamped_by_a_clock_ahead_is_taken_off_after_its_grace(redis, monkeypatch):
    """A mark ten minutes ahead of Redis's clock (stamped before a failover to a replica whose machine's
    clock is behind): an empty drain makes it count from now, so it is taken off once its grace has
    passed, not ten minutes later (every worker's clock draining the empty outbox meanwhile)."""
    indexes = Indexes(redis)
    seconds, _ = await redis.time()
    await redis.zadd(keys.pending_outboxes_of("g"), {"g": (int(seconds) + 600) * 1000})
    await indexes.settle_pending("g")
    assert await redis.zscore(keys.pending_outboxes_of("g"), "g") is not None  # still within its grace
    monkeypatch.setattr("tgbot.indexes.PENDING_GRACE_MS", 0)
    await indexes.settle_pending("g")
    assert await redis.zscore(keys.pending_outboxes_of("g"), "g") is None


async def test_a_worker_dying_before_its_deadline_settles_leaves_the_clock_early_never_late(
    make_bot, telegram, monkeypatch
):
    group, service, now = await started_game(make_bot, telegram)
    redis = group.store.redis
    now[0] = T0 + PROPOSAL / 2
    await service.fire_due(now[0])  # the half-way reminder
    assert await redis.zscore(keys.deadlines_of(group.game_id), group.game_id) == T0 + PROPOSAL

    async def died(*args, **kwargs):
        raise RedisConnectionError("the worker died here")

    # At the leader's deadline the clock draws a team and stores the vote, but the worker dies
    # before it moves the game's deadline on.
    now[0] = T0 + PROPOSAL
    monkeypatch.setattr(group.store.indexes, "settle_deadline", died)
    with pytest.raises(RedisConnectionError):
        await service.fire_due(now[0])
    monkeypatch.undo()
    table = await group.table()
    assert table.game.phase is Phase.VOTING
    wake = await redis.zscore(keys.deadlines_of(group.game_id), group.game_id)
    assert wake <= table.next_wake  # early, never late

    # The clock wakes at the early time, finds nothing due and sets the table's own deadline.
    await service.fire_due(now[0])
    assert (await group.table()).game.phase is Phase.VOTING
    assert await redis.zscore(keys.deadlines_of(group.game_id), group.game_id) == table.next_wake
    # And the vote still times out when its time comes (someone voted: no second idle deadline).
    await group.press(table.players[0].user_id, group.chat_id, "v:", ":a")
    now[0] = table.deadline
    await service.fire_due(now[0])
    assert (await group.table()).game.phase is not Phase.VOTING


async def test_a_group_whose_finished_game_was_never_let_go_can_open_a_new_one(make_bot, telegram, redis):
    application = await make_bot(1)
    group = await started_on(application, telegram)
    store = group.store
    table = await group.play(AlwaysApprove(rng=random.Random(2)))
    assert table.game.is_over
    # As if the worker had died right after the game's last write, before it let the group and
    # the players go and named the game's record the group's.
    await redis.set(keys.chat_game(group.chat_id), group.game_id)
    for user in group.user_ids:
        await redis.sadd(keys.user_games(user), group.game_id)
    await redis.delete(keys.chat_record(group.chat_id))

    assert await store.games_of_user(group.user_ids[1]) == []
    assert not await redis.sismember(keys.user_games(group.user_ids[1]), group.game_id)
    answer = await command_text(group, group.user_ids[0], "/newgame")
    assert "already" not in answer
    current = await redis.get(keys.chat_game(group.chat_id))
    assert current not in (None, group.game_id)
    assert (await store.load(current)).stage.value == "lobby"
    assert '"id"' in (await store.last_record(group.chat_id) or "")


async def test_a_game_ended_is_let_go_from_the_lists_of_those_who_left_its_lobby(make_bot, telegram, redis):
    """Someone joined a lobby and left it (or left it twice, or joined again and left again). Once the
    game ends, their list of games no longer names it, though they never write to the bot again: it
    stayed there, without an expiry, for good."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=7)
    await group.open_lobby_and_join()
    stays, goes = group.user_ids[5], group.user_ids[6]
    for user in (stays, goes, stays):
        await group.send(telegram.command(user, group.chat_id, "/leave"))
    await group.send(telegram.command(goes, group.chat_id, "/join"))
    await group.send(telegram.command(goes, group.chat_id, "/leave"))
    assert await redis.sismember(keys.user_games(goes), group.game_id)  # until the game ends (a rejoin may race)
    await group.start()
    table = await group.play(AlwaysApprove(rng=random.Random(2)))
    assert table.game.is_over and len(table.people) == 5
    for user in group.user_ids:
        assert not await redis.sismember(keys.user_games(user), group.game_id), user
    assert await redis.exists(keys.user_games(stays), keys.user_games(goes)) == 0


async def test_a_new_game_asked_for_in_a_busy_group_leaves_no_lookups_behind(make_bot, telegram, redis):
    """/newgame sent while the group has a game (and Play again pressed then) writes no game: nor does it
    list one in the sender's games (a set without an expiry, which kept an id per attempt for good
    unless its owner wrote to the bot again) or in the clock's deadlines."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=6)
    await group.open_lobby_and_join(joining=group.user_ids[:5])
    outsider = group.user_ids[5]
    for user in (outsider, outsider, group.user_ids[1]):
        await group.send(telegram.command(user, group.chat_id, "/newgame"))
    assert await redis.get(keys.chat_game(group.chat_id)) == group.game_id
    assert not await redis.exists(keys.user_games(outsider))
    assert await redis.smembers(keys.user_games(group.user_ids[1])) == {group.game_id}
    assert await redis.zrange(keys.deadlines_of(group.game_id), 0, -1) == [group.game_id]
    assert await redis.hkeys(keys.deadline_revisions_of(group.game_id)) == [group.game_id]
    assert await group.store.due(float("inf")) == [group.game_id]


async def test_a_pointer_to_a_game_never_written_is_let_go(make_bot, telegram, redis, short_timings):
    """A worker claimed the group for a new game and died before writing it."""
    application = await make_bot(1)
    group = await started_on(application, telegram, chat_id=-200)
    chat = -300
    telegram.add_group(chat, "Quiet group")
    await redis.set(keys.chat_game(chat), "0000000000")
    started = asyncio.get_running_loop().time()
    assert await group.store.game_of_chat(chat) is None
    assert asyncio.get_running_loop().time() - started >= short_timings.creation  # a creation on its way had time
    assert await redis.get(keys.chat_game(chat)) is None


async def test_keys_of_an_earlier_version_are_renamed_and_the_game_goes_on(make_bot, telegram, redis):
    application = await make_bot(1)
    group = await started_on(application, telegram)
    game_id = group.game_id
    # Put the game's keys back under the names an earlier version used.
    for key in [key async for key in redis.scan_iter(match=keys.game(game_id) + "*")]:
        await redis.rename(key, key.replace("{" + game_id + "}", game_id))
    deadline = await redis.zscore(keys.deadlines_of(game_id), game_id)
    await redis.delete(
        keys.deadlines_of(game_id), keys.deadline_revisions_of(game_id), keys.pending_outboxes_of(game_id)
    )
    await redis.zadd(keys.LEGACY_DEADLINES, {game_id: deadline})
    await redis.sadd(keys.LEGACY_PENDING_OUTBOXES, game_id)
    assert await redis.get(keys.game(game_id)) is None

    await redis.delete(keys.MIGRATED_TO_TAGS)  # the bot's start-up ran it on the empty database
    assert await migrate.legacy_keys(redis) >= 4
    assert await migrate.legacy_keys(redis) == 0  # once
    assert await redis.zscore(keys.deadlines_of(game_id), game_id) == deadline
    assert await redis.zscore(keys.pending_outboxes_of(game_id), game_id) is not None
    assert not await redis.exists(keys.LEGACY_DEADLINES, keys.LEGACY_PENDING_OUTBOXES)
    group.store._latest.clear()
    table = await group.play(AlwaysApprove(rng=random.Random(3)))
    assert table.game.is_over


async def test_the_clock_of_a_version_before_its_shards_is_spread_over_them_once(make_bot, telegram, redis):
    """A version before the shards kept every game's deadline, revision and pending mark in one slot
    (`rb:{clock}:…`): moved into each game's shard at start-up, and the games go on by their clocks."""
    application = await make_bot(1)
    group = await started_on(application, telegram)
    game_id = group.game_id
    deadline = await redis.zscore(keys.deadlines_of(game_id), game_id)
    revision = await redis.hget(keys.deadline_revisions_of(game_id), game_id)
    await redis.delete(
        keys.deadlines_of(game_id), keys.deadline_revisions_of(game_id), keys.pending_outboxes_of(game_id)
    )
    await redis.zadd(keys.UNSHARDED_DEADLINES, {game_id: deadline, "other": 5.0})
    await redis.hset(keys.UNSHARDED_DEADLINE_REVISIONS, mapping={game_id: revision, "other": 3})
    await redis.zadd(keys.UNSHARDED_PENDING_OUTBOXES, {game_id: 1234})
    await redis.delete(keys.MIGRATED_TO_CLOCK_SHARDS)  # the bot's start-up ran it on the empty database

    assert await migrate.clock_shards(redis) == 3
    assert await migrate.clock_shards(redis) == 0  # once
    assert await redis.zscore(keys.deadlines_of(game_id), game_id) == deadline
    assert await redis.hget(keys.deadline_revisions_of(game_id), game_id) == revision
    assert await redis.zscore(keys.pending_outboxes_of(game_id), game_id) == 1234
    assert await redis.zscore(keys.deadlines_of("other"), "other") == 5.0
    assert not await redis.exists(
        keys.UNSHARDED_DEADLINES, keys.UNSHARDED_DEADLINE_REVISIONS, keys.UNSHARDED_PENDING_OUTBOXES
    )
    assert set(await group.store.due(deadline)) == {game_id, "other"}
