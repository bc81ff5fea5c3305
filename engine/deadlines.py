"""What a deadline does when nobody acted in time, as engine actions.

The rulebook lets only the table's vote reject a team, so a leader who lets the time run
out gets a team drawn at random and the table votes on it as usual. With Plot cards a
missed deal is dealt at random, and a missed immediate card gets a random legal choice;
a holder asked in a window who lets the time run out passes (`ChanceTimedOut`). The draw takes its
random source from the caller, as the deal in `new_game` does, so the engine stays pure.
"""

from __future__ import annotations

import random

from engine import rules
from engine.actions import DealTimedOut, ImmediateTimedOut, LeaderTimedOut
from engine.state import GameState, Phase
from engine.windows import immediate_options


def draw_team(state: GameState, rng: random.Random, preferred_mission: int | None = None) -> LeaderTimedOut:
    """A legal team drawn at random for a leader who missed the deadline.

    Under Targeting the mission is `preferred_mission` when the leader had already picked an
    open one, else drawn among the open missions.
    """
    if state.phase is not Phase.PROPOSING:
        raise ValueError(f"no leader's turn to draw for in the {state.phase.value} phase")
    open_missions = state.open_missions()
    if not state.variants.targeting:
        mission = open_missions[0]
    elif preferred_mission in open_missions:
        mission = preferred_mission
    else:
        mission = rng.choice(open_missions)
    team = tuple(sorted(rng.sample(range(state.players), rules.team_size(state.players, mission))))
    return LeaderTimedOut(team=team, mission=mission if state.variants.targeting else None)


def draw_deal(state: GameState, rng: random.Random) -> DealTimedOut:
    """The rest of the deal, drawn at random for a leader who missed the deadline: the drawn
    cards in a random order, each to a random player other than the leader."""
    if state.phase is not Phase.DEAL or state.plot is None or state.plot.receiving is not None:
        raise ValueError("no leader's deal to draw for now")
    others = [seat for seat in range(state.players) if seat != state.leader]
    cards = rng.sample(state.plot.drawn, len(state.plot.drawn))
    return DealTimedOut(deals=tuple((card, rng.choice(others)) for card in cards))


def draw_immediate(state: GameState, rng: random.Random) -> ImmediateTimedOut:
    """A random legal choice for the receiver of an immediate card who missed the deadline:
    the card must be resolved, so the time running out is never a pass."""
    if state.phase is not Phase.DEAL or state.plot is None or state.plot.receiving is None:
        raise ValueError("no immediate card waits to be resolved")
    target, card = rng.choice(immediate_options(state))
    return ImmediateTimedOut(target=target, card=card)
