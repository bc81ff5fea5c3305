"""What a finished game leaves in its group's memory: who sat where, when it ended, and its record.

The record is the game's `resistance-record/1` with its outcome (`engine.export_record`); the
seats add what the record leaves out on purpose: which Telegram user played each seat, under which
name. Stats, ratings, /history and the end-of-game picture are all worked out from this, so the
stored summaries are enough to build everything again (`resistance-bot stats rebuild`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

FORGOTTEN_NAME = "—"  # the name left in a stored game of someone who asked to be forgotten


@dataclass(frozen=True)
class Seat:
    user_id: int | None  # None for a computer player, and for a person who asked to be forgotten
    name: str
    computer: bool = False


@dataclass(frozen=True)
class GameSummary:
    game_id: str
    chat_id: int
    ended_at: float  # seconds since the epoch
    seats: tuple[Seat, ...]
    record: dict[str, Any]  # resistance-record/1, with "outcome"

    def __post_init__(self) -> None:
        if "outcome" not in self.record:
            raise ValueError("a game's summary needs its record's outcome: only finished games are kept")
        if len(self.seats) != self.record["players"]:
            raise ValueError("a game's summary needs one seat per player")

    @property
    def players(self) -> int:
        return len(self.seats)

    @property
    def spies(self) -> tuple[int, ...]:
        return tuple(self.record["outcome"]["spies"])

    @property
    def resistance_won(self) -> bool:
        return self.record["outcome"]["winner"] == "resistance"

    @property
    def reason(self) -> str:
        return self.record["outcome"]["reason"]

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants played, by their record names (`targeting`, `blind_spies`, `plot_cards`)."""
        chosen = self.record.get("variants") or {}
        return tuple(name for name in ("targeting", "blind_spies", "plot_cards") if chosen.get(name))

    @property
    def mission_results(self) -> tuple[bool, ...]:
        """Each played mission's result in order (True: it succeeded)."""
        return tuple(m["fails"] < m["fails_required"] for m in self.record["missions"] if m.get("fails") is not None)

    def is_spy(self, seat: int) -> bool:
        return seat in self.spies

    def won(self, seat: int) -> bool:
        return self.is_spy(seat) != self.resistance_won

    def seats_of(self, user_id: int) -> tuple[int, ...]:
        return tuple(seat for seat, s in enumerate(self.seats) if s.user_id == user_id)

    def people(self) -> tuple[int, ...]:
        """The user ids of the people who played (each once), in seat order."""
        seen: list[int] = []
        for s in self.seats:
            if s.user_id is not None and not s.computer and s.user_id not in seen:
                seen.append(s.user_id)
        return tuple(seen)

    def without(self, user_id: int) -> GameSummary:
        """The summary with the person's seat kept (the game happened) but their id and name gone."""
        seats = tuple(
            Seat(None, FORGOTTEN_NAME, s.computer) if s.user_id == user_id and not s.computer else s for s in self.seats
        )
        return replace(self, seats=seats)

    def to_json(self) -> str:
        return json.dumps(
            {
                "game": self.game_id,
                "chat": self.chat_id,
                "ended_at": self.ended_at,
                "seats": [{"user": s.user_id, "name": s.name, "computer": s.computer} for s in self.seats],
                "record": self.record,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> GameSummary:
        data = json.loads(text)
        return cls(
            game_id=data["game"],
            chat_id=data["chat"],
            ended_at=data["ended_at"],
            seats=tuple(Seat(s["user"], s["name"], s.get("computer", False)) for s in data["seats"]),
            record=data["record"],
        )
