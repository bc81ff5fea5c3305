"""An in-memory Telegram Bot API server, plugged in underneath python-telegram-bot.

The fake sits at PTB's HTTP layer (`BaseRequest`) instead of mocking `Bot` methods, so the bot's
real code path runs unchanged: PTB builds each request, parses our JSON into its own objects and
turns our error replies into its real exceptions (Forbidden, BadRequest, RetryAfter, ChatMigrated).
The fake therefore only has to be right about what Telegram *answers*.  It models the rules a game
bot actually trips over: users who never opened the private chat or who blocked the bot, "message is
not modified", stale or repeated callback queries, size limits, HTML it cannot parse, flood control, a
reply to a message deleted meanwhile, and a group that becomes a supergroup under a new chat id.

One `FakeTelegram` is one Telegram world; any number of PTB bots may talk to it at once (two
workers sharing a token), each through its own `request()` objects.
"""

from __future__ import annotations

import asyncio
import html
import itertools
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from telegram.error import TimedOut
from telegram.request import BaseRequest, RequestData

NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query id is invalid"
UPGRADED = "Bad Request: group chat was upgraded to a supergroup chat"
MAX_TEXT, MAX_CAPTION, MAX_CALLBACK_DATA, MAX_ANSWER_TEXT = 4096, 1024, 64, 200
_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
_START_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")
_HTML_TAG = re.compile(r"<[^>]*>")
_TEXT_BUTTON = "Text buttons are unallowed in the inline keyboard"
# Methods whose answer never depends on the world.  getUpdates is empty because tests hand updates
# to the Application themselves; Telegram would refuse webhooks and polling at once anyway.
# What Telegram's flood limits count in a group: whatever the bot posts or changes there (`most_in_window`).
POSTING = frozenset(
    {
        "sendmessage",
        "senddocument",
        "sendphoto",
        "editmessagetext",
        "editmessagereplymarkup",
        "deletemessage",
        "pinchatmessage",
    }
)
# What a 429's retry_after does not hold back (`during_flood_waits`): the answer to a press, which posts nothing.
NOT_HELD = frozenset({"answercallbackquery"})

_CONSTANT_RESULTS: dict[str, Any] = dict.fromkeys(("setwebhook", "deletewebhook", "close", "logout"), True)
_CONSTANT_RESULTS["getupdates"] = []


class ApiError(Exception):
    """A Telegram error reply; raising it keeps the method handlers reading like the happy path."""

    def __init__(
        self, status: int, description: str, retry_after: int | None = None, migrate_to_chat_id: int | None = None
    ):
        super().__init__(description)
        self.status, self.description, self.retry_after = status, description, retry_after
        self.migrate_to_chat_id = migrate_to_chat_id

    def reply(self) -> tuple[int, bytes]:
        body: dict[str, Any] = {"ok": False, "error_code": self.status, "description": self.description}
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        if self.migrate_to_chat_id is not None:
            body["parameters"] = {"migrate_to_chat_id": self.migrate_to_chat_id}
        return self.status, json.dumps(body).encode()


@dataclass
class FakeUser:
    id: int
    first_name: str
    language_code: str | None = "en"
    username: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.username:
            d["username"] = self.username
        if self.language_code:
            d["language_code"] = self.language_code
        return d


@dataclass(frozen=True)
class FakeDocument:
    filename: str
    data: bytes
    mime_type: str = "application/octet-stream"
    file_id: str = ""


@dataclass
class FakeMessage:
    """A message as Telegram keeps it: tests assert on what players would see now, not on call logs."""

    chat_id: int
    message_id: int
    text: str | None  # the caption, for a document
    reply_markup: list[list[dict]] | None = None  # inline_keyboard rows exactly as the bot sent them
    edits: int = 0
    document: FakeDocument | None = None
    photo: FakeDocument | None = None  # a photo's file, as it was uploaded (Telegram keeps sizes of it)
    from_bot: bool = True
    sender_id: int = 0
    date: int = 0
    edit_date: int | None = None
    entities: list[dict] | None = None
    deleted: bool = False
    topic: int | None = None  # the forum topic it is in (None: General, or a group without topics)
    reply_to: int | None = None  # the message it answers, in the same chat
    # When its text was last written (sent, or edited into something else), counted across the
    # whole world: a chat read in this order reads as it happened, each message as it ended.
    written: int = 0

    def buttons(self) -> list[dict]:
        return [button for row in self.reply_markup or [] for button in row]


class FakeRequest(BaseRequest):
    """PTB wants one request object per purpose (updates vs. everything else), hence a thin handle."""

    def __init__(self, telegram: FakeTelegram):
        self.telegram = telegram

    @property
    def read_timeout(self) -> float | None:
        return None

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass  # the world outlives any one bot: a restarted worker must find its messages again

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: float | None | object = BaseRequest.DEFAULT_NONE,
        *_,
        **__,
    ):
        timeout = self.telegram.read_timeout if read_timeout is BaseRequest.DEFAULT_NONE else read_timeout
        if timeout is None:
            return await self.telegram.handle(url, request_data)
        # The client stops waiting for the answer; Telegram goes on with the call all the same.
        call = asyncio.ensure_future(self.telegram.handle(url, request_data))
        self.telegram.calls_running.add(call)
        call.add_done_callback(self.telegram.calls_running.discard)
        try:
            return await asyncio.wait_for(asyncio.shield(call), timeout)
        except TimeoutError:
            raise TimedOut("Timed out") from None


def _utf16_len(text: str) -> int:
    """Telegram measures text and entity offsets in UTF-16 code units, so emoji count twice."""
    return len(text.encode("utf-16-le")) // 2


def _visible_length(text: str, parse_mode: str | None) -> int:
    """Limits apply to the text players see, i.e. after HTML markup is taken out."""
    if (parse_mode or "").lower() == "html":
        text = html.unescape(_HTML_TAG.sub("", text))
    return _utf16_len(text.strip())


# The tags Telegram's HTML parse mode knows; anything else, an unescaped "<" or "&", or a tag left
# open or closed out of turn, and Telegram refuses the whole message ("can't parse entities").
_HTML_TAGS = frozenset(
    ("b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a", "code", "pre")
    + ("blockquote", "tg-emoji")
)
_HTML_TOKEN = re.compile(r"<(/?)([a-zA-Z-]*)((?:\s[^<>]*)?)>|&(?:lt|gt|amp|quot|#[0-9]+|#x[0-9a-fA-F]+);|[<&]")


def _html_fault(text: str) -> str | None:
    """Why Telegram would refuse `text` in HTML parse mode, or None if it parses."""
    open_tags: list[str] = []
    for token in _HTML_TOKEN.finditer(text):
        whole = token.group(0)
        if whole in ("<", "&"):
            return f"unsupported start tag or entity at byte offset {token.start()}"
        if not whole.startswith("<"):
            continue
        closing, tag = token.group(1), token.group(2).lower()
        if tag not in _HTML_TAGS:
            return f'unsupported start tag "{tag}" at byte offset {token.start()}'
        if not closing:
            open_tags.append(tag)
        elif not open_tags or open_tags.pop() != tag:
            return f'unmatched end tag at byte offset {token.start()}, expected "</{tag}>"'
    if open_tags:
        return f'can\'t find end tag corresponding to start tag "{open_tags[-1]}"'
    return None


def _json_param(value: Any) -> Any:
    """Bot.do_api_request may pass JSON strings where PTB's typed methods pass dicts."""
    return json.loads(value) if isinstance(value, str) else value


def _be(data: bytes) -> int:
    return int.from_bytes(data, "big")


def _chat_id_of(params: dict) -> int | None:
    """The chat a call names, if it names one by its id."""
    try:
        return int(params["chat_id"])
    except (KeyError, TypeError, ValueError):
        return None


def _as_int(params: dict, name: str) -> int:
    if name not in params:
        raise ApiError(400, f"Bad Request: {name} is empty")
    try:
        return int(params[name])
    except (TypeError, ValueError):
        description = "chat not found" if name == "chat_id" else f"invalid {name}"
        raise ApiError(400, f"Bad Request: {description}") from None


class FakeTelegram:
    """The Telegram world: users, groups, what the bot sent, and Telegram's rules about it."""

    def __init__(self, bot_username: str = "resistance_test_bot", bot_id: int = 1000, token: str = "1000:FAKE"):
        self.bot_username, self.bot_id, self.token = bot_username, bot_id, token
        self.calls: list[tuple[str, dict]] = []
        # When each call came (time.monotonic()), its method in lower case and the chat it names.
        self.timeline: list[tuple[float, str, int | None]] = []
        # Each 429 answered: from when until when Telegram said to wait (time.monotonic()).
        self.flood_waits: list[tuple[float, float]] = []
        self.callback_answers: dict[str, dict] = {}
        self.commands: dict[str | None, list] = {}
        self._users: dict[int, FakeUser] = {}
        self._groups: dict[int, dict[str, Any]] = {}
        self._upgraded: dict[int, int] = {}  # a basic group's id -> the id of the supergroup it became
        self._without_bot: set[int] = set()  # groups the bot was removed from
        self._outsiders: dict[int, set[int]] = {}  # group -> users who are not its members
        self._muted: set[int] = set()  # groups where an admin took the bot's right to post
        self._open: set[int] = set()
        self._blocked: set[int] = set()
        self._chats: dict[int, dict[int, FakeMessage]] = {}
        self._last_message_id: dict[int, int] = {}
        self._queries: dict[str, str] = {}  # callback query id -> "pending" | "answered" | "expired"
        self._failures: dict[str, list[tuple[int, str, int | None]]] = {}
        self._files: dict[str, FakeDocument] = {}
        self._counter = itertools.count(1)  # query and file ids
        self._update_ids = itertools.count(1)
        self._writes = itertools.count(1)  # FakeMessage.written
        # Every text written, in the order it happened: (chat, message id, "sent" | "edited" | "deleted",
        # the text then). A chat read in this order is what someone watching it saw, edits and all.
        self.history: list[tuple[int, int, str, str | None]] = []
        # Seconds a method takes to answer (its name in lower case): a slow network or a busy Telegram.
        self.delays: dict[str, float] = {}
        # How long the bot's HTTP client waits for an answer unless a call says otherwise (python-telegram-bot's
        # HTTPXRequest waits 5 s); None: for good. A call that takes longer times out for the bot (TimedOut),
        # and Telegram does it all the same: a message sent is posted.
        self.read_timeout: float | None = None
        # Calls the client stopped waiting for, held here: asyncio keeps only a weak reference to a task.
        self.calls_running: set[asyncio.Future] = set()

    def request(self) -> FakeRequest:
        return FakeRequest(self)

    # ----- the world -----

    def add_user(
        self, user_id: int, first_name: str, language_code: str | None = "en", username: str | None = None
    ) -> FakeUser:
        self._users[user_id] = FakeUser(user_id, first_name, language_code, username)
        return self._users[user_id]

    def add_group(
        self, chat_id: int, title: str, admins: Iterable[int] = (), *, basic: bool = False, forum: bool = False
    ) -> None:
        """The first admin is the group's creator, as getChatMember will report. `basic`: a basic
        group (type "group"), which can be upgraded to a supergroup; otherwise a supergroup, with
        forum topics if `forum` (`open_topic`)."""
        if chat_id >= 0:
            raise ValueError(f"group chat ids are negative, got {chat_id}")
        if basic and forum:
            raise ValueError("a basic group has no topics")
        self._groups[chat_id] = {"title": title, "admins": list(admins), "basic": basic}
        self._groups[chat_id] |= {"forum": forum, "topics": set()}

    def open_topic(self, chat_id: int) -> int:
        """A new topic of a forum group; its id is that of the service message that opened it, as in Telegram."""
        if not self._groups[chat_id]["forum"]:
            raise ValueError(f"group {chat_id} has no topics")
        topic = self._store(chat_id, None, from_bot=False).message_id
        self._groups[chat_id]["topics"].add(topic)
        return topic

    def delete_topic(self, chat_id: int, topic: int) -> None:
        """An admin deletes the topic, and every message in it."""
        self._groups[chat_id]["topics"].discard(topic)
        for message in self.messages(chat_id):
            if message.topic == topic:
                self._delete(message)

    def upgrade_group(self, chat_id: int, new_chat_id: int, by_user_id: int | None = None) -> tuple[dict, dict]:
        """The basic group becomes a supergroup with the id `new_chat_id`, as when an admin changes
        some of its settings. Every later Bot API call naming the old id is refused with
        `migrate_to_chat_id` (python-telegram-bot raises ChatMigrated), and nobody can write there
        any more; its messages stay, and their buttons can still be pressed. (Only a basic group can
        be upgraded: one added as a supergroup is taken for the basic group it must have been.)

        Returns the two service messages' updates, not yet handed to any bot: the one in the old group
        (`migrate_to_chat_id`) and the one in the new supergroup (`migrate_from_chat_id`). A test
        delivers them in any order, more than once, or not at all."""
        group = self._groups.get(chat_id)
        if group is None or chat_id in self._upgraded:
            raise LookupError(f"group {chat_id} is not a group that can be upgraded")
        if new_chat_id in self._groups or new_chat_id >= 0:
            raise ValueError(f"{new_chat_id} cannot be the new supergroup's id")
        by_user_id = group["admins"][0] if by_user_id is None else by_user_id
        self._groups[new_chat_id] = {"title": group["title"], "admins": list(group["admins"]), "basic": False}
        self._groups[new_chat_id] |= {"forum": False, "topics": set()}
        group["basic"] = True
        self._upgraded[chat_id] = new_chat_id
        return (
            self._service_message(by_user_id, chat_id, migrate_to_chat_id=new_chat_id),
            self._service_message(by_user_id, new_chat_id, migrate_from_chat_id=chat_id),
        )

    def remove_bot(self, chat_id: int, by_user_id: int | None = None, *, kicked: bool = False) -> dict:
        """Someone removes the bot from the group (`kicked`: bans it too), or deletes the group: until
        `add_bot`, every call naming the group is refused (403, as Telegram does) and nothing said there
        reaches the bot. Returns the `my_chat_member` update (the bot's new status "left", or "kicked"),
        not yet handed to any bot."""
        if chat_id not in self._groups:
            raise LookupError(f"unknown group {chat_id}")
        self._without_bot.add(chat_id)
        old = "restricted" if chat_id in self._muted else "member"
        return self._bot_member_update(chat_id, by_user_id, old, "kicked" if kicked else "left")

    def add_bot(self, chat_id: int, by_user_id: int | None = None) -> dict:
        """Someone adds the bot to the group (again). Returns the service message's update
        (`new_chat_members`), not yet handed to any bot."""
        group = self._groups[chat_id]
        self._without_bot.discard(chat_id)
        by_user_id = group["admins"][0] if by_user_id is None else by_user_id
        return self._service_message(by_user_id, chat_id, new_chat_members=[self._bot_user()])

    def create_group_with_bot(self, chat_id: int, by_user_id: int | None = None) -> dict:
        """Someone creates the group with the bot among its first members: Telegram sends only
        `group_chat_created`, nobody being "added". Returns that update, not yet handed to any bot."""
        group = self._groups[chat_id]
        self._without_bot.discard(chat_id)
        by_user_id = group["admins"][0] if by_user_id is None else by_user_id
        return self._service_message(by_user_id, chat_id, group_chat_created=True)

    def rename_group(self, chat_id: int, title: str, by_user_id: int | None = None) -> dict:
        """An admin renames the group. Returns the service message's update (`new_chat_title`), not
        yet handed to any bot."""
        group = self._groups[chat_id]
        group["title"] = title
        by_user_id = group["admins"][0] if by_user_id is None else by_user_id
        return self._service_message(by_user_id, chat_id, new_chat_title=title)

    def leave_group(self, chat_id: int, user_id: int, by_user_id: int | None = None) -> dict:
        """The user is not (or no longer) a member of the group: getChatMember says "left", and
        nothing they could say there reaches the bot. (Every known user is a member of every group
        until then.) Returns the service message's update (`left_chat_member`), as Telegram posts it
        when a member leaves (`by_user_id`: the admin who removed them), not yet handed to any bot."""
        if chat_id not in self._groups:
            raise LookupError(f"unknown group {chat_id}")
        user = self._user(user_id)
        self._outsiders.setdefault(chat_id, set()).add(user_id)
        return self._service_message(
            user_id if by_user_id is None else by_user_id, chat_id, left_chat_member=user.to_dict()
        )

    def join_group(self, chat_id: int, user_id: int) -> dict:
        """The user (back) in the group, after `leave_group`. Returns the service message's update
        (`new_chat_members`), not yet handed to any bot."""
        self._outsiders.get(chat_id, set()).discard(user_id)
        return self._service_message(user_id, chat_id, new_chat_members=[self._user(user_id).to_dict()])

    def delete(self, chat_id: int, message_id: int) -> None:
        """Someone deletes a message: its sender, an admin, or a bot that tidies commands away."""
        self._delete(self.message(chat_id, message_id))

    def restrict_bot(self, chat_id: int, by_user_id: int | None = None) -> dict:
        """An admin takes the bot's right to post in the supergroup: until `allow_bot`, what it sends
        there is refused (400, as Telegram answers); its messages stay, and their buttons can be
        pressed. Returns the `my_chat_member` update, not yet handed to any bot."""
        self._muted.add(chat_id)
        return self._bot_member_update(chat_id, by_user_id, "member", "restricted")

    def allow_bot(self, chat_id: int, by_user_id: int | None = None) -> dict:
        """An admin gives the bot its right to post back. Returns the `my_chat_member` update."""
        self._muted.discard(chat_id)
        return self._bot_member_update(chat_id, by_user_id, "restricted", "member")

    def block(self, user_id: int) -> None:
        self._user(user_id)
        self._blocked.add(user_id)

    def unblock(self, user_id: int) -> None:
        self._blocked.discard(user_id)

    # ----- what users do -----

    def command(self, user_id: int, chat_id: int, text: str, topic: int | None = None) -> dict:
        """A command the user sends; in a forum group, in `topic` (None: General)."""
        entities = None
        if text.startswith("/"):
            word = text.split(maxsplit=1)[0]
            entities = [{"type": "bot_command", "offset": 0, "length": _utf16_len(word)}]
        return self._user_message(user_id, chat_id, text, entities, topic)

    def text(self, user_id: int, chat_id: int, text: str) -> dict:
        return self._user_message(user_id, chat_id, text, None)

    def press(
        self, user_id: int, chat_id: int, message_id: int, data: str | None = None, *, text: str | None = None
    ) -> dict:
        """Only buttons really on the message can be pressed, so a test cannot press what players can't."""
        if (data is None) == (text is None):
            raise TypeError("press() needs exactly one of data= or text=")
        message = self._visible_message(user_id, chat_id, message_id)
        for button in message.buttons():
            if "callback_data" in button and (button["callback_data"] == data or button["text"] == text):
                return self._callback_query(user_id, message, button["callback_data"])
        wanted = f"callback_data {data!r}" if data is not None else f"label {text!r}"
        listing = "; ".join(f"{b.get('text')!r} -> {b.get('callback_data', b.get('url'))!r}" for b in message.buttons())
        raise LookupError(
            f"message {message_id} in chat {chat_id} has no button with {wanted}; its buttons: {listing or 'none'}"
        )

    def forged_press(self, user_id: int, chat_id: int, message_id: int, data: str) -> dict:
        """A modified client can send any data, but Telegram still only routes queries for real messages."""
        return self._callback_query(user_id, self._visible_message(user_id, chat_id, message_id), data)

    def open_link(self, user_id: int, url: str) -> dict:
        """Raises on a malformed payload: Telegram would not pass it on, so the bot's link is a bug."""
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or parts.netloc.lower() not in ("t.me", "telegram.me"):
            raise ValueError(f"not a t.me link: {url!r}")
        target = parts.path.strip("/")
        if target.lower() != self.bot_username.lower():
            raise ValueError(f"{url!r} links to @{target}, not to this bot @{self.bot_username}")
        payload = parse_qs(parts.query).get("start", [None])[0]
        if payload is not None and not _START_PAYLOAD.fullmatch(payload):
            raise ValueError(f"start payload {payload!r} is not 1-64 characters of A-Z, a-z, 0-9, _ and -")
        return self.command(user_id, user_id, "/start" + (f" {payload}" if payload else ""))

    # ----- introspection -----

    def messages(self, chat_id: int) -> list[FakeMessage]:
        return [m for m in self._chats.get(chat_id, {}).values() if not m.deleted]

    def message(self, chat_id: int, message_id: int) -> FakeMessage:
        message = self._chats.get(chat_id, {}).get(message_id)
        if message is None or message.deleted:
            state = "was deleted" if message else "does not exist"
            raise LookupError(f"message {message_id} in chat {chat_id} {state}")
        return message

    def private_chat_open(self, user_id: int) -> bool:
        return user_id in self._open

    def fail_next(
        self, method: str, *, status: int, description: str, retry_after: int | None = None, times: int = 1
    ) -> None:
        """Queue failures for the next calls of `method`; status 0 stands for a network timeout."""
        self._failures.setdefault(method.lower(), []).extend([(status, description, retry_after)] * times)

    def most_in_window(self, chat_id: int, seconds: float) -> int:
        """The most calls that post or change something in the chat (`POSTING`) that came within any
        `seconds` of each other: Telegram lets a bot post 20 a minute in a group."""
        times = [at for at, method, chat in self.timeline if chat == chat_id and method in POSTING]
        most, first = 0, 0
        for last, at in enumerate(times):
            while at - times[first] >= seconds:
                first += 1
            most = max(most, last - first + 1)
        return most

    def during_flood_waits(self, in_flight: float = 0.05) -> list[tuple[float, str, int | None]]:
        """Calls (but `NOT_HELD`) that came while a 429's retry_after held the bot back, later than
        `in_flight` seconds after the 429 (a call already on its way then is not the bot's fault)."""
        return [
            (at, method, chat)
            for at, method, chat in self.timeline
            if method not in NOT_HELD and any(start + in_flight < at < end for start, end in self.flood_waits)
        ]

    def expire_callback_queries(self) -> None:
        """Telegram forgets queries after some seconds; a bot busy for too long must survive that."""
        self._queries = dict.fromkeys(self._queries, "expired")

    # ----- the HTTP side -----

    async def handle(self, url: str, request_data: RequestData | None) -> tuple[int, bytes]:
        path, _, api_method = urlsplit(url).path.strip("/").rpartition("/")
        params = dict(request_data.parameters) if request_data else {}
        uploads = {}
        if request_data and request_data.contains_files:
            for name, (filename, content, mime_type) in request_data.multipart_data.items():
                data = content if isinstance(content, bytes) else content.read()
                uploads[name] = FakeDocument(filename or name, data, mime_type)
        self.calls.append((api_method, {**params, **uploads}))
        key = api_method.lower()  # Telegram's method names are case-insensitive
        self.timeline.append((time.monotonic(), key, _chat_id_of(params)))
        # Yield like a network round trip would, so concurrent handlers interleave as in production.
        await asyncio.sleep(self.delays.get(key, 0))
        if path != f"bot{self.token}":
            return ApiError(401, "Unauthorized").reply()
        if self._failures.get(key):
            status, description, retry_after = self._failures[key].pop(0)
            if status == 0:
                raise TimedOut(description)
            if status == 429 and retry_after is not None:
                self.flood_waits.append((time.monotonic(), time.monotonic() + retry_after))
            return ApiError(status, description, retry_after).reply()
        upgraded = self._upgraded.get(_chat_id_of(params))
        if upgraded is not None:
            return ApiError(400, UPGRADED, migrate_to_chat_id=upgraded).reply()
        if _chat_id_of(params) in self._without_bot:
            return ApiError(403, "Forbidden: bot was kicked from the group chat").reply()
        if _chat_id_of(params) in self._muted and key in ("sendmessage", "senddocument", "sendphoto"):
            what = {"sendmessage": "text messages", "senddocument": "documents", "sendphoto": "photos"}[key]
            return ApiError(400, f"Bad Request: not enough rights to send {what} to the chat").reply()
        if key == "getupdates":
            # Returning at once would let a polling Application spin and starve the event loop.
            await asyncio.sleep(min(float(params.get("timeout") or 0), 0.05))
        handler = getattr(self, f"_api_{key}", None)
        if key in _CONSTANT_RESULTS:
            result: Any = _CONSTANT_RESULTS[key]
        elif handler is None:
            return ApiError(404, "Not Found").reply()
        else:
            try:
                result = handler(params, uploads)
            except ApiError as error:
                return error.reply()
        return 200, json.dumps({"ok": True, "result": result}).encode()

    # ----- Bot API methods -----

    def _api_getme(self, p: dict, files: dict) -> dict:
        off = ("can_read_all_group_messages", "supports_inline_queries", "can_connect_to_business", "has_main_web_app")
        return self._bot_user() | {"can_join_groups": True} | dict.fromkeys(off, False)

    def _api_sendmessage(self, p: dict, files: dict) -> dict:
        chat_id = self._writable_chat(p)
        text = str(p.get("text", ""))
        self._check_text(text, p.get("parse_mode"), MAX_TEXT, "message text is empty", "message is too long")
        self._check_replied(chat_id, p)
        topic = self._topic(chat_id, p.get("message_thread_id"))
        replied = _json_param(p.get("reply_parameters")) or {}
        reply_to = int(replied["message_id"]) if "message_id" in replied else None
        return self._to_dict(self._store(chat_id, text, self._keyboard(p), topic=topic, reply_to=reply_to))

    def _api_senddocument(self, p: dict, files: dict) -> dict:
        chat_id = self._writable_chat(p)
        document = files.get("document") or self._files.get(str(p.get("document")))
        if document is None:
            raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        if not document.data:
            raise ApiError(400, "Bad Request: file must be non-empty")
        caption = p.get("caption")
        if caption is not None and (p.get("parse_mode") or "").lower() == "html" and _html_fault(caption):
            raise ApiError(400, f"Bad Request: can't parse entities: {_html_fault(caption)}")
        if caption is not None and _visible_length(caption, p.get("parse_mode")) > MAX_CAPTION:
            raise ApiError(400, "Bad Request: message caption is too long")
        markup = self._keyboard(p)
        self._check_replied(chat_id, p)
        topic = self._topic(chat_id, p.get("message_thread_id"))
        if not document.file_id:
            n = next(self._counter)
            document = FakeDocument(document.filename, document.data, document.mime_type, f"FAKEDOC{n}")
            self._files[document.file_id] = document
        return self._to_dict(self._store(chat_id, caption, markup, document=document, topic=topic))

    def _api_sendphoto(self, p: dict, files: dict) -> dict:
        chat_id = self._writable_chat(p)
        photo = files.get("photo") or self._files.get(str(p.get("photo")))
        if photo is None:
            raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        if not photo.data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")):
            raise ApiError(400, "Bad Request: IMAGE_PROCESS_FAILED")
        if len(photo.data) > 10 * 1024 * 1024:
            raise ApiError(400, "Bad Request: PHOTO_SAVE_FILE_INVALID")
        caption = p.get("caption")
        if caption is not None and _visible_length(caption, p.get("parse_mode")) > MAX_CAPTION:
            raise ApiError(400, "Bad Request: message caption is too long")
        self._check_replied(chat_id, p)
        topic = self._topic(chat_id, p.get("message_thread_id"))
        if not photo.file_id:
            n = next(self._counter)
            photo = FakeDocument(photo.filename, photo.data, "image/png", f"FAKEPHOTO{n}")
            self._files[photo.file_id] = photo
        return self._to_dict(self._store(chat_id, caption, self._keyboard(p), photo=photo, topic=topic))

    def _api_editmessagetext(self, p: dict, files: dict) -> dict:
        message = self._editable(p)
        if message.document or message.photo:
            raise ApiError(400, "Bad Request: there is no text in the message to edit")
        text = str(p.get("text", ""))
        self._check_text(text, p.get("parse_mode"), MAX_TEXT, "message text is empty", "message is too long")
        return self._edit(message, text, self._keyboard(p))  # no reply_markup: Telegram drops the keyboard

    def _api_editmessagereplymarkup(self, p: dict, files: dict) -> dict:
        message = self._editable(p)
        return self._edit(message, message.text, self._keyboard(p))

    def _api_deletemessage(self, p: dict, files: dict) -> bool:
        chat_id, message_id = _as_int(p, "chat_id"), _as_int(p, "message_id")
        message = self._chats.get(chat_id, {}).get(message_id)
        if message is None or message.deleted:
            raise ApiError(400, "Bad Request: message to delete not found")
        if chat_id < 0 and not message.from_bot and self.bot_id not in self._groups[chat_id]["admins"]:
            raise ApiError(400, "Bad Request: message can't be deleted")
        self._delete(message)
        return True

    def _api_answercallbackquery(self, p: dict, files: dict) -> bool:
        query_id = str(p.get("callback_query_id"))
        if self._queries.get(query_id) != "pending":
            raise ApiError(400, QUERY_TOO_OLD)
        # Counted as message texts are, in UTF-16 code units: an emoji takes two of the 200.
        if _utf16_len(str(p.get("text") or "")) > MAX_ANSWER_TEXT:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        self._queries[query_id] = "answered"
        self.callback_answers[query_id] = {"text": p.get("text"), "show_alert": bool(p.get("show_alert", False))}
        return True

    def _api_setmycommands(self, p: dict, files: dict) -> bool:
        """Stored per language only: the bot sets no per-scope command lists."""
        commands = [dict(c) for c in _json_param(p.get("commands", []))]
        if any(not _COMMAND_NAME.fullmatch(str(c.get("command", ""))) for c in commands):
            raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        self.commands[p.get("language_code") or None] = commands
        return True

    def _api_getmycommands(self, p: dict, files: dict) -> list:
        return self.commands.get(p.get("language_code") or None, [])

    def _api_deletemycommands(self, p: dict, files: dict) -> bool:
        self.commands.pop(p.get("language_code") or None, None)
        return True

    def _api_getchat(self, p: dict, files: dict) -> dict:
        chat_id = self._known_chat(p)
        gifts = dict.fromkeys(
            ("unlimited_gifts", "limited_gifts", "unique_gifts", "premium_subscription", "gifts_from_channels"), False
        )
        return {**self._chat(chat_id), "accent_color_id": 0, "max_reaction_count": 11, "accepted_gift_types": gifts}

    def _api_getchatmember(self, p: dict, files: dict) -> dict:
        chat_id, user_id = self._known_chat(p), _as_int(p, "user_id")
        if user_id == self.bot_id:
            user = self._bot_user()
        elif user_id in self._users:
            user = self._users[user_id].to_dict()
        else:
            raise ApiError(400, "Bad Request: user not found")
        admins = self._groups[chat_id]["admins"] if chat_id < 0 else []
        if user_id in self._outsiders.get(chat_id, ()):
            return {"status": "left", "user": user}
        if admins[:1] == [user_id]:
            return {"status": "creator", "user": user, "is_anonymous": False}
        if user_id in admins:
            rights = ("can_manage_chat", "can_delete_messages", "can_manage_video_chats", "can_restrict_members")
            rights += ("can_promote_members", "can_change_info", "can_invite_users", "can_pin_messages")
            rights += ("can_post_stories", "can_edit_stories", "can_delete_stories")
            member = {"status": "administrator", "user": user, "can_be_edited": False, "is_anonymous": False}
            return member | dict.fromkeys(rights, True)
        return {"status": "member", "user": user}

    def _api_sendchataction(self, p: dict, files: dict) -> bool:
        self._writable_chat(p)
        return True

    # ----- helpers -----

    def _user(self, user_id: int) -> FakeUser:
        if user_id not in self._users:
            raise LookupError(f"unknown user {user_id}: call add_user({user_id}, ...) first")
        return self._users[user_id]

    def _bot_user(self) -> dict[str, Any]:
        return {"id": self.bot_id, "is_bot": True, "first_name": self.bot_username, "username": self.bot_username}

    def _chat(self, chat_id: int) -> dict[str, Any]:
        if chat_id < 0:
            group = self._groups[chat_id]
            chat = {"id": chat_id, "type": "group" if group["basic"] else "supergroup", "title": group["title"]}
            return chat | ({"is_forum": True} if group["forum"] else {})
        user = self._users[chat_id]
        chat = {"id": chat_id, "type": "private", "first_name": user.first_name}
        return chat | ({"username": user.username} if user.username else {})

    def _known_chat(self, p: dict) -> int:
        chat_id = _as_int(p, "chat_id")
        if chat_id not in (self._groups if chat_id < 0 else self._users):
            raise ApiError(400, "Bad Request: chat not found")
        return chat_id

    def _topic(self, chat_id: int, topic: Any) -> int | None:
        """The forum topic a message goes to: None for General (or a chat without topics)."""
        if topic is None:
            return None
        topic = int(topic)
        if chat_id > 0 or topic not in self._groups[chat_id]["topics"]:
            raise ApiError(400, "Bad Request: message thread not found")
        return topic

    def _writable_chat(self, p: dict) -> int:
        """Bots may only speak first in groups; a private chat needs the user to have started it."""
        chat_id = self._known_chat(p)
        if chat_id in self._blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        if chat_id > 0 and chat_id not in self._open:
            raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        return chat_id

    def _check_text(self, text: str, parse_mode: str | None, limit: int, empty: str, too_long: str) -> None:
        fault = _html_fault(text) if (parse_mode or "").lower() == "html" else None
        if fault is not None:
            raise ApiError(400, f"Bad Request: can't parse entities: {fault}")
        length = _visible_length(text, parse_mode)
        if length == 0:
            raise ApiError(400, f"Bad Request: {empty}")
        if length > limit:
            raise ApiError(400, f"Bad Request: {too_long}")

    def _check_replied(self, chat_id: int, p: dict) -> None:
        """A reply needs the message it answers, unless it may go without one."""
        replied = _json_param(p.get("reply_parameters"))
        if not replied:
            return
        message = self._chats.get(int(replied.get("chat_id", chat_id)), {}).get(int(replied["message_id"]))
        if (message is None or message.deleted) and not replied.get("allow_sending_without_reply"):
            raise ApiError(400, "Bad Request: message to be replied not found")

    def _keyboard(self, p: dict) -> list[list[dict]] | None:
        """Only inline keyboards belong to a message; reply keyboards live on the user's client."""
        markup = _json_param(p.get("reply_markup"))
        if not markup or "inline_keyboard" not in markup:
            return None
        rows = [[dict(button) for button in row] for row in markup["inline_keyboard"]]
        for button in (b for row in rows for b in row):
            if "callback_data" in button:
                if not 1 <= len(str(button["callback_data"]).encode()) <= MAX_CALLBACK_DATA:
                    raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
            elif len(button) < 2 or not button.get("text"):
                raise ApiError(400, "Bad Request: can't parse inline keyboard button: " + _TEXT_BUTTON)
        return rows

    def _store(self, chat_id: int, text: str | None, markup: list | None = None, **fields: Any) -> FakeMessage:
        message_id = self._last_message_id[chat_id] = self._last_message_id.get(chat_id, 0) + 1
        message = FakeMessage(
            chat_id, message_id, text, markup, date=int(time.time()), written=next(self._writes), **fields
        )
        self._chats.setdefault(chat_id, {})[message_id] = message
        self.history.append((chat_id, message_id, "sent", text))
        return message

    def _delete(self, message: FakeMessage) -> None:
        message.deleted = True
        self.history.append((message.chat_id, message.message_id, "deleted", message.text))

    def _editable(self, p: dict) -> FakeMessage:
        if "inline_message_id" in p:
            raise ApiError(400, "Bad Request: MESSAGE_ID_INVALID")  # the bot sends no inline messages
        message = self._chats.get(_as_int(p, "chat_id"), {}).get(_as_int(p, "message_id"))
        if message is None or message.deleted:
            raise ApiError(400, "Bad Request: message to edit not found")
        if not message.from_bot:
            raise ApiError(400, "Bad Request: message can't be edited")
        return message

    def _edit(self, message: FakeMessage, text: str | None, markup: list | None) -> dict:
        if text == message.text and markup == message.reply_markup:
            raise ApiError(400, NOT_MODIFIED)
        if text != message.text:
            message.written = next(self._writes)
            self.history.append((message.chat_id, message.message_id, "edited", text))
        message.text, message.reply_markup = text, markup
        message.edits += 1
        message.edit_date = int(time.time())
        return self._to_dict(message)

    def _to_dict(self, m: FakeMessage) -> dict[str, Any]:
        """The message as Telegram serialises it, in API replies and inside callback queries alike."""
        sender = self._bot_user() if m.from_bot else self._users[m.sender_id].to_dict()
        d: dict[str, Any] = {"message_id": m.message_id, "date": m.date, "chat": self._chat(m.chat_id), "from": sender}
        if m.edit_date:
            d["edit_date"] = m.edit_date
        if m.document:
            doc = m.document
            d["document"] = {
                "file_id": doc.file_id,
                "file_unique_id": doc.file_id.lower(),
                "file_name": doc.filename,
                "mime_type": doc.mime_type,
                "file_size": len(doc.data),
            }
            if m.text:
                d["caption"] = m.text
        elif m.photo:
            data = m.photo.data  # a PNG's size is in its header; a JPEG's is taken to be 1280 x 720
            width, height = (_be(data[16:20]), _be(data[20:24])) if data.startswith(b"\x89PNG") else (1280, 720)
            size = {"file_id": m.photo.file_id, "file_unique_id": m.photo.file_id.lower(), "file_size": len(data)}
            d["photo"] = [size | {"width": width, "height": height}]
            if m.text:
                d["caption"] = m.text
        elif m.text is not None:
            d["text"] = m.text
        if m.entities:
            d["entities"] = m.entities
        if m.topic is not None:
            d |= {"message_thread_id": m.topic, "is_topic_message": True}
        if m.reply_markup:
            d["reply_markup"] = {"inline_keyboard": m.reply_markup}
        return d

    def _user_message(
        self, user_id: int, chat_id: int, text: str, entities: list | None, topic: int | None = None
    ) -> dict:
        self._user(user_id)
        if chat_id == user_id:
            # Writing to a bot you blocked requires unblocking it first, so the client does both.
            self._open.add(user_id)
            self._blocked.discard(user_id)
        elif chat_id > 0:
            raise ValueError(f"user {user_id} cannot write in the private chat of user {chat_id}")
        elif chat_id not in self._groups:
            raise LookupError(f"unknown group {chat_id}: call add_group({chat_id}, ...) first")
        elif chat_id in self._upgraded:
            raise ValueError(f"group {chat_id} became the supergroup {self._upgraded[chat_id]}: nobody writes there")
        elif chat_id in self._without_bot:
            raise ValueError(f"the bot is not in group {chat_id}: nothing said there reaches it")
        elif user_id in self._outsiders.get(chat_id, ()):
            raise ValueError(f"user {user_id} is not a member of group {chat_id}: they cannot write there")
        topic = self._topic(chat_id, topic)
        message = self._store(chat_id, text, from_bot=False, sender_id=user_id, entities=entities, topic=topic)
        return {"update_id": next(self._update_ids), "message": self._to_dict(message)}

    def _bot_member_update(self, chat_id: int, by_user_id: int | None, old: str, new: str) -> dict:
        group = self._groups[chat_id]
        by_user_id = group["admins"][0] if by_user_id is None else by_user_id

        def member(status: str) -> dict[str, Any]:
            if status == "kicked":
                return {"status": status, "user": self._bot_user(), "until_date": 0}
            if status != "restricted":
                return {"status": status, "user": self._bot_user()}
            rights = ("can_send_messages", "can_send_audios", "can_send_documents", "can_send_photos")
            rights += ("can_send_videos", "can_send_video_notes", "can_send_voice_notes", "can_send_polls")
            rights += ("can_send_other_messages", "can_add_web_page_previews", "can_change_info")
            rights += ("can_invite_users", "can_pin_messages", "can_manage_topics", "can_edit_tag")
            rights += ("can_react_to_messages",)
            return {"status": status, "user": self._bot_user(), "is_member": True, "until_date": 0} | dict.fromkeys(
                rights, False
            )

        change = {
            "chat": self._chat(chat_id),
            "from": self._users[by_user_id].to_dict(),
            "date": int(time.time()),
            "old_chat_member": member(old),
            "new_chat_member": member(new),
        }
        return {"update_id": next(self._update_ids), "my_chat_member": change}

    def _service_message(self, user_id: int, chat_id: int, **event: Any) -> dict:
        message = self._store(chat_id, None, from_bot=False, sender_id=user_id)
        return {"update_id": next(self._update_ids), "message": self._to_dict(message) | event}

    def _visible_message(self, user_id: int, chat_id: int, message_id: int) -> FakeMessage:
        self._user(user_id)
        if chat_id > 0 and chat_id != user_id:
            raise ValueError(f"user {user_id} cannot see the private chat of user {chat_id}")
        message = self.message(chat_id, message_id)
        if not message.from_bot:
            raise LookupError(f"message {message_id} in chat {chat_id} was not sent by the bot")
        return message

    def _callback_query(self, user_id: int, message: FakeMessage, data: str) -> dict:
        query_id = f"{self.bot_id}{next(self._counter):08d}"
        self._queries[query_id] = "pending"
        query = {
            "id": query_id,
            "from": self._users[user_id].to_dict(),
            "message": self._to_dict(message),
            "chat_instance": f"instance{message.chat_id}",
            "data": data,
        }
        return {"update_id": next(self._update_ids), "callback_query": query}
