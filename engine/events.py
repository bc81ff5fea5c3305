"""What happened, as everyone at the table may learn it.

Events carry public information only: who voted but not how until all votes are in, who
played a card but never which. `GameOver` reveals the spies, as the game's end does.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.plot import Card
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


# ---------------------------------------------------------------- The Plot Thickens
# Every use of a Plot card is public; what a card showed to one seat is not an event
# (see `engine.views.SeatView.seen_roles` and `seen_cards`).


@dataclass(frozen=True)
class ChancePassed:
    """The holder asked in a window let it go (`timed_out`: by letting the time run out)."""

    seat: int
    timed_out: bool = False


@dataclass(frozen=True)
class StrongLeaderUsed:
    """`seat` took the lead of this proposal; the lead goes on clockwise from it."""

    seat: int


@dataclass(frozen=True)
class CardsDrawn:
    leader: int
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class CardDealt:
    card: Card
    to: int
    drawn: bool = False  # the leader missed the deadline and the receiver was drawn at random


@dataclass(frozen=True)
class CardTaken:
    """Take Responsibility: `by` took `card` from `holder`."""

    by: int
    card: Card
    holder: int
    forced: bool = False  # the receiver missed the deadline and the choice was drawn at random


@dataclass(frozen=True)
class ConversationOverheard:
    """Overheard Conversation: `by` looked at the role of `target` (which only `by` learns)."""

    by: int
    target: int
    forced: bool = False


@dataclass(frozen=True)
class OpenedUp:
    """Open Up: `by` showed their role to `to` (which only `to` learns)."""

    by: int
    to: int
    forced: bool = False


@dataclass(frozen=True)
class ConfidenceEstablished:
    """Establish Confidence: the leader `by` showed their role to `to` (which only `to` learns)."""

    by: int
    to: int


@dataclass(frozen=True)
class OpenVotesShown:
    """The Opinion Makers' votes, shown before anyone else votes."""

    votes: tuple[tuple[int, bool], ...]


@dataclass(frozen=True)
class NoConfidenceUsed:
    """`seat` overturned the approved team: the proposal counts as failed."""

    seat: int


@dataclass(frozen=True)
class SpotlightUsed:
    by: int
    target: int


@dataclass(frozen=True)
class SpotlightCardShown:
    """The spotlighted member's mission card, played face up."""

    seat: int
    fail: bool


@dataclass(frozen=True)
class CardWatched:
    """`by` looked at the mission card of `target` (which only `by` learns)."""

    by: int
    target: int


PlotEvent = (
    ChancePassed
    | StrongLeaderUsed
    | CardsDrawn
    | CardDealt
    | CardTaken
    | ConversationOverheard
    | OpenedUp
    | ConfidenceEstablished
    | OpenVotesShown
    | NoConfidenceUsed
    | SpotlightUsed
    | SpotlightCardShown
    | CardWatched
)

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
    | PlotEvent
)
