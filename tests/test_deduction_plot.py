"""Hints with Plot cards: what a viewer saw is folded in exactly, for that viewer only.

A role seen is certain; a watched Fail makes its player a spy, a watched Success puts the
mission's Fail cards on the other members; a spotlighted Fail is a public fact. Two games a
viewer cannot tell apart give identical hints, and one viewer's private result never changes
another viewer's hints.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deduction.analysis import deduce
from deduction.batch import answer
from deduction.exact import ImpossibleRecord
from deduction.knowledge import SeenCard, Viewer, viewer_of
from engine import Variants, export_record, new_game, record_of, seat_view
from engine.plot import CardSeen, RoleSeen
from engine.simulate import play_to_end

SETTINGS = settings(max_examples=40, deadline=None)


def plot_game(players: int, seed: int, **rates: float):
    """A whole random Plot game, its state at every step."""
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(plot_cards=True))
    return [state] + [after for _, after, _ in play_to_end(state, rng, **rates)]


def seen_anything(state) -> bool:
    return state.plot is not None and bool(state.plot.seen)


def states_with_private_results(count: int, seed: int):
    """States of random Plot games (7-10 players) in which somebody saw something."""
    found = []
    rng = random.Random(seed)
    while len(found) < count:
        states = plot_game(rng.choice((7, 8, 9, 10)), rng.getrandbits(32), plot_use_rate=0.9)
        found += [s for s in states[:: max(1, len(states) // 6)] if seen_anything(s) and not s.is_over]
    return found[:count]


def test_a_seat_view_becomes_a_viewer_with_what_it_saw():
    for state in states_with_private_results(20, 1):
        for seat in range(state.players):
            own = seat_view(state, seat)
            viewer = viewer_of(own)
            if seat in state.spies:
                assert viewer.is_spy and viewer.known_roles == () and viewer.seen_cards == ()
                continue
            assert viewer.known_roles == tuple(sorted((s.seat, s.spy) for s in own.seen_roles))
            assert viewer.seen_cards == tuple(SeenCard(c.mission, c.seat, c.fail) for c in own.seen_cards)


def test_what_a_resistance_viewer_saw_is_certain_for_them():
    checked = 0
    for state in states_with_private_results(30, 2):
        record = record_of(state, "g").without_outcome()
        for seat in range(state.players):
            if seat in state.spies:
                continue
            own = seat_view(state, seat)
            d = deduce(record, viewer_of(own))
            for seen in own.seen_roles:
                assert d.spy_probability[seen.seat] == (1.0 if seen.spy else 0.0)
                checked += 1
            for card in own.seen_cards:
                if card.fail:
                    assert d.spy_probability[card.seat] == 1.0
                    checked += 1
    assert checked >= 10


def seven_player_plot_record(missions: list[dict]) -> dict:
    """A public record of a 7-player game with Plot cards (3 spies), its missions as given."""
    return {
        "format": "resistance-record/1",
        "id": "watch",
        "players": 7,
        "spies": 3,
        "variants": {"targeting": False, "blind_spies": False, "plot_cards": True},
        "missions": missions,
    }


def test_a_watched_success_puts_the_fail_on_the_others():
    """Three members, one Fail: watching one Success leaves the Fail to the other two."""
    record = seven_player_plot_record(
        [
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [{"leader": 0, "team": [0, 1], "votes": [True] * 7}],
                "fails": 1,
                "plot": [
                    {"kind": "deal", "card": "keeping_a_close_eye_on_you", "to": 6, "proposal": 0},
                    {"kind": "deal", "card": "no_confidence", "to": 5, "proposal": 0},
                    {"kind": "watch", "by": 6, "target": 0, "proposal": 0},
                ],
            }
        ]
    )
    request = {"record": record, "viewer": 6, "seen_cards": [{"mission": 1, "seat": 0, "fail": False}]}
    watched = answer(json.dumps(request), "behaviour")
    assert watched["spy_probability"][1] == 1.0 and watched["spy_probability"][0] < 1.0
    blind = answer(json.dumps({"record": record, "viewer": 6}), "behaviour")
    assert 0.0 < blind["spy_probability"][1] < 1.0
    # Another viewer's answer does not move with what seat 6 saw, even with it in the record.
    other = answer(json.dumps({"record": record, "viewer": 4}), "behaviour")
    told = record | {"private": {"6": [{"card_of": 0, "mission": 1, "fail": False}]}}
    assert answer(json.dumps({"record": told, "viewer": 4}), "behaviour") == other
    assert "error" not in other
    # What the viewer says it saw must be possible: seat 2 played no card on mission 1.
    wrong = {"record": record, "viewer": 6, "seen_cards": [{"mission": 1, "seat": 2, "fail": True}]}
    assert "error" in answer(json.dumps(wrong), "behaviour")


def test_two_watched_successes_of_one_mission_put_its_fail_on_the_member_left():
    """Three members, one Fail; the viewer watched two of them play Success (two Keeping a Close Eye
    on You cards): the third is certainly a spy. Read one card at a time, each only said the Fail
    lay among the other two."""
    record = seven_player_plot_record(
        [
            {
                "mission": 1,
                "team_size": 2,
                "fails_required": 1,
                "proposals": [{"leader": 0, "team": [0, 1], "votes": [True] * 7}],
                "fails": 0,
                "plot": [
                    {"kind": "deal", "card": "keeping_a_close_eye_on_you", "to": 6, "proposal": 0},
                    {"kind": "deal", "card": "no_confidence", "to": 5, "proposal": 0},
                ],
            },
            {
                "mission": 2,
                "team_size": 3,
                "fails_required": 1,
                "proposals": [{"leader": 1, "team": [1, 2, 3], "votes": [True] * 7}],
                "fails": 1,
                "plot": [
                    {"kind": "deal", "card": "keeping_a_close_eye_on_you", "to": 6, "proposal": 0},
                    {"kind": "deal", "card": "no_confidence", "to": 4, "proposal": 0},
                    {"kind": "watch", "by": 6, "target": 1, "proposal": 0},
                    {"kind": "watch", "by": 6, "target": 2, "proposal": 0},
                ],
            },
        ]
    )
    seen = [{"mission": 2, "seat": 1, "fail": False}, {"mission": 2, "seat": 2, "fail": False}]
    both = answer(json.dumps({"record": record, "viewer": 6, "seen_cards": seen}), "behaviour")
    assert both["spy_probability"][3] == 1.0
    assert 0.0 < both["spy_probability"][1] < 1.0 and 0.0 < both["spy_probability"][2] < 1.0
    one = answer(json.dumps({"record": record, "viewer": 6, "seen_cards": seen[:1]}), "behaviour")
    assert 0.0 < one["spy_probability"][3] < 1.0


def test_a_spotlighted_fail_is_public():
    states = [s for seed in range(40) for s in plot_game(8, seed, plot_use_rate=1.0)]
    shown = [
        (s, use)
        for s in states
        if s.plot is not None
        for uses in s.plot.uses
        for use in uses
        if use.kind == "spotlight" and use.fail
    ]
    assert shown, "no spotlighted Fail in 40 games"
    state, use = shown[-1]
    d = deduce(record_of(state, "g").without_outcome(), Viewer.outsider())
    assert d.spy_probability[use.target] == 1.0


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.data())
def test_one_viewers_private_result_never_changes_anothers_hints(seed, data):
    """Adding, removing or flipping what seat A saw changes nothing for seat B."""
    states = states_with_private_results(1, seed)
    state = states[0]
    viewers = [s for s in range(state.players) if s not in state.spies]
    b = data.draw(st.sampled_from(viewers))
    record = record_of(state, "g").without_outcome()
    before = deduce(record, viewer_of(seat_view(state, b))).spy_probability
    others = tuple(seen for seen in state.plot.seen if seen.viewer != b)
    mine = tuple(seen for seen in state.plot.seen if seen.viewer == b)
    # Every other viewer's private results taken away: B's hints stay exactly the same.
    stripped = replace(state, plot=replace(state.plot, seen=mine))
    assert deduce(record, viewer_of(seat_view(stripped, b))).spy_probability == before
    # A made-up private result for someone else: the same again.
    someone = data.draw(st.sampled_from([s for s in range(state.players) if s != b]))
    invented = RoleSeen(someone, b, False)
    padded = replace(state, plot=replace(state.plot, seen=others + mine + (invented,)))
    assert deduce(record, viewer_of(seat_view(padded, b))).spy_probability == before


def hints_for(state, seat: int):
    """What the bot shows `seat`: the public record and the seat's own view, nothing else."""
    return deduce(record_of(state, "g").without_outcome(), viewer_of(seat_view(state, seat))).spy_probability


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.data())
def test_games_a_viewer_cannot_tell_apart_give_identical_hints(seed, data):
    """The same game with the spies seated otherwise, in a way the viewer's own knowledge allows
    (their role, what they saw, the public record), gives the viewer the very same view and hints."""
    state = states_with_private_results(1, seed)[0]
    b = data.draw(st.sampled_from([s for s in range(state.players) if s not in state.spies]))
    d = deduce(record_of(state, "g").without_outcome(), viewer_of(seat_view(state, b)))
    rows = d.facts.possible_rows
    row = rows[data.draw(st.integers(0, len(rows) - 1))]
    twin = replace(state, spies=tuple(int(s) for s in np.flatnonzero(row)))
    assert seat_view(twin, b) == seat_view(state, b)
    assert hints_for(twin, b) == hints_for(state, b)


def test_requests_with_plot_knowledge_are_checked():
    state = states_with_private_results(1, 3)[0]
    record = export_record(state, "g")
    outsider = {"record": record, "viewer": None, "known": {"1": "spy"}}
    assert answer(json.dumps(outsider), "behaviour") == {
        "error": "known, seen_cards: only a viewer at the table sees with Plot cards"
    }
    bad_role = {"record": record, "viewer": 0, "known": {"1": "traitor"}}
    assert answer(json.dumps(bad_role), "behaviour") == {"error": 'known.1: must be "spy" or "resistance"'}
    bad_seat = {"record": record, "viewer": 0, "known": {"99": "spy"}}
    assert "known" in answer(json.dumps(bad_seat), "behaviour")["error"]
    bad_card = {"record": record, "viewer": 0, "seen_cards": [{"mission": 1, "seat": 0}]}
    assert "seen_cards[0]" in answer(json.dumps(bad_card), "behaviour")["error"]


def test_contradicting_knowledge_is_impossible():
    state = states_with_private_results(1, 4)[0]
    record = record_of(state, "g").without_outcome()
    viewer = next(s for s in range(state.players) if s not in state.spies)
    others = [s for s in range(state.players) if s != viewer]
    everyone_spy = Viewer.resistance(viewer, tuple((s, True) for s in others))
    with pytest.raises(ImpossibleRecord):
        deduce(record, everyone_spy)


def test_card_seen_records_carry_only_the_viewers_own_entry():
    state = states_with_private_results(1, 5)[0]
    seer = state.plot.seen[0].viewer
    exported = export_record(state, "g", private_for=seer)
    assert set(exported.get("private", {})) <= {str(seer)}
    kinds = {type(s) for s in state.plot.seen}
    assert kinds <= {RoleSeen, CardSeen}


@SETTINGS
@given(st.integers(5, 10), st.integers(0, 2**32 - 1))
def test_every_resistance_player_gets_hints_at_every_moment_of_a_plot_game(players, seed):
    """Whatever a card showed and whenever it was asked: a card watched before its mission's
    result, or one the deadline played, never stops a player's hints; a watched Fail is a
    certain spy at once."""
    for state in plot_game(players, seed, plot_use_rate=0.9, deadline_rate=0.1):
        record = record_of(state, "g").without_outcome()
        for seat in range(players):
            if seat in state.spies:
                continue
            viewer = viewer_of(seat_view(state, seat))
            probability = deduce(record, viewer).spy_probability
            for card in viewer.seen_cards:
                if card.fail:
                    assert probability[card.seat] == 1.0


def test_a_card_of_a_seat_not_on_that_mission_is_refused():
    state = next(s for s in states_with_private_results(20, 5) if s.played_rounds)
    record = record_of(state, "g").without_outcome()
    mission = state.played_rounds[0]
    outsider = next(s for s in range(state.players) if s not in mission.team)
    viewer = next(s for s in range(state.players) if s not in state.spies)
    with pytest.raises(ValueError, match="played no card"):
        deduce(record, Viewer.resistance(viewer, (), (SeenCard(mission.mission, outsider, False),)))


def _example_request(viewer: int, seen_cards: list[dict]) -> str:
    from tests.test_engine_plot_rules import rules_example_record

    record = rules_example_record()
    del record["private"]
    return json.dumps({"record": record, "viewer": viewer, "seen_cards": seen_cards})


IMPOSSIBLE_SEEN_CARDS = {
    # Mission 1 (seats 3 and 6) had no Fail card.
    "a Fail on a mission without one": ([{"mission": 1, "seat": 3, "fail": True}], "seen_cards[0]"),
    # Mission 2 (seats 4, 5 and 6) had one Fail card: at most two Success cards to see.
    "every card of a mission with a Fail a Success": (
        [{"mission": 2, "seat": s, "fail": False} for s in (4, 5, 6)],
        "seen_cards[2]",
    ),
    "one card seen as both": (
        [{"mission": 2, "seat": 5, "fail": True}, {"mission": 2, "seat": 5, "fail": False}],
        "seen_cards[1]",
    ),
}


@pytest.mark.parametrize("case", list(IMPOSSIBLE_SEEN_CARDS))
def test_seen_cards_that_cannot_go_together_with_the_mission_are_refused(case):
    """Each card alone fits the record; together with the mission's count of Fail cards they do not."""
    cards, where = IMPOSSIBLE_SEEN_CARDS[case]
    answered = answer(_example_request(0, cards), "behaviour")
    assert answered.get("error", "").startswith(where), answered


def test_a_spotlighted_card_seen_otherwise_than_the_table_saw_it_is_refused():
    spotlighted = [
        (state, m, use)
        for seed in range(60)
        for state in plot_game(8, seed, plot_use_rate=1.0)[-1:]
        for m in state.played_rounds
        for use in state.plot.uses[state.rounds.index(m)]
        if use.kind.value == "spotlight"
    ]
    state, m, use = spotlighted[0]
    record = export_record(state, "g")
    del record["outcome"]
    viewer = next(s for s in range(state.players) if s not in state.spies)
    as_shown = {"mission": m.mission, "seat": use.target, "fail": bool(use.fail)}
    otherwise = as_shown | {"fail": not use.fail}
    request = {"record": record, "viewer": viewer}
    assert "error" not in answer(json.dumps(request | {"seen_cards": [as_shown]}), "behaviour")
    refused = answer(json.dumps(request | {"seen_cards": [otherwise]}), "behaviour")
    assert refused == {"error": f"seen_cards[0].fail: seat {use.target} played that card face up in the spotlight"}


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from([7, 8, 9, 10]))
def test_what_a_resistance_player_really_saw_is_never_refused(seed, players):
    state = plot_game(players, seed, plot_use_rate=0.9)[-1]
    record = export_record(state, "g")
    del record["outcome"]
    for viewer in (s for s in range(players) if s not in state.spies):
        mine = [seen for seen in state.plot.seen if seen.viewer == viewer]
        request = {
            "record": record,
            "viewer": viewer,
            "known": {str(s.seat): "spy" if s.spy else "resistance" for s in mine if isinstance(s, RoleSeen)},
            "seen_cards": [
                {"mission": s.mission, "seat": s.seat, "fail": s.fail} for s in mine if isinstance(s, CardSeen)
            ],
        }
        answered = answer(json.dumps(request), "behaviour")
        assert "error" not in answered, answered
        assert answered["spy_probability"][viewer] == 0.0
        assert abs(sum(answered["spy_probability"]) - state.spy_count) < 1e-9
