"""A FakeTelegram served over HTTP, so that real bot processes can talk to it.

`FakeTelegram` normally sits underneath python-telegram-bot as a `BaseRequest`; a bot in another
process can only reach it over the network. `FakeTelegramServer` runs a small Starlette app on
127.0.0.1 (uvicorn, in-process, as a task of the running event loop) that turns each Bot API
request back into what `FakeTelegram.handle` reads, so a worker started with
TELEGRAM_API_BASE_URL=`server.base_url` sees the same world the test inspects and drives.

python-telegram-bot's HTTPXRequest posts `{base_url}{token}/{method}` with its
`RequestData.json_parameters` as the form: strings as they are, every other value JSON-encoded;
with files it posts multipart/form-data instead, the files as parts with a filename. The server
undoes that encoding (`decode_parameters`) to get back `RequestData.parameters`.

A queued failure with status 0 (`FakeTelegram.fail_next(..., status=0)`) stands for a network
timeout in-process; over HTTP it becomes a 502 without a JSON body, which the client sees as a
NetworkError, the same family the bot treats timeouts with.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser
from typing import Any
from urllib.parse import parse_qsl

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from telegram.error import TimedOut

from tgbot.offline.fake_telegram import FakeTelegram

# Bot API parameters typed String: their values are sent as they are and must never be
# decoded, even when they happen to look like JSON (a message text of "42" or "[1]").
STRING_PARAMETERS = frozenset(
    {
        "text",
        "caption",
        "parse_mode",
        "callback_query_id",
        "inline_message_id",
        "url",
        "secret_token",
        "language_code",
        "action",
        "emoji",
        "title",
        "description",
        "short_description",
        "name",
        "query",
        "file_id",
        "ip_address",
        "business_connection_id",
        "message_effect_id",
    }
)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are never what a Bot API client sent


def decode_value(name: str, raw: str) -> Any:
    """One form value back into what PTB had before `RequestParameter.json_value`.

    PTB sends a `str` unchanged and JSON-dumps everything else (numbers, booleans, lists,
    dicts). A value that is not valid JSON, or decodes to a string or null, was a string.
    """
    if name in STRING_PARAMETERS:
        return raw
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except ValueError:
        return raw
    return raw if value is None or isinstance(value, str) else value


def decode_parameters(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    return {name: decode_value(name, raw) for name, raw in pairs}


@dataclass
class ReceivedRequest:
    """The parts of PTB's `RequestData` that `FakeTelegram.handle` reads."""

    parameters: dict[str, Any]
    multipart_data: dict[str, tuple[str | None, bytes, str]] = field(default_factory=dict)

    @property
    def contains_files(self) -> bool:
        return bool(self.multipart_data)


def _parse_multipart(content_type: str, body: bytes) -> tuple[list[tuple[str, str]], dict]:
    message = BytesParser(policy=policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    if not message.is_multipart():
        raise ValueError("not a multipart body")
    fields: list[tuple[str, str]] = []
    files: dict[str, tuple[str | None, bytes, str]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        if filename is None:
            fields.append((name, payload.decode(part.get_content_charset() or "utf-8")))
        else:
            files[name] = (filename, payload, part.get_content_type())
    return fields, files


async def read_request(request: Request) -> ReceivedRequest:
    """A Bot API request as PTB sends it (query string, url-encoded form or multipart)."""
    pairs = list(request.query_params.multi_items())
    files: dict[str, tuple[str | None, bytes, str]] = {}
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        fields, files = _parse_multipart(content_type, body)
        pairs += fields
    elif content_type.startswith("application/json") and body:
        # Telegram also accepts JSON bodies; their values are already typed.
        return ReceivedRequest({**decode_parameters(pairs), **json.loads(body)}, files)
    elif body:
        pairs += parse_qsl(body.decode("utf-8"), keep_blank_values=True)
    return ReceivedRequest(decode_parameters(pairs), files)


@dataclass(frozen=True)
class ServedCall:
    at: float  # time.monotonic() when the request arrived
    method: str
    chat_id: Any


class FakeTelegramServer:
    """`async with FakeTelegramServer(telegram) as server:` … `server.base_url` …"""

    def __init__(self, telegram: FakeTelegram, host: str = "127.0.0.1") -> None:
        self.telegram = telegram
        self.host = host
        self.port: int | None = None
        self.served: list[ServedCall] = []  # every request, in arrival order, with its time
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task | None = None

    @property
    def base_url(self) -> str:
        """What TELEGRAM_API_BASE_URL must be for a bot to use this server."""
        if self.port is None:
            raise RuntimeError("the server is not started")
        return f"http://{self.host}:{self.port}/bot"

    def app(self) -> Starlette:
        async def bot_api(request: Request) -> Response:
            received = await read_request(request)
            method = request.url.path.rstrip("/").rpartition("/")[2]
            self.served.append(ServedCall(time.monotonic(), method, received.parameters.get("chat_id")))
            try:
                status, body = await self.telegram.handle(str(request.url), received)
            except TimedOut:
                return Response("timed out", status_code=502, media_type="text/plain")
            return Response(body, status_code=status, media_type="application/json")

        return Starlette(routes=[Route("/{path:path}", bot_api, methods=["GET", "POST"])])

    async def start(self) -> None:
        # proto=IPPROTO_TCP: asyncio only sets TCP_NODELAY on such sockets; without it every answer waits ~40 ms.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        # The test runner, not uvicorn, owns SIGINT and SIGTERM.
        self._server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        for _ in range(500):
            if self._server.started:
                return
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise RuntimeError("the fake Bot API server stopped at once")
            await asyncio.sleep(0.01)
        raise RuntimeError("the fake Bot API server did not start")

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(self._task, timeout=10)
        except TimeoutError:
            self._server.force_exit = True
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._server = self._task = None

    async def __aenter__(self) -> FakeTelegramServer:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()


async def post_update(
    worker_url: str,
    secret: str | None,
    update: dict,
    *,
    client: httpx.AsyncClient | None = None,
    timeout: float = 120.0,
) -> httpx.Response:
    """Deliver an update to a webhook worker as Telegram does (`secret=None`: without the header)."""
    headers = {} if secret is None else {SECRET_HEADER: secret}
    if client is not None:
        return await client.post(worker_url, json=update, headers=headers, timeout=timeout)
    async with httpx.AsyncClient() as own:
        return await own.post(worker_url, json=update, headers=headers, timeout=timeout)
