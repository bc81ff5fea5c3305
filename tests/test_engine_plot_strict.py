"""Stored Plot games are untrusted input: a damaged one is refused, or it plays on by the rules."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import StateFormatError, apply, check_state, state_from_dict, state_to_dict
from engine.simulate import random_action
from tests.test_engine_plot import plot_tables, start
from tests.test_engine_strict import one_value_changed

replacements = st.one_of(
    st.integers(-1, 11),
    st.booleans(),
    st.none(),
    st.sampled_from(["strong_leader", "no_confidence", "opinion_maker", "watch", "deal", "lead", "overturn", "watch"]),
    st.lists(st.integers(-1, 10), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(plot_tables, st.integers(0, 150), st.data())
def test_a_damaged_plot_state_is_refused_or_plays_on_by_the_rules(table, steps, data):
    state, rng = start(table)
    for _ in range(steps):
        if state.is_over:
            break
        state, _ = apply(state, random_action(state, rng, deadline_rate=table["deadline_rate"]))
    stored = json.loads(json.dumps(state_to_dict(state)))
    mutated, path, how = one_value_changed(stored, data, replacements)
    try:
        loaded = state_from_dict(mutated)
    except StateFormatError:
        return
    play = random.Random(0)
    for _ in range(30):
        if loaded.is_over:
            break
        loaded, _ = apply(loaded, random_action(loaded, play))
        check_state(loaded)
