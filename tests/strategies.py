"""Hypothesis strategies shared by the property tests, and the games they describe."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from engine import GameState, Variants, apply, new_game
from engine.simulate import random_action

# A table: its size, its variants, and the seed of everything random in its game.
tables = st.fixed_dictionaries(
    {
        "players": st.integers(5, 10),
        "targeting": st.booleans(),
        "blind_spies": st.booleans(),
        "seed": st.integers(0, 2**32),
    }
)

# How random players behave: how often they approve, how often a spy fails, how often a deadline passes.
habits = st.fixed_dictionaries(
    {
        "approve_rate": st.floats(0.0, 1.0),
        "spy_fail_rate": st.floats(0.0, 1.0),
        "deadline_rate": st.sampled_from([0.0, 0.0, 0.1, 0.4]),
    }
)


def start(table: dict) -> tuple[GameState, random.Random]:
    """The table's new game and the random source that goes on from its deal."""
    rng = random.Random(table["seed"])
    variants = Variants(targeting=table["targeting"], blind_spies=table["blind_spies"])
    return new_game(table["players"], rng, variants), rng


def played(table: dict, steps: int, **rates: float) -> GameState:
    """The table's game after up to `steps` random legal actions (fewer if it ends first)."""
    state, rng = start(table)
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, **rates))
    return state
