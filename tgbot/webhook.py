"""Webhook mode: a small Starlette app in front of the Application, served by uvicorn.

Several workers may serve one bot behind a load balancer. Each request must carry the
secret token Telegram was given; each update id is processed once across all workers;
an update is answered only after it was processed, so a worker that dies mid-way leaves
it for Telegram to deliver again. Only one worker registers the webhook.
"""

from __future__ import annotations

import hmac
import json
import logging
import signal

import uvicorn
from redis.asyncio import Redis
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from telegram import Update
from telegram.ext import Application

from tgbot import keys
from tgbot.app import prepare
from tgbot.config import Webhook

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# An update being processed (its messages included); after this a redelivery may take it over.
CLAIM_SECONDS = 300
DONE_SECONDS = 24 * 3600  # Telegram gives up redelivering long before this
REGISTRAR_KEY = keys.WEBHOOK_REGISTRAR


def update_key(update_id: int) -> str:
    return keys.update_claim(update_id)


async def claim(redis: Redis, update_id: int) -> str:
    """'mine' to process it, 'done' if another worker did, 'busy' if one is doing it now."""
    if await redis.set(update_key(update_id), "working", nx=True, ex=CLAIM_SECONDS):
        return "mine"
    return "done" if await redis.get(update_key(update_id)) == "done" else "busy"


def create_web_app(application: Application, webhook: Webhook, redis: Redis) -> Starlette:
    secret = webhook.secret.encode()

    async def receive_update(request: Request) -> Response:
        offered = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(offered, secret):
            log.warning(
                "webhook: refused a request without the right secret token from %s",
                request.client.host if request.client else "unknown",
            )
            return Response(status_code=403)
        try:
            data = json.loads(await request.body())
            if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
                raise ValueError("not an update")
            update = Update.de_json(data, application.bot)
        except (ValueError, TypeError, KeyError, AttributeError):
            log.warning("webhook: refused a body that is not an update")
            return Response(status_code=400)
        try:
            state = await claim(redis, update.update_id)
        except RedisError:
            state = "mine"  # the handlers will say the game is unavailable; do not make Telegram retry
        if state == "done":
            return Response()
        if state == "busy":
            return Response(status_code=503)  # Telegram retries; by then it is done or free again
        await application.process_update(update)
        try:
            await redis.set(update_key(update.update_id), "done", ex=DONE_SECONDS)
        except RedisError:
            log.warning("webhook: update %s processed, but not marked done", update.update_id)
        return Response()

    async def healthz(_: Request) -> Response:
        try:
            await redis.ping()
        except RedisError:
            return JSONResponse({"status": "degraded", "redis": "unreachable"}, status_code=503)
        return JSONResponse({"status": "ok", "redis": "ok"})

    return Starlette(
        routes=[
            Route(webhook.path, receive_update, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ]
    )


async def register_once(application: Application, webhook: Webhook, redis: Redis) -> bool:
    """Set the webhook from one worker only; the others find it done."""
    if not await redis.set(REGISTRAR_KEY, "1", nx=True, ex=300):
        return False
    await application.bot.set_webhook(
        url=webhook.url, secret_token=webhook.secret, allowed_updates=["message", "callback_query"]
    )
    log.info("webhook registered")
    return True


async def serve(application: Application, webhook: Webhook, redis: Redis) -> None:
    """Run one webhook worker until it is stopped."""
    async with application:
        await prepare(application)
        await register_once(application, webhook, redis)
        await application.start()
        server = uvicorn.Server(
            uvicorn.Config(
                create_web_app(application, webhook, redis),
                host=webhook.listen,
                port=webhook.port,
                log_level="warning",
                access_log=False,
            )
        )
        # uvicorn stops gracefully on SIGTERM/SIGINT and then raises the signal again for the
        # handler that was there before it. Make that handler harmless, so the worker goes on to
        # stop the Application and close its connections instead of dying mid-way.
        for stop_signal in (signal.SIGTERM, signal.SIGINT):
            signal.signal(stop_signal, lambda *_: None)
        try:
            await server.serve()
        finally:
            await application.stop()
            log.info("worker stopped")
