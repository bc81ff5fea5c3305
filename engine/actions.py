"""What a player can do. Each action names the seat that does it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProposeTeam:
    """The leader puts a team forward. Under Targeting `mission` names the mission it attempts."""

    seat: int
    team: tuple[int, ...]
    mission: int | None = None


@dataclass(frozen=True)
class CastVote:
    seat: int
    approve: bool


@dataclass(frozen=True)
class PlayCard:
    seat: int
    fail: bool


Action = ProposeTeam | CastVote | PlayCard
