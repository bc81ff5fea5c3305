"""Whose turn it is: who the game waits for, what each seat may do, and which decision is open.

Everything that shows or drives a game (the bot's board, its clock, simulated players,
tests) asks here instead of working it out from the state again.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from engine import rules
from engine.actions import (
    Action,
    CastVote,
    DealCard,
    OpenUp,
    Overhear,
    Pass,
    PlayCard,
    ProposeTeam,
    Spotlight,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    Watch,
)
from engine.plot import Card
from engine.state import GameState, Phase
from engine.steps import WINDOW_CARDS, plot_of, spotlight_targets, voters_now, watch_targets
from engine.windows import immediate_options


def waiting_for(state: GameState) -> tuple[int, ...]:
    """The seats the game waits for now, in seat order: the leader, the voters still to vote
    (the Opinion Makers before the others), the team members still to play a card, or the
    one Plot card holder asked or receiver resolving a card. Nobody once the game is over."""
    if state.phase is Phase.PROPOSING:
        return (state.leader,)
    if state.phase is Phase.VOTING:
        return voters_now(state)
    if state.phase is Phase.MISSION:
        current = state.current_round
        assert current is not None and current.team is not None
        return tuple(seat for seat in current.team if seat not in state.played_seats)
    if state.phase in WINDOW_CARDS:
        return plot_of(state).asked[:1]
    if state.phase is Phase.DEAL:
        receiver = plot_of(state).receiving
        return (state.leader,) if receiver is None else (receiver,)
    return ()


def still_to_act(state: GameState) -> tuple[int, ...]:
    """The seats the decision open now has yet to hear from, in seat order: those it waits for,
    and in a vote also everyone still to vote behind the Opinion Makers."""
    if state.phase is Phase.VOTING:
        return tuple(seat for seat, vote in enumerate(state.pending_votes) if vote is None)
    return waiting_for(state)


def ballot(state: GameState) -> int:
    """A number for the decision open now, the same for every action within it.

    It grows by one each time the game moves to a new decision (a leader's turn, a vote,
    a mission, and with Plot cards each holder asked, each card dealt or resolved) and
    stays put while the seats of one decision act, so a button made for one decision is
    recognised as stale once the game has moved on, whatever was pressed in between. It
    is public: it counts only what everyone has seen.
    """
    if state.plot is not None:
        # No Confidence turns an approved proposal back into a failed one, so a Plot game
        # counts its decisions as they come instead of working them out from the rounds.
        return state.plot.decisions
    proposals = sum(len(r.proposals) for r in state.rounds)
    missions_begun = sum(1 for r in state.rounds if r.proposals and r.proposals[-1].approved)
    return 2 * proposals + missions_begun + (1 if state.phase is Phase.PROPOSING else 0)


def team_options(state: GameState, mission: int) -> Iterator[tuple[int, ...]]:
    """Every team the leader may propose for `mission`, in seat order."""
    yield from combinations(range(state.players), rules.team_size(state.players, mission))


def legal_actions(state: GameState, seat: int) -> Iterator[Action]:
    """Every action `seat` may take now. A seat's own role decides whether Fail is among them,
    which only that seat may be told."""
    if seat not in waiting_for(state):
        return
    if state.phase is Phase.PROPOSING:
        for mission in state.open_missions():
            named = mission if state.variants.targeting else None
            for team in team_options(state, mission):
                yield ProposeTeam(seat, team, named)
    elif state.phase is Phase.VOTING:
        yield CastVote(seat, True)
        yield CastVote(seat, False)
    elif state.phase is Phase.MISSION:
        yield PlayCard(seat, False)
        if seat in state.spies:
            yield PlayCard(seat, True)
    elif state.phase is Phase.DEAL:
        yield from _deal_actions(state, seat)
    elif state.phase in WINDOW_CARDS:
        yield from _window_uses(state, seat)
        yield Pass(seat)


def _deal_actions(state: GameState, seat: int) -> Iterator[Action]:
    plot = plot_of(state)
    if plot.receiving is None:
        for card in dict.fromkeys(plot.drawn):
            for to in range(state.players):
                if to != seat:
                    yield DealCard(seat, card, to)
        return
    for target, card in immediate_options(state):
        if plot.receiving_card is Card.TAKE_RESPONSIBILITY:
            assert card is not None
            yield TakeCard(seat, card, target)
        elif plot.receiving_card is Card.OVERHEARD_CONVERSATION:
            yield Overhear(seat, target)
        else:
            yield OpenUp(seat, target)


def _window_uses(state: GameState, seat: int) -> Iterator[Action]:
    if state.phase is Phase.LEAD:
        yield UseStrongLeader(seat)
    elif state.phase is Phase.OVERTURN:
        yield UseNoConfidence(seat)
    elif state.phase is Phase.SPOTLIGHT:
        for target in spotlight_targets(state, seat):
            yield Spotlight(seat, target)
    else:
        targets = watch_targets(state, seat)
        cards = plot_of(state).count(seat, Card.KEEPING_A_CLOSE_EYE_ON_YOU)
        for size in range(1, min(cards, len(targets)) + 1):
            for chosen in combinations(targets, size):
                yield Watch(seat, chosen)
