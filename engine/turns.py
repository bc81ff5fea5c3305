"""Whose turn it is: who the game waits for, what each seat may do, and which decision is open.

Everything that shows or drives a game (the bot's board, its clock, simulated players,
tests) asks here instead of working it out from the state again.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from engine import rules
from engine.actions import CastVote, PlayCard, ProposeTeam
from engine.state import GameState, Phase


def waiting_for(state: GameState) -> tuple[int, ...]:
    """The seats the game waits for now, in seat order: the leader, the voters still to vote,
    or the team members still to play a card. Nobody once the game is over."""
    if state.phase is Phase.PROPOSING:
        return (state.leader,)
    if state.phase is Phase.VOTING:
        return tuple(seat for seat, vote in enumerate(state.pending_votes) if vote is None)
    if state.phase is Phase.MISSION:
        current = state.current_round
        assert current is not None and current.team is not None
        return tuple(seat for seat in current.team if seat not in state.played_seats)
    return ()


def ballot(state: GameState) -> int:
    """A number for the decision open now, the same for every action within it.

    It grows by one each time the game moves to a new decision (a leader's turn, a vote,
    a mission) and stays put while the seats of one decision act, so a button made for
    one decision is recognised as stale once the game has moved on, whatever was pressed
    in between. It is public: it counts only what everyone has seen.
    """
    proposals = sum(len(r.proposals) for r in state.rounds)
    missions_begun = sum(1 for r in state.rounds if r.proposals and r.proposals[-1].approved)
    return 2 * proposals + missions_begun + (1 if state.phase is Phase.PROPOSING else 0)


def team_options(state: GameState, mission: int) -> Iterator[tuple[int, ...]]:
    """Every team the leader may propose for `mission`, in seat order."""
    yield from combinations(range(state.players), rules.team_size(state.players, mission))


def legal_actions(state: GameState, seat: int) -> Iterator[ProposeTeam | CastVote | PlayCard]:
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
