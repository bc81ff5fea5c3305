"""What happened, as everyone at the table may learn it.

Events carry public information only: who voted but not how until all votes are in, who
played a card but never which. `GameOver` reveals the spies, as the game's end does.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.state import EndReason, Side


@dataclass(frozen=True)
class TeamProposed:
    mission: int
    proposal_number: int
    leader: int
    team: tuple[int, ...]
    drawn: bool = False  # the leader missed the deadline and the team was drawn at random


@dataclass(frozen=True)
class VoteCast:
    seat: int


@dataclass(frozen=True)
class VotesRevealed:
    mission: int
    proposal_number: int
    votes: tuple[bool, ...]
    approved: bool
    rejections: int  # rejected proposals in this round so far


@dataclass(frozen=True)
class CardPlayed:
    seat: int


@dataclass(frozen=True)
class MissionCompleted:
    mission: int
    team: tuple[int, ...]
    fails: int
    fails_required: int
    succeeded: bool


@dataclass(frozen=True)
class VotesFilled:
    """Votes missing at the deadline were filled in; says whose, never anyone's own choice."""

    seats: tuple[int, ...]
    approve: bool


@dataclass(frozen=True)
class CardsFilled:
    """Cards missing at the deadline were played as Success."""

    seats: tuple[int, ...]


@dataclass(frozen=True)
class LeaderChanged:
    leader: int


@dataclass(frozen=True)
class GameOver:
    winner: Side
    reason: EndReason
    spies: tuple[int, ...]


Event = (
    TeamProposed
    | VoteCast
    | VotesRevealed
    | CardPlayed
    | MissionCompleted
    | VotesFilled
    | CardsFilled
    | LeaderChanged
    | GameOver
)
