"""Webhook mode: a small Starlette app in front of the Application, served by uvicorn.

Several workers may serve one bot behind a load balancer, and Telegram delivers an update again,
waiting longer each time, until a worker answers it with 2xx (and gives up after a few tries). So:

- a request must carry the secret token Telegram was given, and a body no larger than an update
  could be (`MAX_BODY_BYTES`; a larger one gets 413 and is not read further);
- an update waits for Redis `redis_budget.UPDATE_SECONDS` at most, all its commands together: a worker
  cut off from Redis answers the presser that the game is unavailable within Telegram's window for the
  press's answer, and answers Telegram's request too;
- a worker processes an update under a short lease in Redis (`keys.update_claim`, LEASE_SECONDS),
  renewed while it works and replaced by "done" when it has finished. A delivery that finds the
  update leased waits (BUSY_WAIT_SECONDS, longer than a lease) for the holder to finish (then 200)
  or for its lease to lapse, which it does within LEASE_SECONDS of the holder dying; it then takes
  the update over. It answers 503 only if a live worker still holds the update after the wait;
- an update processed again changes its game once (`tgbot.once`);
- Telegram is answered once the change is stored and the person who acted answered; the game's
  messages go out after that, in the background (`GameService.deliver_in_background`);
- only one worker registers the webhook.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import signal
import socket

import uvicorn
from redis.asyncio import Redis
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from telegram import Update
from telegram.ext import Application

from tgbot import keys, once, redis_budget
from tgbot.app import ALLOWED_UPDATES, prepare
from tgbot.config import Webhook

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# An update's lease: another worker may take the update over this long after its worker stopped renewing.
LEASE_SECONDS = 5.0
RENEW_SECONDS = 1.0
# How long a delivery waits for an update another worker holds: longer than a lease, so that the first
# delivery after a worker died takes its updates over.
BUSY_WAIT_SECONDS = LEASE_SECONDS + 1.0
POLL_SECONDS = 0.1
DONE_SECONDS = 24 * 3600  # Telegram gives up redelivering long before this
# Far above any update (a message holds at most 4096 characters); what is larger is not an update.
MAX_BODY_BYTES = 1024 * 1024
# At shutdown: how long the messages of updates already answered may take to go out; the rest stay queued.
SHUTDOWN_DELIVERY_SECONDS = 8.0
# /healthz answers 503 when Redis has not answered its PING within this long: refused (its retries cut
# short), cut off by the network or frozen (which answer nothing), or slower than a PING ever is. The load
# balancer routes by it, so a worker that cannot reach Redis (whose presses would all be answered that
# the game is unavailable) is out of the rotation within one probe.
HEALTH_TIMEOUT_SECONDS = 0.3
REGISTRAR_KEY = keys.WEBHOOK_REGISTRAR
REGISTERED_SECONDS = 300

# Take the registration of the settings whose digest is ARGV[1], unless it was taken for them already: 1 if taken.
_REGISTER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""

DONE = "done"
BUSY = "busy"

# Lease the update to ARGV[1] for ARGV[2] ms if nobody holds it: 'mine'; else 'done' or 'busy'. A lease
# that is ARGV[1]'s already is 'mine' too: this claim ran, its answer was lost with the connection, and
# the client ran it again (tokens are never reused).
_CLAIM = """
local held = redis.call('GET', KEYS[1])
if not held or held == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return 'mine'
end
if held == 'done' then return 'done' end
return 'busy'
"""
# Extend the lease only while it is still ARGV[1]'s: 1, or 0 once it lapsed or was taken over.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
# Processed: "done" for ARGV[2] seconds. The update's kept answers (KEYS[2]) go if the lease was still
# ARGV[1]'s (else a worker that took it over may still need them). 1 if it was.
_FINISH = """
local mine = redis.call('GET', KEYS[1]) == ARGV[1]
redis.call('SET', KEYS[1], 'done', 'EX', ARGV[2])
if mine then
    redis.call('DEL', KEYS[2])
    return 1
end
return 0
"""
# Give the lease up (processing stopped half-way): the next delivery takes the update at once.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""


def update_key(update_id: int) -> str:
    return keys.update_claim(update_id)


class BodyTooLarge(Exception):
    pass


async def read_body(request: Request) -> bytes:
    """The request's body, or `BodyTooLarge` as soon as it is known to exceed MAX_BODY_BYTES: from its
    Content-Length, or (sent in chunks) once that much was read, without reading the rest."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise BodyTooLarge
    return bytes(body)


class Claims:
    """Which worker processes which update (see the module's docstring)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self._claim = redis.register_script(_CLAIM)
        self._renew = redis.register_script(_RENEW)
        self._finish = redis.register_script(_FINISH)
        self._release = redis.register_script(_RELEASE)

    async def acquire(self, update_id: int) -> Lease | str:
        """A lease on the update; or DONE, another worker processed it; or BUSY, a live worker still
        holds it after BUSY_WAIT_SECONDS."""
        token = f"{self.worker}:{secrets.token_hex(4)}"
        loop = asyncio.get_running_loop()
        started = loop.time()
        waited = False
        while True:
            state = await self._claim(keys=[update_key(update_id)], args=[token, int(LEASE_SECONDS * 1000)])
            state = state.decode() if isinstance(state, bytes) else state
            if state == "mine":
                if waited:
                    log.info("webhook: update %s taken over after %.1f s", update_id, loop.time() - started)
                return Lease(self, update_id, token)
            if state == DONE:
                return DONE
            if loop.time() - started >= BUSY_WAIT_SECONDS:
                log.info("webhook: update %s is still being processed by another worker", update_id)
                return BUSY
            waited = True
            await asyncio.sleep(POLL_SECONDS)

    async def renew(self, update_id: int, token: str) -> bool:
        return bool(await self._renew(keys=[update_key(update_id)], args=[token, int(LEASE_SECONDS * 1000)]))

    async def finish(self, update_id: int, token: str) -> bool:
        keys_ = [update_key(update_id), keys.update_answers(update_id)]
        return bool(await self._finish(keys=keys_, args=[token, DONE_SECONDS]))

    async def release(self, update_id: int, token: str) -> None:
        await self._release(keys=[update_key(update_id)], args=[token])


class Lease:
    """An update leased to this worker: renewed in the background while it is processed (`async with`);
    marked done when the block ends, or given up if it ends with an exception.

    The renewal stops between two renewals, never by cancelling one: a redis-py command cancelled
    half-way costs its connection, and under load that stalled the whole worker."""

    def __init__(self, claims: Claims, update_id: int, token: str) -> None:
        self.claims = claims
        self.update_id = update_id
        self.token = token
        self._renewing: asyncio.Task | None = None
        self._done = asyncio.Event()

    async def __aenter__(self) -> Lease:
        self._renewing = asyncio.create_task(self._renew(), name=f"lease {self.update_id}")
        return self

    async def __aexit__(self, kind, error, traceback) -> None:
        self._done.set()
        await asyncio.gather(self._renewing, return_exceptions=True)
        try:
            if kind is None:
                if not await self.claims.finish(self.update_id, self.token):
                    log.warning("webhook: update %s was processed after its lease had lapsed", self.update_id)
            else:
                await self.claims.release(self.update_id, self.token)
        except RedisError:
            log.warning("webhook: update %s: its lease was not marked done or given up", self.update_id)

    async def _renew(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._done.wait(), RENEW_SECONDS)
                return
            except TimeoutError:
                pass
            try:
                # A renewal that has not got through by the time the lease would lapse is worth nothing, and it
                # would hold up the answer to Telegram (`__aexit__` waits for it).
                with redis_budget.spending(LEASE_SECONDS - RENEW_SECONDS):
                    renewed = await self.claims.renew(self.update_id, self.token)
                if not renewed:
                    log.warning("webhook: update %s: its lease lapsed while it was processed", self.update_id)
                    return
            except RedisError as error:
                log.warning("webhook: update %s: lease not renewed (%s)", self.update_id, type(error).__name__)


async def process(application: Application, update: Update) -> None:
    """Process the update, each game it changes changed once (`tgbot.once`)."""
    token = once.current.set(once.Processing(update.update_id))
    try:
        await application.process_update(update)
    finally:
        once.current.reset(token)


def create_web_app(application: Application, webhook: Webhook, redis: Redis) -> Starlette:
    secret = webhook.secret.encode()
    claims = Claims(redis)

    async def receive_update(request: Request) -> Response:
        offered = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(offered, secret):
            log.warning(
                "webhook: refused a request without the right secret token from %s",
                request.client.host if request.client else "unknown",
            )
            return Response(status_code=403)
        try:
            body = await read_body(request)
        except BodyTooLarge:
            log.warning("webhook: refused a body of more than %d bytes", MAX_BODY_BYTES)
            return Response(status_code=413, headers={"Connection": "close"})
        except ClientDisconnect:
            return Response(status_code=400)
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
                raise ValueError("not an update")
            update = Update.de_json(data, application.bot)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            # (RecursionError: JSON nested deeper than the parser goes.)
            log.warning("webhook: refused a body that is not an update")
            return Response(status_code=400)
        with redis_budget.spending(redis_budget.UPDATE_SECONDS):
            try:
                lease = await claims.acquire(update.update_id)
            except RedisError:
                # The handlers will say the game is unavailable; do not make Telegram retry.
                await process(application, update)
                return Response()
            if lease == DONE:
                return Response()
            if lease == BUSY:
                return Response(status_code=503)  # Telegram retries; by then it is done, or taken over
            async with lease:
                await process(application, update)
            return Response()

    async def healthz(_: Request) -> Response:
        try:
            await asyncio.wait_for(redis.ping(), HEALTH_TIMEOUT_SECONDS)
        except (RedisError, TimeoutError):
            return JSONResponse({"status": "degraded", "redis": "unreachable"}, status_code=503)
        return JSONResponse({"status": "ok", "redis": "ok"})

    return Starlette(
        routes=[
            Route(webhook.path, receive_update, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ]
    )


def registration(webhook: Webhook) -> str:
    """What a registration set, as a digest (the secret is not kept in Redis): a worker started with
    other settings (a new secret, a new address) registers them, however recent the last registration."""
    settings = "\n".join([webhook.url, webhook.secret, ",".join(ALLOWED_UPDATES)])
    return hashlib.sha256(settings.encode()).hexdigest()


async def register_once(application: Application, webhook: Webhook, redis: Redis) -> bool:
    """Set the webhook from one worker only; the others, started with the same settings within
    REGISTERED_SECONDS, find it done. If Telegram refuses, the next worker to start registers it."""
    digest = registration(webhook)
    if not await redis.register_script(_REGISTER)(keys=[REGISTRAR_KEY], args=[digest, REGISTERED_SECONDS]):
        return False
    try:
        await application.bot.set_webhook(
            url=webhook.url, secret_token=webhook.secret, allowed_updates=ALLOWED_UPDATES
        )
    except BaseException:
        with contextlib.suppress(RedisError):
            await redis.register_script(_RELEASE)(keys=[REGISTRAR_KEY], args=[digest])
        raise
    log.info("webhook registered")
    return True


async def serve(application: Application, webhook: Webhook, redis: Redis) -> None:
    """Run one webhook worker until it is stopped."""
    async with application:
        await prepare(application)
        service = application.bot_data["service"]
        service.deliver_in_background = True
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
            # Every request has been answered; the messages of what was answered go out now.
            left = await service.finish_deliveries(SHUTDOWN_DELIVERY_SECONDS)
            if left:
                log.warning(
                    "%d deliveries stopped at shutdown (a game's messages stay queued for another worker's clock)", left
                )
            await application.stop()
            log.info("worker stopped")
