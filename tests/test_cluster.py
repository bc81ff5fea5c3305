"""The bot's Redis client on a Redis Cluster of three masters: keys on every master, scripts and
transactions within one hash tag, and masters killed and started again from their append-only files.

The module starts its own cluster (tests.servers.RedisClusterServers), once; every test uses keys of
its own, so nothing is ever flushed (a cluster has no database to flush for one test alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from redis import Redis as SyncRedis
from redis.exceptions import RedisClusterException, RedisError

from engine import Phase
from tests.bot_helpers import AlwaysApprove, Bots, button_data, errors, propose, started_on, team_size
from tests.servers import RedisClusterServers, free_port
from tgbot import keys, redis_client, redis_cluster
from tgbot.indexes import ClockShardsUnreachable
from tgbot.redis_client import connect
from tgbot.redis_cluster import PatientRedisCluster
from tgbot.shared_clock import SAMPLES, SharedClock
from tgbot.table import Table

UNAVAILABLE = "temporarily unavailable"

# Sets the first key and counts the calls in the second, in one step: both keys must share a slot.
SET_AND_COUNT = """
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('INCR', KEYS[2])
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[RedisClusterServers]:
    servers = RedisClusterServers(tmp_path_factory.mktemp("cluster"))
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()


@pytest.fixture
async def client(cluster: RedisClusterServers) -> AsyncIterator[PatientRedisCluster]:
    redis = connect(cluster.url)
    assert isinstance(redis, PatientRedisCluster)
    yield redis
    await redis.aclose()


def tag_on_master(cluster: RedisClusterServers, index: int, name: str) -> str:
    """A hash tag `{name-n}` whose keys live on master `index`."""
    return next(f"{{{name}-{n}}}" for n in range(10_000) if cluster.master_of(f"{{{name}-{n}}}") == index)


def stored_on_master(cluster: RedisClusterServers, index: int, key: str) -> str | None:
    """The key's value as that master itself holds it (another master would answer MOVED)."""
    with SyncRedis(port=cluster.nodes[index].port, decode_responses=True) as node:
        return node.get(key)


# ---------------------------------------------------------------- the URL


def test_a_cluster_url_gives_a_cluster_client_seeded_with_every_node():
    redis = connect("redis+cluster://10.0.0.1:7000,10.0.0.2:7001")
    assert isinstance(redis, PatientRedisCluster)
    assert [(node.host, node.port) for node in redis.startup_nodes] == [("10.0.0.1", 7000), ("10.0.0.2", 7001)]
    assert redis.get_encoder().decode_responses


async def test_an_unreachable_cluster_is_a_redis_error_after_a_while(monkeypatch):
    """The bot answers "temporarily unavailable" to a RedisError; redis-py's own "cannot be connected"
    (a RedisClusterException) is not one."""
    monkeypatch.setattr(redis_cluster, "OUTAGE_PATIENCE", 0.3)
    redis = connect(f"redis+cluster://127.0.0.1:{free_port()}")
    started = time.monotonic()
    with pytest.raises(RedisError, match="cannot be connected"):
        await redis.get("anything")
    assert 0.3 <= time.monotonic() - started < 5
    await redis.aclose()


# ---------------------------------------------------------------- keys, scripts, transactions


async def test_keys_on_different_masters_are_written_and_read_back(cluster, client):
    written = {}
    for index in range(len(cluster.nodes)):
        key = f"test:spread:{tag_on_master(cluster, index, 'spread')}"
        assert await client.set(key, f"on master {index}")
        written[key] = index
    for key, index in written.items():
        assert await client.get(key) == f"on master {index}"
        assert stored_on_master(cluster, index, key) == f"on master {index}"
    # A SCAN walks every master.
    assert {key async for key in client.scan_iter(match="test:spread:*")} == set(written)


async def test_a_registered_script_runs_over_two_keys_of_one_hash_tag(client):
    script = client.register_script(SET_AND_COUNT)
    keys_of_one_game = ["test:game:{42}", "test:game:{42}:calls"]
    assert await script(keys=keys_of_one_game, args=["state 1"]) == 1
    assert await script(keys=keys_of_one_game, args=["state 2"]) == 2
    assert await client.get("test:game:{42}") == "state 2"
    # Without a shared tag the keys may lie on two masters: refused before anything is sent.
    with pytest.raises(RedisClusterException, match="same key slot"):
        await script(keys=["test:game:42", "test:game:42:calls"], args=["state 3"])


async def test_a_watched_transaction_over_one_hash_tag_commits(client):
    counter, log = "test:tx:{7}:counter", "test:tx:{7}:log"
    await client.set(counter, 41)

    async def increment(pipe):
        value = int(await pipe.get(counter))
        pipe.multi()
        pipe.set(counter, value + 1)
        pipe.rpush(log, value + 1)

    await client.transaction(increment, counter)
    assert await client.get(counter) == "42"
    assert await client.lrange(log, 0, -1) == ["42"]


# ---------------------------------------------------------------- the shared clock


def time_calls(cluster: RedisClusterServers, index: int) -> int:
    """How many TIME commands master `index` has run (scripts' included)."""
    with SyncRedis(port=cluster.nodes[index].port, decode_responses=True) as node:
        return int(node.info("commandstats").get("cmdstat_time", {}).get("calls", 0))


async def test_the_shared_clock_is_the_time_of_the_master_that_keeps_the_first_shard(cluster, client):
    """Every worker reads one clock: on a cluster, that of the master serving the first shard's slot
    (asking whichever master a connection happens to reach would give workers different clocks)."""
    keeper = cluster.master_of(keys.deadlines(0))
    before = [time_calls(cluster, index) for index in range(len(cluster.nodes))]
    clock = SharedClock(client)
    await clock.sync()
    after = [time_calls(cluster, index) for index in range(len(cluster.nodes))]
    assert [a - b for a, b in zip(after, before, strict=True)] == [
        SAMPLES if index == keeper else 0 for index in range(len(cluster.nodes))
    ]
    with SyncRedis(port=cluster.nodes[keeper].port, decode_responses=True) as node:
        seconds, micros = node.time()
    assert abs(clock() - (seconds + micros / 1e6)) < 0.5


# ---------------------------------------------------------------- a master restarts


async def test_a_key_is_read_back_after_its_master_restarts(cluster, client):
    key = "test:restart:{survivor}"
    assert await client.set(key, "kept in the append-only file")
    owner = cluster.master_of(key)

    cluster.restart_master(owner)

    # The same client, whose pooled connection to that master died with it.
    assert await client.get(key) == "kept in the append-only file"
    for index in range(len(cluster.nodes)):
        other = f"test:restart:after:{tag_on_master(cluster, index, 'after')}"
        assert await client.set(other, index)
        assert await client.get(other) == str(index)


async def test_commands_sent_while_a_master_is_down_wait_for_it(cluster, client):
    owner = 1
    tag = tag_on_master(cluster, owner, "down")
    script = client.register_script(SET_AND_COUNT)
    assert await script(keys=[f"test:down:{tag}", f"test:down:{tag}:calls"], args=["before"]) == 1

    async def writes() -> None:
        for n in range(5):
            assert await client.set(f"test:down:{tag}:{n}", n)
        # The restarted master has forgotten the script: loaded again, not reported.
        assert await script(keys=[f"test:down:{tag}", f"test:down:{tag}:calls"], args=["after"]) == 2

    cluster.kill_master(owner)
    writing = asyncio.create_task(writes())
    await asyncio.sleep(0.5)
    assert not writing.done()  # waiting for the master, not failed
    await asyncio.to_thread(cluster.start_master, owner)
    await asyncio.wait_for(writing, timeout=10)
    assert [await client.get(f"test:down:{tag}:{n}") for n in range(5)] == [str(n) for n in range(5)]
    assert stored_on_master(cluster, owner, f"test:down:{tag}") == "after"


# ---------------------------------------------------------------- a whole game


async def test_a_whole_game_survives_a_master_restart_mid_vote(cluster, telegram, caplog):
    caplog.set_level(logging.INFO)
    bots = Bots(telegram)
    try:
        application = await bots.start(cluster.url, seed=5)
        group = await started_on(application, telegram, players=5)
        policy = AlwaysApprove(rng=random.Random(5))
        while (await group.table()).game.phase is not Phase.VOTING:
            assert await group.step(policy)
        table = await group.table()
        ballot = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
        voters = [player.user_id for player in table.players]
        for user_id in voters[:2]:
            await group.send(telegram.press(user_id, group.chat_id, ballot.message_id, button_data(ballot, ":a")))

        # The game's master dies; a vote arrives while it is down and waits for it to come back.
        owner = cluster.master_of(keys.game(group.game_id))
        cluster.kill_master(owner)
        vote = telegram.press(voters[2], group.chat_id, ballot.message_id, button_data(ballot, ":a"))
        voting = asyncio.create_task(group.send(vote))
        await asyncio.sleep(0.5)
        await asyncio.to_thread(cluster.start_master, owner)
        await asyncio.wait_for(voting, timeout=15)
        assert UNAVAILABLE not in (telegram.callback_answers[vote["callback_query"]["id"]]["text"] or "")
        assert (await group.table()).game.pending_votes[2] is True

        table = await group.play(policy)
        assert table.game.is_over
        assert "🏁" in group.transcript(group.chat_id)[-1]
        assert await group.store.redis.llen(keys.outbox(group.game_id)) == 0
        for user_id in voters:  # everyone got their role, privately
            assert any(m.from_bot for m in telegram.messages(user_id)), user_id
        # The group's memory (keys of the group's own slot) counted the game once, and a rebuild,
        # which scans every master, finds it.
        memory = group.store.memory
        assert [g.game_id for g in await memory.recent_games(group.chat_id, 10)] == [group.game_id]
        assert (await memory.stats_in_group(group.chat_id, voters[0])).overall.games == 1
        assert await memory.rebuild() == (1, 1)
        assert errors(caplog) == []
    finally:
        await bots.close()


async def test_a_command_to_a_master_that_stops_answering_fails_instead_of_hanging(tmp_path, monkeypatch):
    """A master that stops answering without closing its connections (frozen, or cut off by the
    network) held every command to it for good: the press that sent it never got its answer, and
    nothing was retried. Its connections now give up after `SOCKET_TIMEOUT`, and the command fails
    once its retries are spent (here made short; by default about two minutes on a cluster)."""
    monkeypatch.setattr(redis_client, "SOCKET_TIMEOUT", 0.2)
    monkeypatch.setattr(redis_cluster, "CLUSTER_RETRIES", 1)
    monkeypatch.setattr(redis_cluster, "OUTAGE_PATIENCE", 0.5)
    servers = RedisClusterServers(tmp_path)
    servers.start()
    redis = connect(servers.url)
    key = tag_on_master(servers, 0, "frozen") + "key"
    frozen = servers.nodes[0].process.pid
    try:
        await redis.set(key, "v")
        os.kill(frozen, signal.SIGSTOP)
        with pytest.raises(RedisError):
            await asyncio.wait_for(redis.get(key), 60)
    finally:
        os.kill(frozen, signal.SIGCONT)
        await redis.aclose()
        servers.stop()


def test_a_socket_timeout_the_cluster_url_names_wins():
    default = connect("redis+cluster://127.0.0.1:7000,127.0.0.1:7001")
    assert default.connection_kwargs["socket_timeout"] == redis_client.SOCKET_TIMEOUT
    named = connect("redis+cluster://127.0.0.1:7000,127.0.0.1:7001?socket_timeout=2")
    assert named.connection_kwargs["socket_timeout"] == 2.0


# ---------------------------------------------------------------- a master serving shards of the clock is down


def game_id_placed(cluster: RedisClusterServers, dead: int, *, clock_on_dead: bool) -> str:
    """A game id whose own keys live on a master other than `dead`, and whose clock shard lives on
    `dead` or not, as asked."""
    rng = random.Random(clock_on_dead)
    while True:
        game_id = f"{rng.getrandbits(40):010x}"
        if (
            cluster.master_of(keys.game(game_id)) != dead
            and (cluster.master_of(keys.deadlines_of(game_id)) == dead) is clock_on_dead
        ):
            return game_id


def chat_on_live_masters(cluster: RedisClusterServers, dead: int, start: int) -> int:
    """A group id none of whose own keys (its game pointer, settings, record) lives on `dead`."""
    chat = start
    while any(
        cluster.master_of(key) == dead
        for key in (keys.chat_game(chat), keys.chat_settings(chat), keys.chat_record(chat))
    ):
        chat -= 1
    return chat


async def test_a_master_down_with_shards_of_the_clock_holds_up_no_other_game(cluster, telegram, monkeypatch):
    """A 17 s outage of the master that kept the clock's single index stalled every game: every move
    wrote its deadline there first, and every tick read it. Now the clock is cut into shards over the
    masters, a move whose shard does not answer goes on without it (its entry written again once the
    shard answers), and the tick fires what the other shards hold."""
    dead = cluster.master_of(keys.deadlines(0))  # the master whose time the shared clock reads, too
    ids = [
        game_id_placed(cluster, dead, clock_on_dead=True),
        game_id_placed(cluster, dead, clock_on_dead=False),
    ]
    monkeypatch.setattr(Table, "new_id", staticmethod(lambda: ids.pop(0)))
    bots = Bots(telegram)
    nodes = [SyncRedis(port=node.port, decode_responses=True) for node in cluster.nodes]
    down = False
    try:
        application = await bots.start(cluster.url, seed=3)
        now = [1_000_000.0]
        service = application.bot_data["service"]
        service.clock = lambda: now[0]
        stalled = await started_on(application, telegram, chat_id=chat_on_live_masters(cluster, dead, -301))
        ticking = await started_on(application, telegram, chat_id=chat_on_live_masters(cluster, dead, -401))
        assert cluster.master_of(keys.deadlines_of(stalled.game_id)) == dead
        assert cluster.master_of(keys.deadlines_of(ticking.game_id)) != dead
        for node in nodes:  # the other masters go on serving their slots while one is down
            node.config_set("cluster-require-full-coverage", "no")
        cluster.kill_master(dead)
        down = True

        # A move of the game whose clock shard is down: answered at once, not after the outage.
        began = time.monotonic()
        table = await stalled.table()
        await propose(stalled, range(team_size(table)))
        answered_in = time.monotonic() - began
        assert answered_in < 8, answered_in
        assert UNAVAILABLE not in "".join(a["text"] or "" for a in telegram.callback_answers.values())

        # The other game's deadline fires; the tick then reports the silent shard.
        now[0] += (await ticking.table()).settings.proposal_seconds + 1
        with pytest.raises(ClockShardsUnreachable):
            await service.fire_due()
        assert (await ticking.table()).game.phase is Phase.VOTING  # its leader's team drawn for them

        await asyncio.to_thread(cluster.start_master, dead)
        down = False
        # The entry the move could not write is written from the stored table once its shard answers.
        assert await stalled.store.settle_owed() == 1
        voting = await stalled.table()
        assert voting.game.phase is Phase.VOTING
        assert await stalled.store.redis.zscore(keys.deadlines_of(stalled.game_id), stalled.game_id) == voting.next_wake
        await service.fire_due()  # every shard answers again
    finally:
        if down:
            await asyncio.to_thread(cluster.start_master, dead)
        for node in nodes:
            with contextlib.suppress(RedisError):
                node.config_set("cluster-require-full-coverage", "yes")
            node.close()
        await bots.close()
