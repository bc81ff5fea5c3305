"""What a player can do (each names its seat), and what a deadline does when nobody acted in time."""

from __future__ import annotations

from dataclasses import dataclass

from engine.plot import Card


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


# ---------------------------------------------------------------- The Plot Thickens


@dataclass(frozen=True)
class Pass:
    """The holder asked in a window lets their chance go; it does not come back in this window."""

    seat: int


@dataclass(frozen=True)
class UseStrongLeader:
    """W1: the holder becomes the leader of this proposal."""

    seat: int


@dataclass(frozen=True)
class DealCard:
    """W2: the leader gives one of the drawn cards to another player."""

    seat: int
    card: Card
    to: int


@dataclass(frozen=True)
class TakeCard:
    """Take Responsibility: its receiver takes `card` from the player `holder`."""

    seat: int
    card: Card
    holder: int


@dataclass(frozen=True)
class Overhear:
    """Overheard Conversation: its receiver looks at the role of a neighbour."""

    seat: int
    target: int


@dataclass(frozen=True)
class OpenUp:
    """Open Up: its receiver shows their own role to `to`."""

    seat: int
    to: int


@dataclass(frozen=True)
class UseNoConfidence:
    """W5: the holder throws out the team the vote approved."""

    seat: int


@dataclass(frozen=True)
class Spotlight:
    """W6: the holder makes `target`, another team member, play their mission card face up."""

    seat: int
    target: int


@dataclass(frozen=True)
class Watch:
    """W8: the holder looks at the mission card of each of `targets`, one card each (Decision D8)."""

    seat: int
    targets: tuple[int, ...]


@dataclass(frozen=True)
class ChanceTimedOut:
    """The holder asked in a window did not answer in time: a pass."""


@dataclass(frozen=True)
class DealTimedOut:
    """The leader did not deal in time: every card still to give goes, in this order, to the
    seat beside it, drawn at random outside the engine (see `engine.deadlines.draw_deal`)."""

    deals: tuple[tuple[Card, int], ...]


@dataclass(frozen=True)
class ImmediateTimedOut:
    """The receiver of an immediate card did not choose in time: `target` (the neighbour
    looked at, the player shown, or the holder taken from, with `card` for Take
    Responsibility), drawn at random outside the engine (see `engine.deadlines.draw_immediate`),
    is chosen for them. The card must be resolved, so this is a forced choice, never a pass."""

    target: int
    card: Card | None = None


PLOT_PLAYER_ACTIONS = (Pass, UseStrongLeader, DealCard, TakeCard, Overhear, OpenUp, UseNoConfidence, Spotlight, Watch)
PLOT_DEADLINE_ACTIONS = (ChanceTimedOut, DealTimedOut, ImmediateTimedOut)

PLAYER_ACTIONS = (ProposeTeam, CastVote, PlayCard) + PLOT_PLAYER_ACTIONS
DEADLINE_ACTIONS = (LeaderTimedOut, VotesTimedOut, CardsTimedOut) + PLOT_DEADLINE_ACTIONS
PlotAction = (
    Pass
    | UseStrongLeader
    | DealCard
    | TakeCard
    | Overhear
    | OpenUp
    | UseNoConfidence
    | Spotlight
    | Watch
    | ChanceTimedOut
    | DealTimedOut
    | ImmediateTimedOut
)
Action = ProposeTeam | CastVote | PlayCard | LeaderTimedOut | VotesTimedOut | CardsTimedOut | PlotAction
