"""Button data: what a press says it is for, encoded in Telegram's 64 bytes and parsed strictly.

Any client can send any callback data, so decoding only proves the data is well formed.
Whether the press is allowed is decided against the stored game (`tgbot.service`).
Every press names its game and the round or game version its button was made for, so a
button from an earlier round can be recognised as stale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CALLBACK_BYTES = 64
_GAME_ID = r"[0-9a-f]{10}"
_NUMBER = r"\d{1,6}"
_CHAT_ID = r"-?\d{1,16}"


class BadCallback(ValueError):
    """Callback data that no button of this bot ever carried."""


@dataclass(frozen=True)
class VotePress:
    game_id: str
    round_index: int  # position of the mission round in the game
    proposal_number: int  # 1-based within the round
    approve: bool


@dataclass(frozen=True)
class CardPress:
    game_id: str
    round_index: int
    fail: bool


@dataclass(frozen=True)
class TeamPress:
    game_id: str
    version: int  # the engine version the leader's keyboard was made for
    seat: int | None  # None: propose the ticked team


@dataclass(frozen=True)
class MissionPress:
    game_id: str
    version: int
    mission: int


@dataclass(frozen=True)
class CancelPress:
    game_id: str
    confirm: bool


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


@dataclass(frozen=True)
class LanguagePress:
    chat_id: int
    language: str


Press = VotePress | CardPress | TeamPress | MissionPress | CancelPress
GroupPress = SettingsPress | LanguagePress

# Short codes keep settings buttons well inside 64 bytes.
SETTING_CODES = {
    "targeting": "tg",
    "blind_spies": "bs",
    "hints": "hi",
    "missing_vote_approves": "mv",
    "proposal_seconds": "pt",
    "vote_seconds": "vt",
    "mission_seconds": "mt",
    "lobby_seconds": "lt",
    "language": "la",
    "done": "ok",
}
_SETTING_NAMES = {code: name for name, code in SETTING_CODES.items()}

_PATTERNS = {
    "v": re.compile(rf"v:({_GAME_ID}):({_NUMBER}):({_NUMBER}):([ar])"),
    "c": re.compile(rf"c:({_GAME_ID}):({_NUMBER}):([sf])"),
    "t": re.compile(rf"t:({_GAME_ID}):({_NUMBER}):({_NUMBER}|ok)"),
    "m": re.compile(rf"m:({_GAME_ID}):({_NUMBER}):([1-5])"),
    "x": re.compile(rf"x:({_GAME_ID}):([yn])"),
    "h": re.compile(rf"h:({_GAME_ID})"),
    "r": re.compile(rf"r:({_GAME_ID})"),
    "s": re.compile(rf"s:({_CHAT_ID}):({'|'.join(_SETTING_NAMES)})"),
    "l": re.compile(rf"l:({_CHAT_ID}):(en|es|ru|bg|eo)"),
}


def encode(press: Press) -> str:
    if isinstance(press, VotePress):
        data = f"v:{press.game_id}:{press.round_index}:{press.proposal_number}:{'a' if press.approve else 'r'}"
    elif isinstance(press, CardPress):
        data = f"c:{press.game_id}:{press.round_index}:{'f' if press.fail else 's'}"
    elif isinstance(press, TeamPress):
        data = f"t:{press.game_id}:{press.version}:{'ok' if press.seat is None else press.seat}"
    elif isinstance(press, MissionPress):
        data = f"m:{press.game_id}:{press.version}:{press.mission}"
    elif isinstance(press, CancelPress):
        data = f"x:{press.game_id}:{'y' if press.confirm else 'n'}"
    elif isinstance(press, HintsPress):
        data = f"h:{press.game_id}"
    elif isinstance(press, RematchPress):
        data = f"r:{press.game_id}"
    elif isinstance(press, SettingsPress):
        data = f"s:{press.chat_id}:{SETTING_CODES[press.setting]}"
    elif isinstance(press, LanguagePress):
        data = f"l:{press.chat_id}:{press.language}"
    else:
        raise TypeError(f"not a press: {press!r}")
    if len(data.encode()) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data longer than {MAX_CALLBACK_BYTES} bytes: {data}")
    return data


def decode(data: str | None) -> Press | GroupPress | HintsPress | RematchPress:
    if not data or len(data.encode()) > MAX_CALLBACK_BYTES:
        raise BadCallback("empty or too long")
    pattern = _PATTERNS.get(data[0])
    match = pattern.fullmatch(data) if pattern else None
    if match is None:
        raise BadCallback("unknown button")
    kind, groups = data[0], match.groups()
    if kind == "v":
        return VotePress(groups[0], int(groups[1]), int(groups[2]), groups[3] == "a")
    if kind == "c":
        return CardPress(groups[0], int(groups[1]), groups[2] == "f")
    if kind == "t":
        return TeamPress(groups[0], int(groups[1]), None if groups[2] == "ok" else int(groups[2]))
    if kind == "m":
        return MissionPress(groups[0], int(groups[1]), int(groups[2]))
    if kind == "x":
        return CancelPress(groups[0], groups[1] == "y")
    if kind == "h":
        return HintsPress(groups[0])
    if kind == "r":
        return RematchPress(groups[0])
    if kind == "s":
        return SettingsPress(int(groups[0]), _SETTING_NAMES[groups[1]])
    return LanguagePress(int(groups[0]), groups[1])
