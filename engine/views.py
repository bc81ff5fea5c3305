"""What a state looks like to the table and to one seat: the only ways secrets leave the engine."""

from __future__ import annotations

from dataclasses import dataclass

from engine.plot import Card, CardSeen, PlotUse, RoleSeen
from engine.state import EndReason, GameState, MissionRound, Phase, Role, Side, Variants
from engine.turns import ballot, waiting_for


@dataclass(frozen=True)
class PlotView:
    """The Plot cards as everyone sees them: all of it but the order of the undrawn cards."""

    hands: tuple[tuple[Card, ...], ...]  # the cards each seat holds face up
    deck_left: int  # how many cards are still undrawn
    drawn: tuple[Card, ...]  # during a deal: the drawn cards the leader has still to give
    receiving: int | None  # during a deal: who must resolve the immediate card just received
    receiving_card: Card | None
    asked: int | None  # during a window: the holder asked now
    spotlight: tuple[int, int] | None  # during a mission: (who used In the Spotlight, on whom)
    open_votes: tuple[tuple[int, bool], ...]  # during a vote: the Opinion Makers' votes, once all are in
    uses: tuple[tuple[PlotUse, ...], ...]  # every public use, one tuple per round (index as in `rounds`)


@dataclass(frozen=True)
class PublicView:
    """Everything every player may know."""

    players: int
    spy_count: int
    variants: Variants
    version: int
    ballot: int  # the decision open now: the one stamp a button needs (see engine.turns.ballot)
    phase: Phase
    leader: int
    mission_track: tuple[bool | None, ...]
    current_mission: int | None
    proposal_number: int
    rejections: int
    team: tuple[int, ...] | None  # the team being voted on or playing the mission
    voted_seats: tuple[int, ...]
    played_seats: tuple[int, ...]
    waiting_for: tuple[int, ...]  # the seats the game waits for now
    open_missions: tuple[int, ...]
    rounds: tuple[MissionRound, ...]
    winner: Side | None
    end_reason: EndReason | None
    revealed_spies: tuple[int, ...] | None  # only once the game is over
    plot: PlotView | None = None  # with Plot cards


@dataclass(frozen=True)
class SeatView:
    """What one seat knows beyond the public view."""

    seat: int
    role: Role
    known_spies: tuple[int, ...]  # the spies this seat knows of (itself included for a spy)
    own_vote: bool | None  # this seat's vote while votes are hidden
    own_card_is_fail: bool | None  # this seat's card while cards are hidden
    # With Plot cards, what only this seat was shown:
    seen_roles: tuple[RoleSeen, ...] = ()  # roles (Overheard Conversation, Open Up, Establish Confidence)
    seen_cards: tuple[CardSeen, ...] = ()  # mission cards (Keeping a Close Eye on You)


# The steps in which a proposed team is on the table: voted on, open to No Confidence or the
# spotlight, playing, or watched.
_TEAM_IN_PLAY = (Phase.VOTING, Phase.OVERTURN, Phase.SPOTLIGHT, Phase.MISSION, Phase.WATCH)


# The last state asked about and its view: one step of the bot asks for the same state's view
# several times (the move, the board, the clock). States are immutable, so the view of the very
# same object never changes; another object, even an equal one, is worked out again.
_last_public: tuple[GameState, PublicView] | None = None


def public_view(state: GameState) -> PublicView:
    global _last_public
    last = _last_public
    if last is not None and last[0] is state:
        return last[1]
    view = _public_view(state)
    _last_public = (state, view)
    return view


def _public_view(state: GameState) -> PublicView:
    current = state.current_round
    showing_team = state.phase in _TEAM_IN_PLAY and current is not None
    return PublicView(
        players=state.players,
        spy_count=state.spy_count,
        variants=state.variants,
        version=state.version,
        ballot=ballot(state),
        phase=state.phase,
        leader=state.leader,
        mission_track=state.mission_track(),
        current_mission=current.mission if current is not None else None,
        proposal_number=state.proposal_number,
        rejections=current.rejections if current is not None else 0,
        team=current.team if showing_team else None,
        voted_seats=state.voted_seats,
        played_seats=state.played_seats,
        waiting_for=waiting_for(state),
        open_missions=state.open_missions(),
        rounds=state.rounds,
        winner=state.winner,
        end_reason=state.end_reason,
        revealed_spies=state.spies if state.is_over else None,
        plot=_plot_view(state),
    )


def _plot_view(state: GameState) -> PlotView | None:
    plot = state.plot
    if plot is None:
        return None
    open_votes: tuple[tuple[int, bool], ...] = ()
    current = state.current_round
    if state.phase is Phase.VOTING and current is not None:
        open_seats = current.proposals[-1].open_votes
        votes = [state.pending_votes[seat] for seat in open_seats]
        if all(vote is not None for vote in votes):
            open_votes = tuple((seat, bool(vote)) for seat, vote in zip(open_seats, votes, strict=True))
    return PlotView(
        hands=plot.hands,
        deck_left=len(plot.deck),
        drawn=plot.drawn,
        receiving=plot.receiving,
        receiving_card=plot.receiving_card,
        asked=plot.asked[0] if plot.asked else None,
        spotlight=plot.spotlight,
        open_votes=open_votes,
        uses=plot.uses,
    )


def seat_view(state: GameState, seat: int) -> SeatView:
    if not 0 <= seat < state.players:
        raise ValueError(f"no seat {seat}")
    role = state.role_of(seat)
    if role is Role.SPY:
        known = (seat,) if state.variants.blind_spies else state.spies
    else:
        known = ()
    own_vote = state.pending_votes[seat] if state.pending_votes else None
    own_card = next((fail for s, fail in state.pending_cards if s == seat), None)
    seen = state.plot.seen if state.plot is not None else ()
    return SeatView(
        seat=seat,
        role=role,
        known_spies=known,
        own_vote=own_vote,
        own_card_is_fail=own_card,
        seen_roles=tuple(s for s in seen if isinstance(s, RoleSeen) and s.viewer == seat),
        seen_cards=tuple(s for s in seen if isinstance(s, CardSeen) and s.viewer == seat),
    )
