"""A table in a group: who sits at it, and the engine game once it has started.

This is the document stored in Redis for each game. It holds no Telegram objects, only
ids and names, and knows nothing of how it is shown.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from engine import GameState, Variants, state_from_dict, state_to_dict
from tgbot.i18n import DEFAULT_LANGUAGE
from tgbot.settings import GroupSettings

DOCUMENT_SCHEMA = 1


class Stage(StrEnum):
    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Player:
    user_id: int
    name: str
    language: str | None = None


@dataclass(frozen=True)
class Table:
    id: str
    chat_id: int
    chat_title: str
    creator_id: int
    players: tuple[Player, ...] = ()  # join order in the lobby; seat order once the game starts
    stage: Stage = Stage.LOBBY
    settings: GroupSettings = field(default_factory=GroupSettings)
    game: GameState | None = None
    draft_team: tuple[int, ...] = ()  # seats the leader has ticked but not yet proposed
    draft_mission: int | None = None  # under Targeting: the mission the leader has picked
    deadline: float | None = None  # when the current step times out (seconds since the epoch)
    reminder_at: float | None = None  # when to remind the group, once per step; None once reminded
    step: str = ""  # names the step the deadline belongs to

    @property
    def variants(self) -> Variants:
        return self.settings.variants

    @property
    def language(self) -> str:
        return self.settings.language or DEFAULT_LANGUAGE

    @property
    def next_wake(self) -> float | None:
        """When the clock next has something to do for this table."""
        times = [t for t in (self.reminder_at, self.deadline) if t is not None]
        return min(times) if times and self.is_active else None

    @staticmethod
    def new_id() -> str:
        return secrets.token_hex(5)

    @property
    def is_active(self) -> bool:
        return self.stage in (Stage.LOBBY, Stage.PLAYING)

    def seat_of(self, user_id: int) -> int | None:
        return next((seat for seat, p in enumerate(self.players) if p.user_id == user_id), None)

    def name(self, seat: int) -> str:
        return self.players[seat].name

    def names(self, seats) -> list[str]:
        return [self.players[s].name for s in seats]

    def with_game(self, game: GameState, **changes: Any) -> Table:
        return replace(self, game=game, **changes)

    # --- stored form ---

    def to_json(self) -> str:
        return json.dumps(
            {
                "schema": DOCUMENT_SCHEMA,
                "id": self.id,
                "chat_id": self.chat_id,
                "chat_title": self.chat_title,
                "creator_id": self.creator_id,
                "players": [[p.user_id, p.name, p.language] for p in self.players],
                "stage": self.stage.value,
                "settings": json.loads(self.settings.to_json()),
                "game": None if self.game is None else state_to_dict(self.game),
                "draft_team": list(self.draft_team),
                "draft_mission": self.draft_mission,
                "deadline": self.deadline,
                "reminder_at": self.reminder_at,
                "step": self.step,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Table:
        data = json.loads(text)
        if data.get("schema") != DOCUMENT_SCHEMA:
            raise ValueError(f"unsupported table document schema {data.get('schema')!r}")
        return cls(
            id=data["id"],
            chat_id=data["chat_id"],
            chat_title=data["chat_title"],
            creator_id=data["creator_id"],
            players=tuple(Player(user_id, name, language) for user_id, name, language in data["players"]),
            stage=Stage(data["stage"]),
            settings=GroupSettings.from_json(json.dumps(data["settings"])),
            game=None if data["game"] is None else state_from_dict(data["game"]),
            draft_team=tuple(data["draft_team"]),
            draft_mission=data["draft_mission"],
            deadline=data["deadline"],
            reminder_at=data["reminder_at"],
            step=data["step"],
        )
