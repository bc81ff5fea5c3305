"""What a deadline does when nobody acted in time, as engine actions.

The rulebook lets only the table's vote reject a team, so a leader who lets the time run
out gets a team drawn at random and the table votes on it as usual. The draw takes its
random source from the caller, as the deal in `new_game` does, so the engine stays pure.
"""

from __future__ import annotations

import random

from engine import rules
from engine.actions import LeaderTimedOut
from engine.state import GameState, Phase


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
