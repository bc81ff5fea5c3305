"""Random legal play to the end, for every player count and variant, checking the invariants."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    CastVote,
    EndReason,
    GameOver,
    IllegalAction,
    LeaderTimedOut,
    PlayCard,
    ProposeTeam,
    Side,
    Variants,
    apply,
    export_record,
    new_game,
    parse_record,
    replay,
    state_from_dict,
    state_to_dict,
)
from engine.simulate import play_to_end, random_action
from tests.strategies import habits, tables

games = st.builds(lambda table, habits: {**table, **habits}, tables, habits)


def play(game: dict):
    rng = random.Random(game["seed"])
    start = new_game(game["players"], rng, Variants(targeting=game["targeting"], blind_spies=game["blind_spies"]))
    steps = play_to_end(
        start,
        rng,
        approve_rate=game["approve_rate"],
        spy_fail_rate=game["spy_fail_rate"],
        deadline_rate=game["deadline_rate"],
    )
    return start, steps


@settings(max_examples=300, deadline=None)
@given(games)
def test_game_ends_by_the_rules_with_a_winner_that_agrees_with_the_track(game):
    _, steps = play(game)
    final = steps[-1][1]
    assert final.is_over
    assert len(final.played_rounds) <= 5
    assert sum(len(r.proposals) for r in final.rounds) <= 25
    track = final.mission_track()
    successes = track.count(True)
    failures = track.count(False)
    if final.end_reason is EndReason.THREE_SUCCESSFUL_MISSIONS:
        assert (successes, final.winner) == (3, Side.RESISTANCE) and failures < 3
    elif final.end_reason is EndReason.THREE_FAILED_MISSIONS:
        assert (failures, final.winner) == (3, Side.SPIES) and successes < 3
    else:
        assert final.end_reason is EndReason.FIVE_REJECTIONS and final.winner is Side.SPIES
        assert final.rounds[-1].rejections == 5 and successes < 3 and failures < 3
    game_over_events = [e for _, _, events in steps for e in events if isinstance(e, GameOver)]
    assert game_over_events == [GameOver(final.winner, final.end_reason, final.spies)]
    if game["targeting"]:
        missions = [r.mission for r in final.played_rounds]
        assert len(set(missions)) == len(missions)
        if 5 in missions:
            before = final.played_rounds[: missions.index(5)]
            assert sum(1 for r in before if r.succeeded) >= 2
    else:
        assert [r.mission for r in final.played_rounds] == list(range(1, len(final.played_rounds) + 1))


@settings(max_examples=150, deadline=None)
@given(games)
def test_version_grows_by_one_per_action_and_state_round_trips(game):
    start, steps = play(game)
    previous = start
    for _, state, _ in steps:
        assert state.version == previous.version + 1
        assert state_from_dict(json.loads(json.dumps(state_to_dict(state)))) == state
        previous = state


@settings(max_examples=150, deadline=None)
@given(games)
def test_every_exported_record_is_valid_and_replays_to_itself(game):
    _, steps = play(game)
    for _, state, _ in steps:
        record = export_record(state, "g")
        parsed = parse_record(json.loads(json.dumps(record)))
        assert ("outcome" in record) == state.is_over
        assert export_record(replay(parsed, state.spies, state.variants), "g")["missions"] == record["missions"]
    final = steps[-1][1]
    assert export_record(replay(parse_record(export_record(final, "g")), final.spies, final.variants), "g") == (
        export_record(final, "g")
    )


def arbitrary_action(players: int):
    seat = st.integers(-1, players)
    return st.one_of(
        st.builds(
            ProposeTeam,
            seat,
            st.lists(st.integers(-1, players), max_size=6).map(tuple),
            st.one_of(st.none(), st.integers(0, 6)),
        ),
        st.builds(CastVote, seat, st.booleans()),
        st.builds(PlayCard, seat, st.booleans()),
    )


@settings(max_examples=200, deadline=None)
@given(games, st.data())
def test_an_illegal_action_changes_nothing(game, data):
    rng = random.Random(game["seed"])
    state = new_game(game["players"], rng, Variants(targeting=game["targeting"], blind_spies=game["blind_spies"]))
    while not state.is_over:
        attempt = data.draw(arbitrary_action(game["players"]))
        before = state_to_dict(state)
        try:
            after, _ = apply(state, attempt)
        except IllegalAction:
            assert state_to_dict(state) == before
        else:
            assert after.version == state.version + 1
        state, _ = apply(state, random_action(state, rng))
    before = state_to_dict(state)
    for action in (CastVote(0, True), PlayCard(0, False), ProposeTeam(state.leader, (0, 1))):
        try:
            apply(state, action)
        except IllegalAction as refused:
            assert refused.reason.value == "game_over"
        else:
            raise AssertionError("a finished game accepted an action")
    assert state_to_dict(state) == before


def _numbers(value, path=()):
    """Where `value` (a field of an action) holds a seat or mission number: (path, number)."""
    if isinstance(value, int) and not isinstance(value, bool):
        yield path, value
    elif isinstance(value, tuple):
        for i, inner in enumerate(value):
            yield from _numbers(inner, (*path, i))


def _put(value, path, new):
    if not path:
        return new
    return value[: path[0]] + (_put(value[path[0]], path[1:], new),) + value[path[0] + 1 :]


def look_alikes(action) -> list:
    """Each copy of `action` with one of its seat or mission numbers written as something Python
    holds equal to it that is no number: a float, or for 0 and 1 a boolean."""
    copies = []
    for field in dataclasses.fields(action):
        value = getattr(action, field.name)
        for path, number in _numbers(value):
            for alike in [float(number)] + ([bool(number)] if number in (0, 1) else []):
                copies.append(dataclasses.replace(action, **{field.name: _put(value, path, alike)}))
    return copies


@settings(max_examples=60, deadline=None)
@given(tables, st.booleans(), st.sampled_from([0.0, 0.2]))
def test_a_seat_or_mission_given_as_a_boolean_or_a_float_is_refused_in_every_action(table, plot_cards, deadline_rate):
    """`ProposeTeam(mission=True)` was taken for mission 1 without Targeting (true == 1 in Python):
    no seat, team member, target or mission of any action, player's or deadline's, is taken but as
    the number itself."""
    rng = random.Random(table["seed"])
    variants = Variants(targeting=table["targeting"], blind_spies=table["blind_spies"], plot_cards=plot_cards)
    state = new_game(table["players"], rng, variants)
    while not state.is_over:
        action = random_action(state, rng, deadline_rate=deadline_rate)
        if isinstance(action, ProposeTeam | LeaderTimedOut) and action.mission is None:
            action = dataclasses.replace(action, mission=state.open_missions()[0])  # the one it attempts
        for alike in look_alikes(action):
            with pytest.raises(IllegalAction):
                apply(state, alike)
        state, _ = apply(state, action)
