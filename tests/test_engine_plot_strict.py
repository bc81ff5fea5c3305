"""Stored Plot games are untrusted input: a damaged one is refused, or it plays on by the rules."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    PLOT_PHASES,
    Phase,
    StateFormatError,
    Variants,
    apply,
    check_state,
    new_game,
    state_from_dict,
    state_to_dict,
)
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


def stored_state_where(players: int, reached, deadline_rate: float, seeds: int) -> dict:
    """The stored form of the first state of a random Plot game (seeds tried in turn) for which
    `reached(state)` holds."""
    for seed in range(seeds):
        state, rng = start({"players": players, "targeting": False, "blind_spies": False, "seed": seed})
        while not state.is_over and not reached(state):
            state, _ = apply(state, random_action(state, rng, deadline_rate=deadline_rate))
        if not state.is_over:
            return json.loads(json.dumps(state_to_dict(state)))
    raise AssertionError(f"no game of {seeds} seeds reached the state looked for")


def test_a_no_confidence_taken_off_a_stored_proposal_is_refused():
    """Without its No Confidence, an overturned proposal reads as approved while the table is already
    proposing again: two approved teams would follow in one round. Such a state is refused."""
    stored = stored_state_where(
        7, lambda state: any(p.no_confidence is not None for r in state.rounds for p in r.proposals), 0.0, 50
    )
    for current in stored["rounds"]:
        for proposal in current["proposals"]:
            proposal["no_confidence"] = None
    with pytest.raises(StateFormatError, match="mission comes next"):
        state_from_dict(stored)


def opinion_makers_filled_by_the_deadline(state) -> bool:
    latest = state.rounds[-1].proposals[-1] if state.rounds else None
    filled = latest is not None and latest.votes is None and len(latest.auto_votes) > 1
    return state.phase is Phase.VOTING and filled


def test_an_opinion_makers_vote_filled_by_the_deadline_and_changed_in_storage_is_refused():
    """The deadline fills the Opinion Makers' missing votes as the group's setting says, all alike;
    a stored state where one of two differs would have two settings fill one proposal's votes."""
    stored = stored_state_where(7, opinion_makers_filled_by_the_deadline, 0.4, 300)
    seat = stored["rounds"][-1]["proposals"][-1]["auto_votes"][0]
    stored["pending_votes"][seat] = not stored["pending_votes"][seat]
    with pytest.raises(StateFormatError, match="one setting fills every missing vote"):
        state_from_dict(stored)


def test_a_card_the_deadline_played_listed_twice_while_the_watcher_looks_is_refused():
    """While Keeping a Close Eye on You is asked, the mission's cards are in, the deadline's among them:
    a stored list naming a member twice is damaged, as it is once the mission counts."""
    stored = stored_state_where(9, lambda state: state.phase is Phase.WATCH and state.rounds[-1].auto_cards, 0.4, 400)
    stored["rounds"][-1]["auto_cards"].insert(0, stored["rounds"][-1]["auto_cards"][0])
    with pytest.raises(StateFormatError, match="team members, once each, in order"):
        state_from_dict(stored)


@pytest.mark.parametrize("phase", sorted(PLOT_PHASES))
def test_a_game_without_plot_cards_stored_in_a_plot_step_is_refused(phase):
    """Nobody is asked about a card in a game without them: such a game would load and then
    wait for nobody, frozen."""
    state = new_game(5, random.Random(3), Variants())
    stored = json.loads(json.dumps(state_to_dict(state)))
    stored["phase"] = phase
    with pytest.raises(StateFormatError, match="step of the Plot cards"):
        state_from_dict(stored)
