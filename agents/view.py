"""What one seat knows: the only thing a computer player decides from.

An `AgentView` is built from the public view, the seat's own view and the public record,
never from the game state itself, so two states the seat cannot tell apart give equal
views and therefore the same decision for the same random draws.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import (
    PLOT_PHASES,
    Action,
    GameRecord,
    GameState,
    PublicView,
    Role,
    SeatView,
    legal_actions,
    public_view,
    record_of,
    seat_view,
)

# Every view's record carries this id: the game's real id is no part of what a seat decides from.
RECORD_ID = "agent-view"


@dataclass(frozen=True)
class AgentView:
    public: PublicView
    own: SeatView
    record: GameRecord  # the public record so far, without outcome
    # In a Plot card decision: what the seat's own keyboard offers (its legal actions), else ().
    choices: tuple[Action, ...] = ()
    # The seats that share this one's Fail rotation: the computer players of a table (and people
    # whose turns a computer player takes). None: every seat (computer players among themselves).
    rotation: frozenset[int] | None = None

    @property
    def seat(self) -> int:
        return self.own.seat

    @property
    def players(self) -> int:
        return self.public.players

    @property
    def is_spy(self) -> bool:
        return self.own.role is Role.SPY

    @property
    def knows_all_spies(self) -> bool:
        """A spy who was told who the other spies are (every spy, unless Blind Spies)."""
        return self.is_spy and len(self.own.known_spies) == self.public.spy_count

    def follows_rotation(self, seat: int) -> bool:
        """Whether `seat` plays its Fail cards by the same rotation as this seat (a person does not)."""
        return self.rotation is None or seat in self.rotation or seat == self.seat

    @property
    def successes(self) -> int:
        return sum(1 for r in self.public.mission_track if r is True)

    @property
    def failures(self) -> int:
        return sum(1 for r in self.public.mission_track if r is False)


def view_of(state: GameState, seat: int, rotation: frozenset[int] | None = None) -> AgentView:
    """What `seat` knows of `state`; `rotation`: the seats that share its Fail rotation (None: all)."""
    public = public_view(state)
    return AgentView(
        public=public,
        own=seat_view(state, seat),
        record=record_of(state, RECORD_ID).without_outcome(),
        choices=tuple(legal_actions(state, seat)) if public.phase in PLOT_PHASES else (),
        rotation=rotation,
    )
