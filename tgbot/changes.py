"""What a move returns: the new table, the messages it causes, and the answer to whoever acted.

Kept apart from the moves themselves so that storage depends on these types alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tgbot.i18n import t
from tgbot.outgoing import Keyboard, Outgoing, in_topic
from tgbot.table import Table


@dataclass(frozen=True)
class Reply:
    """What the person who acted is told at once, privately where possible.

    `text` is HTML like every message (names escaped); a callback answer, which Telegram
    shows as plain text, gets it with the markup taken out.
    """

    text: str
    alert: bool = False
    buttons: Keyboard = ()
    # The game whose queued messages go out once this answer has been given, so the person
    # who pressed is never kept waiting behind the group's messages.
    deliver_for: str | None = None
    # A question the press answered for good (/cancel's): what its message reads now, without its
    # buttons, so that nobody presses an answered question again. Empty: the message stays as it is.
    settles: str = ""


class Refused(Exception):
    """A press or command the stored game does not allow: nothing is stored, the presser is told why."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.text)
        self.reply = reply


def refuse(lang: str, message: str, alert: bool = False, **values: object) -> Refused:
    return Refused(Reply(t(lang, message, **values), alert=alert))


@dataclass(frozen=True)
class Change:
    table: Table
    outgoing: list[Outgoing] = field(default_factory=list)
    reply: Reply | None = None

    def in_topic(self) -> Change:
        """The change with its messages to the group in the table's forum topic (`Table.topic`):
        moves address the group by its chat alone."""
        table = self.table
        if table.topic is None:
            return self
        return replace(self, outgoing=[in_topic(item, table.chat_id, table.topic) for item in self.outgoing])
