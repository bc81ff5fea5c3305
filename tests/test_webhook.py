"""Webhook mode in process: the secret token, /healthz, each update once, one registration."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from redis.asyncio import Redis

from tgbot.config import ConfigError, Webhook, load_settings
from tgbot.offline.simulation import SimulatedGroup
from tgbot.webhook import REGISTRAR_KEY, SECRET_HEADER, create_web_app, register_once

SECRET = "s3cret-token-for-tests-0123"
WEBHOOK = Webhook(url="https://bot.example.org/telegram", listen="127.0.0.1", port=8080, secret=SECRET)
TOKEN = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ012345678"


@pytest.fixture
async def web(make_bot, telegram, redis):
    application = await make_bot(1)
    app = create_web_app(application, WEBHOOK, redis)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://worker")
    yield application, client
    await client.aclose()


async def post(client, update, secret=SECRET):
    headers = {SECRET_HEADER: secret} if secret is not None else {}
    return await client.post("/telegram", json=update, headers=headers)


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
    assert sorted([first.status_code, second.status_code]) in ([200, 200], [200, 503])
    # Ticking the same seat twice would untick it: processed once, it stays ticked.
    assert (await group.table()).draft_team == (0,)
    again = await post(client, update)
    assert again.status_code == 200 and (await group.table()).draft_team == (0,)
    # The keyboard was redrawn once, for the one tick.
    redrawn = telegram.message(leader, keyboard.message_id)
    assert redrawn.edits == 1 and "Chosen: Ann" in redrawn.text


async def test_only_one_worker_registers_the_webhook(make_bot, telegram, redis):
    workers = [await make_bot(seed) for seed in range(3)]
    results = await asyncio.gather(*(register_once(w, WEBHOOK, redis) for w in workers))
    assert sorted(results) == [False, False, True]
    registrations = [params for method, params in telegram.calls if method == "setWebhook"]
    assert len(registrations) == 1
    assert registrations[0]["url"] == WEBHOOK.url and registrations[0]["secret_token"] == SECRET
    assert await redis.exists(REGISTRAR_KEY)


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
