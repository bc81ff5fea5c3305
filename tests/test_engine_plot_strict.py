"""Stored Plot games are untrusted input: a damaged one is refused, unless play by the rules
reaches it too, and then it plays on by the rules."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    PLOT_PHASES,
    Card,
    GameState,
    Phase,
    StateFormatError,
    UseKind,
    Variants,
    apply,
    check_state,
    new_game,
    state_from_dict,
    state_to_dict,
)
from engine.history import NotReplayable, replay_plot_state
from engine.simulate import random_action
from tests.test_engine_plot import plot_tables, start
from tests.test_engine_strict import one_value_changed

names = sorted({*Phase, *Card, *UseKind})
replacements = st.one_of(
    st.integers(-1, 11),
    st.booleans(),
    st.none(),
    st.sampled_from(names),
    st.lists(st.integers(-1, 10), max_size=4),
    st.lists(st.sampled_from([card.value for card in Card]), max_size=3),
)


def reached_by_play(state: GameState) -> bool:
    """Whether playing again, with `apply`, the history `state` records reaches exactly `state`
    (but for its version stamp), compared as stored. The replay plays only moves `apply`
    accepts: a state it reaches is one play reaches."""
    try:
        replayed = replay_plot_state(state)
    except NotReplayable:
        return False
    return state_to_dict(replayed) | {"version": 0} == state_to_dict(state) | {"version": 0}


@settings(max_examples=300, deadline=None)
@given(plot_tables, st.integers(0, 150), st.data())
def test_a_damaged_plot_state_is_refused_unless_play_reaches_it(table, steps, data):
    """Mutate one value of a real stored Plot state (a seat, a card, a kind of event, a flag, a
    list's element dropped or doubled): loading refuses it unless playing the history it records
    reaches it, and a state it loads plays on by the rules."""
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
    assert reached_by_play(loaded), f"loaded a state play cannot reach: {path} {how}"
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


def test_a_role_shown_to_a_seat_that_never_saw_it_is_refused():
    """A role seen names its viewer: the card use that showed it decides who, and nobody else."""
    stored = stored_state_where(7, lambda state: bool(state.plot.seen), 0.0, 100)
    seen = stored["plot"]["seen"][0]
    other = next(s for s in range(7) if s not in (seen["viewer"], seen["seat"]))
    stored["plot"]["seen"][0] = {**seen, "viewer": other}
    with pytest.raises(StateFormatError, match="plot.seen"):
        state_from_dict(stored)
    stored["plot"]["seen"][0] = seen
    stored["plot"]["seen"].append({**seen, "viewer": other})
    with pytest.raises(StateFormatError, match="plot.seen"):
        state_from_dict(stored)


def test_a_card_in_a_hand_never_dealt_is_refused():
    """A card swapped between a hand and the deck keeps every count right, but no deal gave it."""
    stored = stored_state_where(9, lambda state: any(state.plot.hands) and state.phase is Phase.PROPOSING, 0.0, 100)
    seat = next(s for s, hand in enumerate(stored["plot"]["hands"]) if hand)
    held = stored["plot"]["hands"][seat][0]
    index = next(i for i, card in enumerate(stored["plot"]["deck"]) if card != held)
    stored["plot"]["hands"][seat][0], stored["plot"]["deck"][index] = stored["plot"]["deck"][index], held
    with pytest.raises(StateFormatError, match="plot"):
        state_from_dict(stored)


def test_a_card_dealt_to_another_seat_loads_as_the_state_that_deal_reaches():
    """Not every change is damage: a card dealt, in the stored history and in the hands alike, to
    another seat is what that deal gives, and such a state loads."""
    stored = stored_state_where(
        7,
        lambda state: (
            state.phase is Phase.PROPOSING
            and len(state.rounds) == 1
            and any(u.card is Card.STRONG_LEADER for u in state.plot.uses[-1])
        ),
        0.0,
        200,
    )
    deal = next(u for u in stored["plot"]["uses"][-1] if u["card"] == Card.STRONG_LEADER.value)
    to = next(s for s in range(7) if s not in (deal["by"], deal["target"]) and not stored["plot"]["hands"][s])
    stored["plot"]["hands"][deal["target"]].remove(Card.STRONG_LEADER.value)
    stored["plot"]["hands"][to].append(Card.STRONG_LEADER.value)
    deal["target"] = to
    loaded = state_from_dict(stored)
    assert loaded.plot.hands[to] == (Card.STRONG_LEADER,) and reached_by_play(loaded)
