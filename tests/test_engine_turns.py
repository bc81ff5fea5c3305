"""Whose turn it is (`engine.turns`): checked against what `apply` accepts, over random games."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    CastVote,
    IllegalAction,
    Phase,
    PlayCard,
    ProposeTeam,
    Variants,
    apply,
    ballot,
    legal_actions,
    new_game,
    public_view,
    waiting_for,
)
from engine.simulate import random_action
from tests.strategies import start, tables

deadline_rates = st.sampled_from([0.0, 0.2])


def accepted(state, action) -> bool:
    try:
        apply(state, action)
    except IllegalAction:
        return False
    return True


@settings(max_examples=80, deadline=None)
@given(tables, deadline_rates)
def test_the_game_waits_for_exactly_the_seats_that_may_act(table, deadline_rate):
    state, rng = start(table)
    while not state.is_over:
        waiting = waiting_for(state)
        assert waiting and public_view(state).waiting_for == waiting
        for seat in range(state.players):
            options = list(legal_actions(state, seat))
            assert bool(options) == (seat in waiting)
            # Every listed action is accepted; the same kind of action by another seat is not.
            for action in rng.sample(options, min(3, len(options))):
                assert accepted(state, action)
            if seat not in waiting:
                probes = [CastVote(seat, True), PlayCard(seat, False), ProposeTeam(seat, (0, 1), None)]
                assert not any(accepted(state, probe) for probe in probes)
        if state.phase is Phase.MISSION:
            for seat in waiting:
                assert (PlayCard(seat, True) in legal_actions(state, seat)) == (seat in state.spies)
        state, _ = apply(state, random_action(state, rng, deadline_rate=deadline_rate))
    assert waiting_for(state) == ()
    assert all(not list(legal_actions(state, seat)) for seat in range(state.players))


def test_a_leader_is_offered_every_team_for_every_open_mission():
    state = new_game(7, random.Random(0), Variants(targeting=True), first_leader=2)
    proposals = list(legal_actions(state, 2))
    # C(7,2) + C(7,3) + C(7,3) + C(7,4) teams for missions 1-4; mission 5 is still locked.
    assert len(proposals) == 21 + 35 + 35 + 35
    assert {p.mission for p in proposals} == {1, 2, 3, 4}


@settings(max_examples=80, deadline=None)
@given(tables, deadline_rates)
def test_the_ballot_moves_by_one_per_decision_and_never_within_one(table, deadline_rate):
    state, rng = start(table)
    seen = {ballot(state)}
    while not state.is_over:
        before = state
        state, _ = apply(state, random_action(state, rng, deadline_rate=deadline_rate))
        decided = state.phase is not before.phase or state.is_over or before.phase is Phase.PROPOSING
        if state.is_over:
            break
        if decided or len(state.rounds) != len(before.rounds):
            assert ballot(state) == ballot(before) + 1
            assert ballot(state) not in seen
        else:
            assert ballot(state) == ballot(before)
        seen.add(ballot(state))
