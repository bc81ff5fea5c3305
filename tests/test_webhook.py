"""Webhook mode in process: the secret token, the size of a body, /healthz, each update once (also
when the worker that had it died), the answer before the messages, one registration."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import httpx
import pytest
from redis.asyncio import Redis
from telegram.error import TelegramError

from tests.bot_helpers import Bots, button_data, outbox_length, propose, started_on
from tests.servers import CutOffProxy, RedisServer
from tgbot import keys, webhook
from tgbot.config import ConfigError, Webhook, load_settings
from tgbot.offline.simulation import SimulatedGroup
from tgbot.redis_client import connect
from tgbot.table import Table, TableFormatError
from tgbot.webhook import MAX_BODY_BYTES, REGISTRAR_KEY, SECRET_HEADER, create_web_app, register_once

SECRET = "s3cret-token-for-tests-0123"
WEBHOOK = Webhook(url="https://bot.example.org/telegram", listen="127.0.0.1", port=8080, secret=SECRET)
TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ012345678"


def web_client(application, redis) -> httpx.AsyncClient:
    app = create_web_app(application, WEBHOOK, redis)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://worker")


@pytest.fixture
async def web(make_bot, telegram, redis):
    application = await make_bot(1)
    client = web_client(application, redis)
    yield application, client
    await application.bot_data["service"].finish_deliveries()
    await client.aclose()


async def post(client, update, secret=SECRET):
    headers = {SECRET_HEADER: secret} if secret is not None else {}
    return await client.post("/telegram", json=update, headers=headers)


def toggle_update(telegram, group, leader: int, seat: int) -> dict:
    """The leader ticking (or unticking) `seat` on their private keyboard."""
    keyboard = group.latest_with_button(leader, f"t:{group.game_id}:")
    return telegram.press(leader, leader, keyboard.message_id, button_data(keyboard, f":{seat}"))


async def leader_keyboard(application, telegram) -> tuple[SimulatedGroup, int]:
    """A started game, and its leader (who has their private keyboard, nothing ticked yet)."""
    group = await started_on(application, telegram)
    table = await group.table()
    assert table.draft_team == ()
    return group, table.players[table.game.leader].user_id


async def test_a_request_without_the_secret_token_is_refused_and_logged(web, telegram, caplog):
    application, client = web
    group = SimulatedGroup(telegram, application, players=5)
    for secret in (None, "wrong-token-wrong-token-00"):
        response = await post(client, telegram.command(group.user_ids[0], group.chat_id, "/newgame"), secret)
        assert response.status_code == 403
    assert await group.store.game_of_chat(group.chat_id) is None
    assert "refused a request without the right secret token" in caplog.text
    response = await post(client, telegram.command(group.user_ids[0], group.chat_id, "/newgame"))
    assert response.status_code == 200 and await group.store.game_of_chat(group.chat_id) is not None


async def test_a_body_that_is_not_an_update_is_refused(web):
    _, client = web
    response = await client.post("/telegram", content=b"not json", headers={SECRET_HEADER: SECRET})
    assert response.status_code == 400


async def test_a_body_nested_too_deep_to_parse_is_refused_not_an_error(web, telegram):
    """JSON nested deeper than the parser goes (well under the size limit) is not an update: 400, like
    any other body that is not one, not a 500 with a traceback that Telegram would send again."""
    application, client = web
    nested = b'{"update_id": 41, "message": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    response = await client.post("/telegram", content=nested, headers={SECRET_HEADER: SECRET})
    assert response.status_code == 400
    # The worker goes on serving.
    group = SimulatedGroup(telegram, application, players=5)
    response = await post(client, telegram.command(group.user_ids[0], group.chat_id, "/newgame"))
    assert response.status_code == 200 and await group.store.game_of_chat(group.chat_id) is not None


async def test_an_oversized_body_is_refused_without_being_read_whole(web):
    """A body larger than any update gets 413: one that says so at once, and one sent in chunks
    without a Content-Length is read no further than the limit."""
    _, client = web
    size = 32 * 1024 * 1024
    chunk = b"x" * 65536
    pulled = 0

    async def body():
        nonlocal pulled
        while pulled < size:
            pulled += len(chunk)
            yield chunk

    response = await client.post(
        "/telegram", content=body(), headers={SECRET_HEADER: SECRET, "Content-Length": str(size)}
    )
    assert response.status_code == 413 and pulled <= len(chunk)

    pulled = 0
    response = await client.post("/telegram", content=body(), headers={SECRET_HEADER: SECRET})
    assert response.status_code == 413
    assert pulled <= MAX_BODY_BYTES + len(chunk), f"read {pulled} bytes of a body that had no end in sight"

    # Just over the limit, all at once: refused too. Without the secret, nothing is read at all.
    response = await client.post(
        "/telegram", content=b"{" + b" " * MAX_BODY_BYTES + b"}", headers={SECRET_HEADER: SECRET}
    )
    assert response.status_code == 413
    pulled = 0
    response = await client.post("/telegram", content=body(), headers={"Content-Length": str(size)})
    assert response.status_code == 403 and pulled <= len(chunk)


async def test_an_update_of_an_ordinary_size_is_accepted(web, telegram):
    """The limit is far above any real update: a message of Telegram's longest text goes through."""
    application, client = web
    group = SimulatedGroup(telegram, application, players=5)
    update = telegram.command(group.user_ids[0], group.chat_id, "/help")
    update["message"]["text"] = "/help " + "é" * 4090
    response = await post(client, update)
    assert response.status_code == 200


async def test_healthz_reports_redis(web, make_bot, telegram):
    _, client = web
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok", "redis": "ok"}
    unreachable = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    application = await make_bot(2)
    down = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_web_app(application, WEBHOOK, unreachable)), base_url="http://w"
    )
    response = await down.get("/healthz")
    assert response.status_code == 503 and response.json()["redis"] == "unreachable"
    await down.aclose()
    await unreachable.aclose()


@pytest.fixture
async def cut_off(tmp_path):
    """A Redis of the test's own behind a network the test can cut (`CutOffProxy`)."""
    server = RedisServer(tmp_path, appendonly=False)
    server.start()
    proxy = await CutOffProxy(server.port).start()
    yield server, proxy
    proxy.restore()  # so that whatever still waits on it ends
    await proxy.close()
    server.stop()


@pytest.mark.parametrize("fault", ["cut off", "refused", "frozen"])
async def test_healthz_answers_503_at_once_when_redis_does_not_answer(web, cut_off, fault):
    """The load balancer routes by /healthz, so it must tell a worker that cannot reach Redis at once: within
    half a second (it took 2 s), whether the network drops Redis's packets (nothing is refused: every
    command waits out its timeouts), Redis refuses connections (redis-py retries those for seconds), or
    Redis is frozen (it accepts connections and answers nothing)."""
    application, _ = web
    server, proxy = cut_off
    redis = connect(proxy.url)
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_web_app(application, WEBHOOK, redis)), base_url="http://w"
    )
    try:
        assert (await client.get("/healthz")).status_code == 200
        if fault == "cut off":
            proxy.cut()
        elif fault == "refused":
            server.stop()
        else:
            os.kill(server.process.pid, signal.SIGSTOP)
        for _ in range(2):  # on the connection it had, and on a new one
            started = time.monotonic()
            response = await asyncio.wait_for(client.get("/healthz"), 10)
            took = time.monotonic() - started
            assert response.status_code == 503 and response.json()["redis"] == "unreachable"
            assert took < 0.5, f"/healthz took {took:.2f} s"
    finally:
        if fault == "frozen":
            os.kill(server.process.pid, signal.SIGCONT)
        await client.aclose()
        await redis.aclose()


UNAVAILABLE = "The game is temporarily unavailable. Try again in a moment."
# Telegram refuses to answer a press some 15 s after it; the bot answers within its Redis time
# (`redis_budget.UPDATE_SECONDS`, 4 s), and this leaves room for a loaded machine.
ANSWERED_WITHIN = 8.0


async def cut_off_worker(telegram, proxy) -> tuple:
    """A worker on the cut-off fixture's Redis, and its web app, with a game started whose leader has their
    private keyboard."""
    bots = Bots(telegram)
    application = await bots.start(proxy.url, seed=1, rate_limited=True)  # the limiter uses Redis too
    client = web_client(application, application.bot_data["store"].redis)
    group, leader = await leader_keyboard(application, telegram)
    return bots, client, group, leader


async def test_a_worker_cut_off_from_redis_answers_a_press_while_telegram_still_takes_the_answer(cut_off, telegram):
    """A worker cut off from Redis by the network (its packets dropped) held a press 42 s before it said the
    game was unavailable, long after Telegram had stopped taking an answer to it (some 15 s), and answered
    Telegram's request as late: each Redis command of the update waited out its socket timeout four times
    over (redis-py retried timeouts), one after another. Now the update's commands have 4 s together."""
    _, proxy = cut_off
    bots, client, group, leader = await cut_off_worker(telegram, proxy)
    try:
        proxy.cut()
        update = toggle_update(telegram, group, leader, 0)
        started = time.monotonic()
        response = await asyncio.wait_for(post(client, update), ANSWERED_WITHIN + 2)
        took = time.monotonic() - started
        assert response.status_code == 200  # the presser was told; Telegram need not send it again
        assert telegram.callback_answers[update["callback_query"]["id"]] == {"text": UNAVAILABLE, "show_alert": True}
        assert took < ANSWERED_WITHIN, f"answered after {took:.1f} s"
        print(f"\npress answered, cut off from Redis, after {took:.1f} s")
    finally:
        proxy.restore()
        await client.aclose()
        await bots.close()


async def test_a_worker_cut_off_from_redis_answers_a_command_in_as_little_time(cut_off, telegram):
    """A command's apology is a message, which the flood limits (kept in Redis) would hold up too: it took
    62 s to say /status was unavailable."""
    _, proxy = cut_off
    bots, client, group, _ = await cut_off_worker(telegram, proxy)
    try:
        proxy.cut()
        started = time.monotonic()
        response = await asyncio.wait_for(
            post(client, telegram.command(group.user_ids[1], group.chat_id, "/status")), ANSWERED_WITHIN + 2
        )
        took = time.monotonic() - started
        assert response.status_code == 200
        reply = telegram.messages(group.chat_id)[-1]
        assert reply.from_bot and reply.text == UNAVAILABLE
        assert took < ANSWERED_WITHIN, f"answered after {took:.1f} s"
    finally:
        proxy.restore()
        await client.aclose()
        await bots.close()


async def test_the_same_update_delivered_twice_at_once_is_processed_once(web, telegram):
    application, client = web
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    leader = table.players[table.game.leader].user_id
    # The leader's keyboard, in their private chat.
    keyboard = group.latest_with_button(leader, f"t:{group.game_id}:")
    toggle = next(b["callback_data"] for b in keyboard.buttons() if b.get("callback_data", "").endswith(":0"))
    update = telegram.press(leader, leader, keyboard.message_id, toggle)
    first, second = await asyncio.gather(post(client, update), post(client, update))
    # The second waits for the first to finish, then finds it done: no error for Telegram to retry.
    assert [first.status_code, second.status_code] == [200, 200]
    # Ticking the same seat twice would untick it: processed once, it stays ticked.
    assert (await group.table()).draft_team == (0,)
    again = await post(client, update)
    assert again.status_code == 200 and (await group.table()).draft_team == (0,)
    # The keyboard was redrawn once, for the one tick.
    redrawn = telegram.message(leader, keyboard.message_id)
    assert redrawn.edits == 1 and "Chosen: Ann" in redrawn.text


async def test_a_delivery_takes_over_an_update_whose_worker_died(web, telegram, redis):
    """Another worker claimed the update and died: its lease is not renewed, so the next delivery
    waits for it to lapse, takes the update over and processes it; not a 503 for minutes."""
    application, client = web
    group, leader = await leader_keyboard(application, telegram)
    update = toggle_update(telegram, group, leader, 1)
    claim = keys.update_claim(update["update_id"])
    await redis.set(claim, "working:a-worker-that-was-killed", px=1500)
    started = time.monotonic()
    response = await post(client, update)
    waited = time.monotonic() - started
    assert response.status_code == 200, response.status_code
    assert 1.0 < waited < 1.5 + 1.0, waited
    assert (await group.table()).draft_team == (1,)
    assert await redis.get(claim) == "done"
    # Telegram's next redelivery is answered at once and processed no more.
    assert (await post(client, update)).status_code == 200
    assert (await group.table()).draft_team == (1,)


async def test_a_claim_run_again_after_its_answer_was_lost_keeps_its_lease(make_bot, telegram, redis, monkeypatch):
    """Redis leased the update, the connection broke before its answer arrived, and the client ran the
    claim again (a Redis or cluster master failing over): the second run finds the worker's own lease.
    The update is processed at once, not after waiting out its own lease as if another worker held it."""

    class ClaimsWhoseFirstAnswerIsLost(webhook.Claims):
        def __init__(self, redis_) -> None:
            super().__init__(redis_)
            script, runs = self._claim, []

            async def claim(*args, **kwargs):
                if not runs:
                    runs.append(await script(*args, **kwargs))
                return await script(*args, **kwargs)

            self._claim = claim

    monkeypatch.setattr(webhook, "Claims", ClaimsWhoseFirstAnswerIsLost)
    application = await make_bot(1)
    client = web_client(application, redis)
    group, leader = await leader_keyboard(application, telegram)
    update = toggle_update(telegram, group, leader, 1)
    started = time.monotonic()
    response = await post(client, update)
    assert response.status_code == 200
    assert time.monotonic() - started < 1.5, time.monotonic() - started
    assert (await group.table()).draft_team == (1,)
    assert await redis.get(keys.update_claim(update["update_id"])) == "done"
    await client.aclose()


async def test_a_delivery_waits_for_a_live_worker_and_only_then_answers_busy(web, telegram, redis, monkeypatch):
    """A live worker renews its lease: a redelivery waits for it, answers 200 once it is done, and
    503 (so that Telegram tries again later) only if the worker still holds it after the wait."""
    application, client = web
    monkeypatch.setattr(webhook, "BUSY_WAIT_SECONDS", 1.0)
    group, leader = await leader_keyboard(application, telegram)
    update = toggle_update(telegram, group, leader, 2)
    claim = keys.update_claim(update["update_id"])
    await redis.set(claim, "working:a-live-worker", px=int(webhook.LEASE_SECONDS * 1000))
    started = time.monotonic()
    response = await post(client, update)
    assert response.status_code == 503 and time.monotonic() - started >= 1.0

    async def holder_finishes() -> None:
        await asyncio.sleep(0.4)
        await redis.set(claim, "done")

    started = time.monotonic()
    response, _ = await asyncio.gather(post(client, update), holder_finishes())
    assert response.status_code == 200 and 0.3 < time.monotonic() - started < 1.0
    # The holder processed it (here: nobody did); this worker did not process it as well.
    assert (await group.table()).draft_team == ()


async def test_an_update_stored_by_a_worker_that_died_before_answering_is_not_applied_again(make_bot, telegram, redis):
    """Worker A stores the tick and dies while answering the press (before it could mark the update
    done). Telegram redelivers it to worker B, which takes it over: the tick is not applied again
    (a second tick would untick the seat), and B answers what A had answered."""
    first, second = await make_bot(1), await make_bot(2)
    a, b = web_client(first, redis), web_client(second, redis)
    group, leader = await leader_keyboard(first, telegram)
    update = toggle_update(telegram, group, leader, 3)
    telegram.delays["answercallbackquery"] = 60.0
    dying = asyncio.create_task(post(a, update))
    for _ in range(200):
        if (await group.table()).draft_team == (3,):
            break
        await asyncio.sleep(0.01)
    assert (await group.table()).draft_team == (3,), "worker A did not store the tick"
    dying.cancel()
    with pytest.raises(asyncio.CancelledError):
        await dying
    # As after SIGKILL: A's lease is still there and runs out, nobody renews it.
    await redis.set(keys.update_claim(update["update_id"]), "working:worker-a", px=500)
    telegram.delays.clear()
    response = await post(b, update)
    assert response.status_code == 200
    assert (await group.table()).draft_team == (3,)
    assert telegram.callback_answers[update["callback_query"]["id"]] is not None
    # One redraw of the keyboard, for the one tick: delivered, or still queued behind the outbox lock
    # of the drain that died with worker A (when to deliver it is the outbox's business).
    await second.bot_data["service"].finish_deliveries()
    keyboard = group.latest_with_button(leader, f"t:{group.game_id}:")
    queued = await redis.lrange(keys.outbox(group.game_id), 0, -1)
    assert keyboard.edits + len(queued) == 1, (keyboard.edits, queued)
    for client in (a, b):
        await client.aclose()


def test_the_updates_a_game_remembers_are_part_of_its_document():
    table = Table(id="0123456789", chat_id=-1, chat_title="G", creator_id=1, applied_updates=(7, 8))
    assert Table.from_json(table.to_json()).applied_updates == (7, 8)
    # A document stored before games remembered updates reads as remembering none.
    data = json.loads(table.to_json())
    del data["applied_updates"]
    assert Table.from_json(json.dumps(data)).applied_updates == ()
    for broken in (["7"], [True], 7, "78"):
        data["applied_updates"] = broken
        with pytest.raises(TableFormatError):
            Table.from_json(json.dumps(data))


async def test_the_webhook_answers_once_the_press_is_stored_and_delivers_after(web, telegram):
    """With a Bot API that is slow to send, the press is stored and answered and the webhook answers
    Telegram before the group's messages go out; they go out afterwards, all of them."""
    application, client = web
    service = application.bot_data["service"]
    group = await started_on(application, telegram)
    await propose(group, (0, 1))
    for seat in (0, 1, 2, 3):
        await group.press(group.user_ids[seat], group.chat_id, "v:", ":a")
    service.deliver_in_background = True  # as webhook.serve sets it
    telegram.delays.update(sendmessage=0.5, editmessagetext=0.5)
    board = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    last_vote = telegram.press(group.user_ids[4], group.chat_id, board.message_id, button_data(board, ":a"))
    started = time.monotonic()
    response = await post(client, last_vote)
    answered = time.monotonic() - started
    assert response.status_code == 200
    assert answered < 0.4, f"the webhook answered after {answered:.2f} s"
    assert telegram.callback_answers[last_vote["callback_query"]["id"]]["text"].startswith("You voted")
    assert (await group.table()).game.rounds[0].proposals[0].approved is True
    assert await outbox_length(group) > 0 and "Approved" not in (telegram.message(group.chat_id, board.message_id).text)
    # The board's edit closing the vote and both card prompts, carrying the votes, arrive afterwards (the
    # board shows an approved team's votes with its mission's result).
    await service.finish_deliveries()
    delivered = time.monotonic() - started
    for seat in (0, 1):
        [prompt] = [m.text for m in telegram.messages(group.user_ids[seat]) if "Play your card" in (m.text or "")]
        assert "👍 Ann, Bob, Cy, Dan, Eve" in prompt
    closed = telegram.message(group.chat_id, board.message_id).text
    assert "Approved" not in closed and closed.endswith("waiting for the team's cards.")
    assert await outbox_length(group) == 0
    print(f"\nwebhook answered in {answered * 1000:.0f} ms; the messages were delivered after {delivered:.1f} s")


async def test_only_one_worker_registers_the_webhook(make_bot, telegram, redis):
    workers = [await make_bot(seed) for seed in range(3)]
    results = await asyncio.gather(*(register_once(w, WEBHOOK, redis) for w in workers))
    assert sorted(results) == [False, False, True]
    registrations = [params for method, params in telegram.calls if method == "setWebhook"]
    assert len(registrations) == 1
    assert registrations[0]["url"] == WEBHOOK.url and registrations[0]["secret_token"] == SECRET
    assert await redis.exists(REGISTRAR_KEY)


async def test_a_worker_started_with_a_new_secret_registers_it_at_once(make_bot, telegram, redis):
    """The operator changes the webhook's secret (or its address) and restarts the workers minutes after
    the last registration: the new one is registered, once, not skipped because a registration was
    made recently. Telegram would otherwise go on sending the old secret, and every update get 403."""
    first = await make_bot(1)
    assert await register_once(first, WEBHOOK, redis)
    changed = Webhook(url=WEBHOOK.url, listen="127.0.0.1", port=8080, secret="another-secret-for-tests-987")
    workers = [await make_bot(seed) for seed in (2, 3)]
    results = await asyncio.gather(*(register_once(w, changed, redis) for w in workers))
    assert sorted(results) == [False, True]
    registrations = [params for method, params in telegram.calls if method == "setWebhook"]
    assert [r["secret_token"] for r in registrations] == [SECRET, changed.secret]
    kept = str(await redis.get(REGISTRAR_KEY))
    assert SECRET not in kept and changed.secret not in kept
    # A worker of the same settings started again registers nothing more.
    assert not await register_once(await make_bot(4), changed, redis)


async def test_a_registration_telegram_refused_is_made_by_the_next_worker(make_bot, telegram, redis):
    """The worker that registers meets an error from Telegram (and stops): the next worker to start
    registers the webhook, instead of every worker skipping it for five minutes, the bot deaf meanwhile."""
    telegram.fail_next("setWebhook", status=502, description="Bad Gateway")
    with pytest.raises(TelegramError):
        await register_once(await make_bot(1), WEBHOOK, redis)
    assert await register_once(await make_bot(2), WEBHOOK, redis)
    assert [m for m, _ in telegram.calls if m == "setWebhook"] == ["setWebhook", "setWebhook"]


def test_webhook_settings_are_checked():
    env = {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "BOT_MODE": "webhook",
        "WEBHOOK_URL": "https://bot.example.org/tg",
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_PORT": "9000",
    }
    webhook = load_settings(env).webhook
    assert (webhook.path, webhook.port, webhook.listen) == ("/tg", 9000, "0.0.0.0")
    assert load_settings({"TELEGRAM_BOT_TOKEN": TOKEN}).webhook is None
    for broken, named in (
        ({"WEBHOOK_URL": "http://bot.example.org/tg"}, "WEBHOOK_URL"),
        ({"WEBHOOK_SECRET": "short"}, "WEBHOOK_SECRET"),
        ({"WEBHOOK_PORT": "99999"}, "WEBHOOK_PORT"),
        ({"BOT_MODE": "carrier-pigeon"}, "BOT_MODE"),
    ):
        with pytest.raises(ConfigError, match=named):
            load_settings({**env, **broken})
