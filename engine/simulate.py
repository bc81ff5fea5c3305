"""Random legal play, for demos and tests. Pure: the random source is passed in."""

from __future__ import annotations

import random

from engine import rules
from engine.actions import (
    Action,
    CardsTimedOut,
    CastVote,
    ChanceTimedOut,
    Pass,
    PlayCard,
    ProposeTeam,
    VotesTimedOut,
)
from engine.deadlines import draw_deal, draw_immediate, draw_team
from engine.events import Event
from engine.game import apply
from engine.state import GameState, Phase
from engine.steps import WINDOW_CARDS
from engine.turns import legal_actions, waiting_for


def random_action(
    state: GameState,
    rng: random.Random,
    approve_rate: float = 0.6,
    spy_fail_rate: float = 0.5,
    deadline_rate: float = 0.0,
    plot_use_rate: float = 0.5,
) -> Action:
    """One legal action for whoever must act next, chosen at random; with `deadline_rate`,
    the phase's deadline runs out instead. A Plot card holder asked in a window uses the
    card with `plot_use_rate`, on a random target."""
    if not state.is_over and rng.random() < deadline_rate:
        return _deadline(state, rng)
    if state.phase is Phase.PROPOSING:
        mission = rng.choice(state.open_missions())
        team = tuple(sorted(rng.sample(range(state.players), rules.team_size(state.players, mission))))
        return ProposeTeam(state.leader, team, mission if state.variants.targeting else None)
    if state.phase is Phase.VOTING:
        return CastVote(rng.choice(waiting_for(state)), rng.random() < approve_rate)
    if state.phase is Phase.MISSION:
        seat = rng.choice(waiting_for(state))
        return PlayCard(seat, seat in state.spies and rng.random() < spy_fail_rate)
    if state.phase in WINDOW_CARDS:
        seat = waiting_for(state)[0]
        uses = [action for action in legal_actions(state, seat) if not isinstance(action, Pass)]
        return rng.choice(uses) if uses and rng.random() < plot_use_rate else Pass(seat)
    if state.phase is Phase.DEAL:
        return rng.choice(list(legal_actions(state, waiting_for(state)[0])))
    raise ValueError("the game is over")


def _deadline(state: GameState, rng: random.Random) -> Action:
    if state.phase is Phase.PROPOSING:
        return draw_team(state, rng)
    if state.phase is Phase.VOTING:
        return VotesTimedOut(_vote_setting(state, rng))
    if state.phase is Phase.MISSION:
        return CardsTimedOut()
    if state.phase is Phase.DEAL:
        assert state.plot is not None
        return draw_deal(state, rng) if state.plot.receiving is None else draw_immediate(state, rng)
    return ChanceTimedOut()


def _vote_setting(state: GameState, rng: random.Random) -> bool:
    """The group's setting for missing votes: the one already used in this vote, if any
    (the Opinion Makers' missing votes are filled before the others')."""
    current = state.current_round
    assert current is not None
    filled = current.proposals[-1].auto_votes
    if filled:
        return bool(state.pending_votes[filled[0]])
    return rng.random() < 0.5


def play_to_end(
    state: GameState, rng: random.Random, **rates: float
) -> list[tuple[Action, GameState, tuple[Event, ...]]]:
    """Play random legal actions until the game ends; return every step."""
    steps = []
    while not state.is_over:
        action = random_action(state, rng, **rates)
        state, events = apply(state, action)
        steps.append((action, state, events))
    return steps
