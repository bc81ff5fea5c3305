"""Button data: every kind of button described once, as a prefix and its fields.

Any client can send any callback data, so decoding only proves the data is well formed
(each kind's `pattern` is also what routes it to its handler). Whether a press is allowed
is decided against the stored game: game presses carry the engine's ballot, the one stamp
that tells a button of the decision open now from a stale one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from functools import cached_property
from typing import Any

from tgbot.i18n import LANGUAGES

MAX_CALLBACK_BYTES = 64


class BadCallback(ValueError):
    """Callback data that no button of this bot ever carried."""


@dataclass(frozen=True)
class Field:
    """One part of a button's data: what it may look like, and how it reads and writes."""

    pattern: str
    read: Callable[[str], Any]
    write: Callable[[Any], str] = str


def whole_number(most_digits: int) -> str:
    """A number as `str` writes it: ASCII digits without a leading zero (`\\d` also matches other
    scripts' digits, which `int` reads, so data no button carried would count as a button's)."""
    return f"(?:0|[1-9][0-9]{{0,{most_digits - 1}}})"


SEAT = whole_number(2)
GAME_ID = Field(r"[0-9a-f]{10}", str)
NUMBER = Field(whole_number(6), int)
CHAT_ID = Field(f"-?{whole_number(16)}", int)
MISSION = Field(r"[1-5]", int)


def flag(yes: str, no: str) -> Field:
    return Field(f"[{yes}{no}]", lambda text: text == yes, lambda value: yes if value else no)


def choice(codes: dict[str, str]) -> Field:
    """A value from a fixed set, written as its short code."""
    names = {code: name for name, code in codes.items()}
    return Field("|".join(map(re.escape, names)), names.__getitem__, codes.__getitem__)


# pass; use the card asked about (sl Strong Leader, nc No Confidence); a seat for a card that
# names one (sp spotlight, wa watch, oh overhear, ou open up, dt deal the chosen card to);
# two seats to watch; a card to deal next (dc), or back to the cards (db); a card to take from a seat (tk).
PLOT_CARD_CODE = r"sl|nc|ke|is|om|tr|oc|ou|ec"
PLOT_CHOICE = Field(
    rf"pass|sl|nc|db|(?:sp|wa|oh|ou|dt){SEAT}|wa{SEAT}-{SEAT}|dc(?:{PLOT_CARD_CODE})|tk(?:{PLOT_CARD_CODE})-{SEAT}",
    str,
)

SEAT_OR_DONE = Field(
    f"{SEAT}|ok", lambda text: None if text == "ok" else int(text), lambda v: "ok" if v is None else str(v)
)


# ---------------------------------------------------------------- the presses


@dataclass(frozen=True)
class VotePress:
    game_id: str
    ballot: int
    approve: bool


@dataclass(frozen=True)
class CardPress:
    game_id: str
    ballot: int
    fail: bool


@dataclass(frozen=True)
class TeamPress:
    game_id: str
    ballot: int
    seat: int | None  # None: propose the ticked team


@dataclass(frozen=True)
class MissionPress:
    game_id: str
    ballot: int
    mission: int


@dataclass(frozen=True)
class PlotPress:
    """A choice on a private Plot card keyboard: `choice` is one of `PLOT_CHOICE`'s forms, read
    into an engine action (or a step of the deal) by `tgbot.moves.plot`."""

    game_id: str
    ballot: int
    choice: str


@dataclass(frozen=True)
class WaitingPress:
    """ "Who are we waiting for?" under the board: answered to the presser alone."""

    game_id: str


@dataclass(frozen=True)
class CancelPress:
    game_id: str
    confirm: bool


@dataclass(frozen=True)
class ComputerPress:
    """Add a computer player to the lobby, or remove the one seated last."""

    game_id: str
    add: bool


@dataclass(frozen=True)
class HintsPress:
    game_id: str


@dataclass(frozen=True)
class RematchPress:
    game_id: str  # the finished game whose players play again


@dataclass(frozen=True)
class SettingsPress:
    chat_id: int  # the group whose settings the keyboard shows
    setting: str  # a name from tgbot.settings.CHOICES, or "done"
    shown: int  # the setting's `GroupSettings.position` on the keyboard pressed (0 for "done")


@dataclass(frozen=True)
class LanguagePress:
    chat_id: int
    language: str


@dataclass(frozen=True)
class HistoryPress:
    """A /history button: the record of one of the group's remembered games."""

    game_id: str


@dataclass(frozen=True)
class ForgetPress:
    """/forgetme's confirmation, in the private chat of the person to forget."""

    confirm: bool


# Short codes keep settings buttons well inside 64 bytes.
SETTING_CODES = {
    "targeting": "tg",
    "blind_spies": "bs",
    "plot_cards": "pc",
    "hints": "hi",
    "missing_vote_approves": "mv",
    "proposal_seconds": "pt",
    "vote_seconds": "vt",
    "mission_seconds": "mt",
    "lobby_seconds": "lt",
    "pace": "pa",
    "slow_hours": "sh",
    "quiet_hours": "qh",
    "computer_level": "cl",
    "computer_takeover": "co",
    "language": "la",
    "done": "ok",
}
LANGUAGE_CODES = {code: code for code in LANGUAGES}


@dataclass(frozen=True)
class ButtonKind:
    prefix: str
    press: type
    fields: tuple[Field, ...]

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        parts = "".join(f":({field.pattern})" for field in self.fields)
        # \Z, not $: a trailing newline is not part of any button.
        return re.compile(f"^{re.escape(self.prefix)}{parts}\\Z")

    def encode(self, press: Any) -> str:
        values = [getattr(press, f.name) for f in dataclass_fields(press)]  # every field is a plain value
        return ":".join([self.prefix, *(field.write(value) for field, value in zip(self.fields, values, strict=True))])

    def decode(self, data: str) -> Any:
        match = self.pattern.fullmatch(data)
        if match is None:
            raise BadCallback("malformed button")
        return self.press(*(field.read(text) for field, text in zip(self.fields, match.groups(), strict=True)))


KINDS = (
    ButtonKind("v", VotePress, (GAME_ID, NUMBER, flag("a", "r"))),
    ButtonKind("c", CardPress, (GAME_ID, NUMBER, flag("f", "s"))),
    ButtonKind("t", TeamPress, (GAME_ID, NUMBER, SEAT_OR_DONE)),
    ButtonKind("m", MissionPress, (GAME_ID, NUMBER, MISSION)),
    ButtonKind("p", PlotPress, (GAME_ID, NUMBER, PLOT_CHOICE)),
    ButtonKind("w", WaitingPress, (GAME_ID,)),
    ButtonKind("x", CancelPress, (GAME_ID, flag("y", "n"))),
    ButtonKind("b", ComputerPress, (GAME_ID, flag("a", "r"))),
    ButtonKind("h", HintsPress, (GAME_ID,)),
    ButtonKind("r", RematchPress, (GAME_ID,)),
    ButtonKind("s", SettingsPress, (CHAT_ID, choice(SETTING_CODES), NUMBER)),
    ButtonKind("l", LanguagePress, (CHAT_ID, choice(LANGUAGE_CODES))),
    ButtonKind("hr", HistoryPress, (GAME_ID,)),
    ButtonKind("fm", ForgetPress, (flag("y", "n"),)),
)
_BY_PRESS = {kind.press: kind for kind in KINDS}
_BY_PREFIX = {kind.prefix: kind for kind in KINDS}

GamePress = VotePress | CardPress | TeamPress | MissionPress | PlotPress | CancelPress | ComputerPress


def kind_of(press_type: type) -> ButtonKind:
    return _BY_PRESS[press_type]


def encode(press: Any) -> str:
    kind = _BY_PRESS.get(type(press))
    if kind is None:
        raise TypeError(f"not a press: {press!r}")
    data = kind.encode(press)
    if len(data.encode()) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data longer than {MAX_CALLBACK_BYTES} bytes: {data}")
    return data


def decode(data: str | None) -> Any:
    if not data or len(data.encode()) > MAX_CALLBACK_BYTES:
        raise BadCallback("empty or too long")
    kind = _BY_PREFIX.get(data.split(":", 1)[0])
    if kind is None:
        raise BadCallback("unknown button")
    return kind.decode(data)
