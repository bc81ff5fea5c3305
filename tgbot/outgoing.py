"""Messages waiting to be sent, as plain data, so they can wait in Redis beside the game.

A change to a game and the messages it causes are stored together; whichever process
drains the game's outbox sends them, in order (see `tgbot.outbox`).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Button:
    text: str
    data: str | None = None  # callback data
    url: str | None = None  # a link button instead


Keyboard = tuple[tuple[Button, ...], ...]


@dataclass(frozen=True)
class Send:
    """Send a new message. `key` names it so a later `Edit` can find it (blank: never edited)."""

    chat_id: int
    text: str
    buttons: Keyboard = ()
    key: str = ""
    protected: bool = False  # Telegram's protect_content: it cannot be forwarded or saved
    # Posted in the group instead, if the player's private chat is closed or blocked:
    notice_chat_id: int | None = None
    notice_text: str = ""
    notice_buttons: Keyboard = ()
    topic: int | None = None  # the group's forum topic, for whatever of this goes to the group: `in_topic`
    # A group message that reaches the group at most once per key, as a private message of a key
    # always does (`once_only`): the end of a game told again when the bot is back in the group.
    once: bool = False
    # Another message of the game it points to, by key: sent as a reply to it in the same chat, or with a
    # button `link_text` that opens it in the group (a supergroup's messages have links; a basic
    # group's have none, and the button is left out).
    link_key: str = ""
    link_text: str = ""


@dataclass(frozen=True)
class Edit:
    chat_id: int
    key: str
    text: str
    buttons: Keyboard = ()
    protected: bool = False  # if the message is gone and must be posted again
    topic: int | None = None  # where it is posted again, in the group
    # A key the outbox remembers the edited message under once Telegram took the edit (or found the
    # message reading so already): whether the group saw it, asked later (the game's end).
    receipt: str = ""

    def posted_anew(self, chat_id: int) -> Send:
        """The message as this edit makes it, posted again in `chat_id` (its old one is gone)."""
        return Send(chat_id, self.text, self.buttons, key=self.key, protected=self.protected, topic=self.topic)


@dataclass(frozen=True)
class Document:
    chat_id: int
    filename: str
    content: str
    caption: str = ""
    refused_text: str = ""  # sent instead if Telegram refuses the file
    topic: int | None = None


@dataclass(frozen=True)
class Photo:
    """A picture (the end of a game: `tgbot.render.picture`), its PNG's bytes in base64 so that it waits
    in the outbox as text. One Telegram refuses is left out: nothing else waits for it."""

    chat_id: int
    filename: str
    content_b64: str
    caption: str = ""
    topic: int | None = None
    key: str = ""  # names the posted photo, as a Send's key does (blank: nothing refers to it)

    @classmethod
    def of_png(cls, chat_id: int, filename: str, png: bytes, caption: str = "", key: str = "") -> Photo:
        return cls(chat_id, filename, base64.b64encode(png).decode("ascii"), caption, key=key)

    @property
    def content(self) -> bytes:
        return base64.b64decode(self.content_b64)


@dataclass(frozen=True)
class Delete:
    """Take a message of the game back, by key (a reminder once its step ended). Telegram lets a bot
    delete its messages for 48 hours; an older one is edited to `fallback_text` instead."""

    chat_id: int
    key: str
    fallback_text: str = ""


Outgoing = Send | Edit | Document | Photo | Delete


def in_topic(item: Outgoing, group_id: int, topic: int | None) -> Outgoing:
    """The item, with whatever of it goes to the group `group_id` (the message itself, or the notice
    that a player cannot be reached) posted in the group's forum `topic`, not in its General topic."""
    if topic is None or isinstance(item, Delete) or item.topic is not None:
        return item
    to_group = item.chat_id == group_id or (isinstance(item, Send) and item.notice_chat_id == group_id)
    return replace(item, topic=topic) if to_group else item


def once_only(item: Outgoing) -> bool:
    """A private message with a key reaches its player at most once per key (their role, a card
    prompt, the leader's keyboard), whoever queued it and however often, and so does a group message
    marked `once`: the outbox drops one whose key already names a delivered message."""
    return isinstance(item, Send) and bool(item.key) and (item.chat_id > 0 or item.once)


def _keyboard_to_data(buttons: Keyboard) -> list:
    return [[{k: v for k, v in vars(b).items() if v is not None} for b in row] for row in buttons]


def _keyboard_from_data(rows: list) -> Keyboard:
    return tuple(tuple(Button(**b) for b in row) for row in rows)


def dumps(item: Outgoing) -> str:
    data = dict(vars(item))
    for name in ("buttons", "notice_buttons"):
        if name in data:
            data[name] = _keyboard_to_data(data[name])
    if data.get("topic") is None:
        data.pop("topic", None)  # most groups have no topics: their items stay as they were
    # Left out when unused, so that items read the same as before these fields were known.
    if not data.get("once", True):
        del data["once"]
    for name in ("receipt", "link_key", "link_text", *(("caption", "key") if isinstance(item, Photo) else ())):
        if data.get(name) == "":
            del data[name]
    data["kind"] = type(item).__name__
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def loads(text: str | bytes) -> Outgoing:
    data = json.loads(text)
    kind = {"Send": Send, "Edit": Edit, "Document": Document, "Photo": Photo, "Delete": Delete}[data.pop("kind")]
    for name in ("buttons", "notice_buttons"):
        if name in data:
            data[name] = _keyboard_from_data(data[name])
    return kind(**data)
