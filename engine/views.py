"""What a state looks like to the table and to one seat: the only ways secrets leave the engine."""

from __future__ import annotations

from dataclasses import dataclass

from engine.state import EndReason, GameState, MissionRound, Phase, Role, Side, Variants
from engine.turns import ballot, waiting_for


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


@dataclass(frozen=True)
class SeatView:
    """What one seat knows beyond the public view."""

    seat: int
    role: Role
    known_spies: tuple[int, ...]  # the spies this seat knows of (itself included for a spy)
    own_vote: bool | None  # this seat's vote while votes are hidden
    own_card_is_fail: bool | None  # this seat's card while cards are hidden


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
    showing_team = state.phase in (Phase.VOTING, Phase.MISSION) and current is not None
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
    return SeatView(seat=seat, role=role, known_spies=known, own_vote=own_vote, own_card_is_fail=own_card)
