"""How play moves from one step of a proposal to the next, with and without Plot cards.

Without Plot cards a proposal is: the leader names a team, the table votes, the team plays.
The Plot Thickens adds windows around those steps (W1 Lead, W2 Deal, W5 Overturn,
W6 Spotlight, W8 Watch, see ../shared/rules/plot-thickens.md). A window asks the holders of
its card one by one clockwise from the leader (Decision D7); a window nobody can use is
skipped, so a game only stops where someone has a real choice.
"""

from __future__ import annotations

from dataclasses import replace

from engine import rules
from engine.events import CardsDrawn, Event, GameOver, LeaderChanged, MissionCompleted
from engine.plot import Card, PlotState, PlotUse, UseKind, cards_per_mission, clockwise_from
from engine.state import EndReason, GameState, MissionRound, Phase, Side

Steps = tuple[GameState, tuple[Event, ...]]

WINDOW_CARDS: dict[Phase, Card] = {
    Phase.LEAD: Card.STRONG_LEADER,
    Phase.OVERTURN: Card.NO_CONFIDENCE,
    Phase.SPOTLIGHT: Card.IN_THE_SPOTLIGHT,
    Phase.WATCH: Card.KEEPING_A_CLOSE_EYE_ON_YOU,
}


def plot_of(state: GameState) -> PlotState:
    assert state.plot is not None
    return state.plot


# ---------------------------------------------------------------- who may do what in a window


def spotlight_targets(state: GameState, seat: int) -> tuple[int, ...]:
    """Another team member (Decision D6: not oneself)."""
    return tuple(member for member in _team(state) if member != seat)


def watch_targets(state: GameState, seat: int) -> tuple[int, ...]:
    """Another team member whose card is not public yet and nobody watched (Decision D6)."""
    plot = plot_of(state)
    spotlighted = plot.spotlight[1] if plot.spotlight is not None else None
    watched = {use.target for use in round_uses(state) if use.kind is UseKind.WATCH}
    return tuple(m for m in _team(state) if m != seat and m != spotlighted and m not in watched)


def may_use(state: GameState, seat: int) -> bool:
    """Whether the holder `seat` has a use of the open window's card now."""
    card = WINDOW_CARDS[state.phase]
    if not plot_of(state).holds(seat, card):
        return False
    if state.phase is Phase.LEAD:
        return seat != state.leader
    if state.phase is Phase.SPOTLIGHT:
        return bool(spotlight_targets(state, seat))
    if state.phase is Phase.WATCH:
        return bool(watch_targets(state, seat))
    return True


def voters_now(state: GameState) -> tuple[int, ...]:
    """The seats whose vote the game waits for: the Opinion Makers until all of theirs are in,
    then everyone else still to vote."""
    pending = state.pending_votes
    current = state.current_round
    open_seats = current.proposals[-1].open_votes if current is not None and current.proposals else ()
    first = tuple(seat for seat in open_seats if pending[seat] is None)
    if first:
        return first
    return tuple(seat for seat, vote in enumerate(pending) if vote is None)


def round_index(state: GameState) -> int:
    """The index in `rounds` of the round being worked on, or of the one about to start."""
    return len(state.rounds) - 1 if state.current_round is not None else len(state.rounds)


def proposal_index(state: GameState) -> int:
    """The index of the proposal in play in its round: the one being made, voted or played."""
    current = state.current_round
    if current is None:
        return 0
    return state.proposal_number - 1


def round_uses(state: GameState) -> tuple[PlotUse, ...]:
    uses = plot_of(state).uses
    index = round_index(state)
    return uses[index] if index < len(uses) else ()


def _team(state: GameState) -> tuple[int, ...]:
    current = state.current_round
    assert current is not None and current.team is not None
    return current.team


# ---------------------------------------------------------------- opening and closing windows


def begin_proposal(state: GameState, events: list[Event]) -> Steps:
    """The leader is set: the next proposal starts, at W1 in a Plot game."""
    if state.plot is None:
        return replace(state, phase=Phase.PROPOSING), tuple(events)
    return open_window(state, Phase.LEAD, events)


def open_window(state: GameState, phase: Phase, events: list[Event]) -> Steps:
    card = WINDOW_CARDS[phase]
    plot = plot_of(state)
    asked = tuple(seat for seat in clockwise_from(state.leader, state.players) if plot.holds(seat, card))
    return ask_next(replace(state, phase=phase, plot=replace(plot, asked=asked)), events)


def ask_next(state: GameState, events: list[Event]) -> Steps:
    """Ask the next holder who can use the window's card now; close the window when none is left."""
    plot = plot_of(state)
    asked = plot.asked
    while asked and not may_use(replace(state, plot=replace(plot, asked=asked)), asked[0]):
        asked = asked[1:]
    state = replace(state, plot=replace(plot, asked=asked))
    if asked:
        return state, tuple(events)
    return close_window(state, events)


def close_window(state: GameState, events: list[Event]) -> Steps:
    state = replace(state, plot=replace(plot_of(state), asked=()))
    if state.phase is Phase.LEAD:
        return after_lead(state, events)
    if state.phase is Phase.OVERTURN:
        return open_window(state, Phase.SPOTLIGHT, events)
    if state.phase is Phase.SPOTLIGHT:
        return replace(state, phase=Phase.MISSION, pending_cards=()), tuple(events)
    assert state.phase is Phase.WATCH
    current = state.current_round
    assert current is not None
    return complete_mission(state, state.pending_cards, events, current.auto_cards)


def after_lead(state: GameState, events: list[Event]) -> Steps:
    """W2 comes on a mission's first proposal only: the leader draws the cards face up."""
    if state.current_round is not None:
        return replace(state, phase=Phase.PROPOSING), tuple(events)
    plot = plot_of(state)
    count = cards_per_mission(state.players)
    drawn, deck = plot.deck[:count], plot.deck[count:]
    events.append(CardsDrawn(leader=state.leader, cards=drawn))
    plot = replace(plot, deck=deck, drawn=drawn)
    return replace(state, phase=Phase.DEAL, plot=plot), tuple(events)


def after_approval(state: GameState, events: list[Event]) -> Steps:
    """The vote approved the team: in a Plot game No Confidence (W5) and In the Spotlight (W6) come first."""
    if state.plot is None:
        return replace(state, phase=Phase.MISSION, pending_cards=()), tuple(events)
    return open_window(state, Phase.OVERTURN, events)


def after_cards(
    state: GameState, cards: tuple[tuple[int, bool], ...], events: list[Event], filled: tuple[int, ...] = ()
) -> Steps:
    """Every team member has played: in a Plot game the watch window (W8) comes before the reveal."""
    if state.plot is None:
        return complete_mission(state, cards, events, filled)
    current = state.current_round
    assert current is not None
    # The missed cards are marked now, so that they are known when the watch window closes.
    state = replace(state, rounds=state.rounds[:-1] + (replace(current, auto_cards=filled),), pending_cards=cards)
    return open_window(state, Phase.WATCH, events)


# ---------------------------------------------------------------- the end of a proposal, a mission, a game


def after_rejection(state: GameState, current: MissionRound, events: list[Event]) -> Steps:
    """The proposal failed (a rejection, or No Confidence): the fifth failed proposal of a round ends the game."""
    if current.rejections >= rules.MAX_PROPOSALS_PER_MISSION:
        return end(state, Side.SPIES, EndReason.FIVE_REJECTIONS, events)
    leader = state.next_seat(state.leader)
    events.append(LeaderChanged(leader=leader))
    return begin_proposal(replace(state, leader=leader), events)


def complete_mission(
    state: GameState, cards: tuple[tuple[int, bool], ...], events: list[Event], filled: tuple[int, ...] = ()
) -> Steps:
    current = state.current_round
    assert current is not None and current.team is not None
    fails = sum(1 for _, is_fail in cards if is_fail)
    current = replace(current, fails=fails, auto_cards=filled)
    state = replace(state, rounds=state.rounds[:-1] + (current,), pending_cards=())
    if state.plot is not None:
        state = replace(state, plot=replace(state.plot, spotlight=None))
    events.append(
        MissionCompleted(
            mission=current.mission,
            team=current.team,
            fails=fails,
            fails_required=current.fails_required,
            succeeded=bool(current.succeeded),
        )
    )
    if state.successes >= rules.MISSIONS_TO_WIN:
        return end(state, Side.RESISTANCE, EndReason.THREE_SUCCESSFUL_MISSIONS, events)
    if state.failures >= rules.MISSIONS_TO_WIN:
        return end(state, Side.SPIES, EndReason.THREE_FAILED_MISSIONS, events)
    leader = state.next_seat(state.leader)
    events.append(LeaderChanged(leader=leader))
    return begin_proposal(replace(state, leader=leader), events)


def end(state: GameState, winner: Side, reason: EndReason, events: list[Event]) -> Steps:
    events.append(GameOver(winner=winner, reason=reason, spies=state.spies))
    return replace(state, phase=Phase.OVER, winner=winner, end_reason=reason), tuple(events)
