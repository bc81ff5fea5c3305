"""Two real worker processes behind a webhook, sharing one Redis and one (fake) Telegram.

Each worker is `python -m tgbot` in webhook mode, as it runs in production: its own
event loop, its own Redis connections, the Redis rate limiter, the deadline clock. Telegram
is a FakeTelegram served over HTTP in this process (tgbot.offline.fake_server), so the test
both drives the world (users press the buttons the bot really sent) and sees everything the
bot said. Updates go to the workers as Telegram delivers them: POSTs carrying the secret token
(tgbot.offline.workers). benchmarks/webhook_burst.py times the same burst of votes with fifty games.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import httpx
import pytest
import pytest_asyncio
from redis.asyncio import Redis

from tgbot import keys
from tgbot.offline.fake_server import SECRET_HEADER, FakeTelegramServer, post_update
from tgbot.offline.fake_telegram import FakeTelegram
from tgbot.offline.workers import (
    PLAYERS,
    REVEAL,
    SECRET,
    TOKEN,
    WEBHOOK_URL,
    Cluster,
    Group,
    Worker,
    answers_of,
    bot_texts,
    card_prompts,
    check_vote_burst,
    group_message_calls,
    rate_limited_calls,
    spawn_worker,
    stop_workers,
    vote_burst,
    wait_until_healthy,
    worker_errors,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Games whose votes come at the same moment: one of each count of approvals (0 to 5).
GAMES = PLAYERS + 1


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(redis_url, tmp_path_factory):
    redis = Redis.from_url(redis_url, decode_responses=True)
    await redis.flushdb()  # includes the registration flag: this run's workers must register anew
    telegram = FakeTelegram(token=TOKEN)
    server = FakeTelegramServer(telegram)
    await server.start()
    log_dir = tmp_path_factory.mktemp("workers")
    # Idle connections are dropped well before uvicorn's 5 s keep-alive timeout: a connection the server
    # is closing just as a request goes out on it would fail that request (httpx.ReadError) on a busy machine.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=50, keepalive_expiry=1.0)
    http = httpx.AsyncClient(timeout=120.0, limits=limits)
    workers: list[Worker] = []
    try:
        for name in ("worker-a", "worker-b"):
            workers.append(spawn_worker(name, server.base_url, redis_url, log_dir))
        await wait_until_healthy(workers, http)
        yield Cluster(telegram, server, workers, redis, http)
        for worker in workers:
            assert worker.process.poll() is None, f"{worker.name} died:\n{worker.log()}"
            errors = worker_errors(worker)
            assert not errors, f"{worker.name} logged errors:\n{worker.log()[-5000:]}"
    finally:
        stop_workers(workers)
        assert all(worker.process.poll() is not None for worker in workers)
        await http.aclose()
        await server.stop()
        await redis.flushdb()
        await redis.aclose()


# ---------------------------------------------------------------- the tests


async def test_both_workers_serve_and_exactly_one_registered_the_webhook(cluster: Cluster):
    for worker in cluster.workers:
        response = await cluster.http.get(worker.health_url)
        assert response.status_code == 200
        assert response.json() == {"status": "ok", "redis": "ok"}

    registrations = [params for method, params in cluster.telegram.calls if method == "setWebhook"]
    assert registrations == [
        {"url": WEBHOOK_URL, "secret_token": SECRET, "allowed_updates": ["message", "callback_query", "my_chat_member"]}
    ]
    assert sum("webhook registered" in worker.log() for worker in cluster.workers) == 1
    # Both workers came up fully: each asked who it is and set the command menu.
    methods = Counter(method for method, _ in cluster.telegram.calls)
    assert methods["getMe"] == 2
    assert set(cluster.telegram.commands) >= {None, "en"}


async def test_updates_without_the_secret_token_are_refused_and_change_nothing(cluster: Cluster):
    group = Group(cluster, GAMES + 1)
    update = cluster.telegram.command(group.user_ids[0], group.chat_id, "/newgame")
    calls_before = len(cluster.telegram.calls)
    refusals = [None, "", "wrong", SECRET[:-1], SECRET + "x", SECRET.lower()]
    for worker in cluster.workers:
        for secret in refusals:
            response = await post_update(worker.url, secret, update, client=cluster.http)
            assert response.status_code == 403, (worker.name, secret)
    assert cluster.telegram.calls[calls_before:] == []
    assert await cluster.store.game_of_chat(group.chat_id) is None
    assert not await cluster.redis.exists(keys.update_claim(update["update_id"]))  # not claimed, not spent

    # A body that is not an update, with the right token: refused as such, nothing claimed.
    for body in (b"not json", b"{}"):
        response = await cluster.http.post(cluster.workers[0].url, content=body, headers={SECRET_HEADER: SECRET})
        assert response.status_code == 400, body
    assert await cluster.redis.keys(f"{keys.PREFIX}update:*") == []

    # The very same update with the right token is then processed normally.
    await cluster.deliver(update, 1)
    game_id = await cluster.store.game_of_chat(group.chat_id)
    assert game_id is not None
    await cluster.settled(game_id)
    assert any("url" in b for m in cluster.telegram.messages(group.chat_id) for b in m.buttons())
    for worker in cluster.workers:
        response = await cluster.http.get(worker.health_url)
        assert (response.status_code, response.json()) == (200, {"status": "ok", "redis": "ok"})


async def test_games_vote_at_the_same_moment_through_two_workers(cluster: Cluster):
    """Every player of six games votes at the same moment, through either worker: each vote counts once,
    each press is answered once, and each game's messages go out once, within the bot's flood limits."""
    burst = await vote_burst(cluster, GAMES)
    outcomes = await check_vote_burst(cluster, burst)
    assert outcomes[True] and outcomes[False], outcomes

    # Both workers really took part.
    assert all("stored (" in worker.log() for worker in cluster.workers)

    # The two workers together kept to the bot's budget of 30 calls a second (after a first
    # burst of 30): a lower bound on the time taken, not a speed target.
    limited = rate_limited_calls(cluster)
    span = limited[-1] - limited[0]
    assert span >= (len(limited) - 30) / 30 - 0.5, f"{len(limited)} calls in {span:.1f} s"
    print(
        f"\n{GAMES} games set up in {burst.setup_done - burst.started:.1f} s, "
        f"{len(burst.updates)} simultaneous votes handled in {burst.burst_done - burst.setup_done:.1f} s; "
        f"{len(limited)} rate-limited API calls in {span:.1f} s ({len(limited) / span:.1f}/s)"
    )


async def test_a_duplicate_delivery_is_processed_once(cluster: Cluster):
    telegram = cluster.telegram
    group = Group(cluster, GAMES + 2)
    await group.open_join_start()
    await group.propose(random.Random(7))
    game_id = group.game_id
    before = (await cluster.table(game_id)).game

    # One vote delivered to both workers at the same moment.
    update = group.vote_update(2, True)
    first = await asyncio.gather(*(post_update(w.url, SECRET, update, client=cluster.http) for w in cluster.workers))
    codes = sorted(r.status_code for r in first)
    print(f"\nthe same update through both workers at once: {codes}")
    # The loser waits for the winner to finish and then finds it done: no 503 for Telegram to retry.
    assert codes == [200, 200], codes
    # Telegram's redeliveries, to either worker, once it is done: accepted, not processed again.
    for worker in cluster.workers:
        response = await post_update(worker.url, SECRET, update, client=cluster.http)
        assert response.status_code == 200
    await cluster.settled(game_id)
    game = (await cluster.table(game_id)).game
    assert game.version == before.version + 1
    assert game.pending_votes == (None, None, True, None, None)
    answers = answers_of(telegram, update)
    assert len(answers) == 1 and (answers[0] or "").startswith("You voted 👍 Approve"), answers

    # The other four votes, each delivered twice at once (to both workers): eight POSTs together. They
    # reject the team, whose votes the group then sees at once.
    rest = [group.vote_update(seat, seat == 0) for seat in (0, 1, 3, 4)]
    posts = [post_update(w.url, SECRET, u, client=cluster.http) for u in rest for w in cluster.workers]
    calls_before = len(telegram.calls)
    responses = await asyncio.gather(*posts)
    assert [r.status_code for r in responses] == [200] * len(posts)
    for u in rest:  # a later redelivery, to either worker: done, not processed again
        for worker in cluster.workers:
            assert (await post_update(worker.url, SECRET, u, client=cluster.http)).status_code == 200
    await cluster.settled(game_id)
    game = (await cluster.table(game_id)).game
    assert game.version == before.version + PLAYERS
    assert game.rounds[0].proposals[0].votes == (True, False, True, False, False)
    assert all(len(answers_of(telegram, u)) == 1 for u in rest)
    assert group_message_calls(telegram, group.chat_id, calls_before) == ["editMessageText"]
    reveals = [text for text in bot_texts(telegram, group.chat_id, calls_before) if REVEAL.search(text)]
    assert len(reveals) == 1 and "Rejected 2–3" in reveals[0], reveals
    # The next leader's keyboard, once; no card prompt to anybody.
    leader_prompts = [
        params
        for method, params in telegram.calls[calls_before:]
        if method == "sendMessage" and "you are the leader" in str(params["text"])
    ]
    assert [int(p["chat_id"]) for p in leader_prompts] == [group.user_ids[game.leader]], leader_prompts
    assert all(card_prompts(telegram, user_id) == 0 for user_id in group.user_ids)
