"""Random legal play, for demos and tests. Pure: the random source is passed in."""

from __future__ import annotations

import random

from engine import rules
from engine.actions import Action, CardsTimedOut, CastVote, PlayCard, ProposeTeam, VotesTimedOut
from engine.deadlines import draw_team
from engine.events import Event
from engine.game import apply
from engine.state import GameState, Phase
from engine.turns import waiting_for


def random_action(
    state: GameState,
    rng: random.Random,
    approve_rate: float = 0.6,
    spy_fail_rate: float = 0.5,
    deadline_rate: float = 0.0,
) -> Action:
    """One legal action for whoever must act next, chosen at random; with `deadline_rate`,
    the phase's deadline runs out instead."""
    if not state.is_over and rng.random() < deadline_rate:
        if state.phase is Phase.PROPOSING:
            return draw_team(state, rng)
        if state.phase is Phase.VOTING:
            return VotesTimedOut(rng.random() < 0.5)
        return CardsTimedOut()
    if state.phase is Phase.PROPOSING:
        mission = rng.choice(state.open_missions())
        team = tuple(sorted(rng.sample(range(state.players), rules.team_size(state.players, mission))))
        return ProposeTeam(state.leader, team, mission if state.variants.targeting else None)
    if state.phase is Phase.VOTING:
        return CastVote(rng.choice(waiting_for(state)), rng.random() < approve_rate)
    if state.phase is Phase.MISSION:
        seat = rng.choice(waiting_for(state))
        return PlayCard(seat, seat in state.spies and rng.random() < spy_fail_rate)
    raise ValueError("the game is over")


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
