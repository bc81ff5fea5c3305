"""What a player can do (each names its seat), and what a deadline does when nobody acted in time."""

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


@dataclass(frozen=True)
class LeaderTimedOut:
    """The leader did not propose in time: `team` (for `mission` under Targeting), drawn at
    random outside the engine (see `engine.deadlines.draw_team`), goes to the vote as if the
    leader had proposed it. A missed turn is never a rejection by itself."""

    team: tuple[int, ...]
    mission: int | None = None


@dataclass(frozen=True)
class VotesTimedOut:
    """Voting time ran out: every missing vote counts as `approve` (the group's setting)."""

    approve: bool


@dataclass(frozen=True)
class CardsTimedOut:
    """Mission time ran out: every card not played counts as Success."""


PLAYER_ACTIONS = (ProposeTeam, CastVote, PlayCard)
DEADLINE_ACTIONS = (LeaderTimedOut, VotesTimedOut, CardsTimedOut)
Action = ProposeTeam | CastVote | PlayCard | LeaderTimedOut | VotesTimedOut | CardsTimedOut
