"""The deduction engine's exact part against a plain brute force, on random legal games.

Every spy assignment is enumerated here with `itertools.combinations`, independently of
`deduction.assignments`: a set of spies is consistent when every played mission showing
`f` Fail cards had at least `f` of them on its approved team.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deduction.analysis import deduce
from deduction.assignments import all_assignments
from deduction.exact import ImpossibleRecord, exact_facts
from deduction.knowledge import Viewer
from deduction.reasons import MAX_REASONS_PER_SEAT, explain
from engine import GameRecord, Variants, apply, new_game, parse_record, record_of
from engine.simulate import random_action
from tests.records import impossible_record, record_dict

MODELS = ("uniform", "behaviour")
EXACT_CODES = {"certain_spy", "assignments_remaining", "mission_fails", "certain_resistance", "off_failed_teams"}

SETTINGS = settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- random games


@dataclass(frozen=True)
class Game:
    record: GameRecord
    spies: tuple[int, ...]  # the true spies


@st.composite
def games(draw) -> Game:
    """A random legal game played by the engine, stopped after a random number of actions."""
    seed = draw(st.integers(0, 2**32 - 1))
    players = draw(st.integers(5, 10))
    targeting = draw(st.booleans())
    spy_fail_rate = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]) | st.floats(0.0, 1.0))
    approve_rate = draw(st.sampled_from([0.4, 0.6, 0.8]))
    steps = draw(st.none() | st.integers(0, 300))  # None: play to the end
    rng = random.Random(seed)
    state = new_game(players, rng, Variants(targeting=targeting))
    done = 0
    while not state.is_over and (steps is None or done < steps):
        action = random_action(state, rng, approve_rate=approve_rate, spy_fail_rate=spy_fail_rate)
        state, _ = apply(state, action)
        done += 1
    return Game(record_of(state, "g"), state.spies)


@st.composite
def games_with_viewer(draw) -> tuple[Game, Viewer]:
    game = draw(games())
    players = game.record.players
    kind = draw(st.sampled_from(["outsider", "resistance", "any_seat", "spy"]))
    if kind == "outsider":
        return game, Viewer.outsider()
    if kind == "resistance":
        seat = draw(st.sampled_from([s for s in range(players) if s not in game.spies]))
        return game, Viewer.resistance(seat)
    if kind == "any_seat":  # may be a true spy asking as if Resistance: the record may rule that out
        return game, Viewer.resistance(draw(st.integers(0, players - 1)))
    return game, Viewer.spy(draw(st.sampled_from(game.spies)), game.spies)


# ---------------------------------------------------------------- brute force


def record_consistent_sets(record: GameRecord) -> list[frozenset[int]]:
    """Every set of spies that the record alone does not rule out."""
    played = [m for m in record.missions if m.fails is not None]
    found = []
    for combo in combinations(range(record.players), record.spies):
        spies = frozenset(combo)
        if all(len(spies & set(m.proposals[-1].team)) >= m.fails for m in played):
            found.append(spies)
    return found


def allowed_sets(record: GameRecord, viewer: Viewer) -> list[frozenset[int]]:
    """Record-consistent sets that the viewer's own knowledge allows too."""
    sets = record_consistent_sets(record)
    if viewer.seat is None:
        return sets
    if viewer.known_spies is None:
        return [s for s in sets if viewer.seat not in s]
    return [s for s in sets if s == frozenset(viewer.known_spies)]


def uniform_probability(sets: list[frozenset[int]], players: int) -> list[float]:
    return [sum(seat in s for s in sets) / len(sets) for seat in range(players)]


def as_sets(assignments: np.ndarray, mask: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(int(s) for s in np.flatnonzero(row)) for row in assignments[mask]}


# ---------------------------------------------------------------- properties


@SETTINGS
@given(games_with_viewer())
def test_exact_facts_and_uniform_model_match_brute_force(case: tuple[Game, Viewer]) -> None:
    game, viewer = case
    record = game.record
    consistent = record_consistent_sets(record)
    allowed = allowed_sets(record, viewer)
    # The true spies always explain the record.
    assert frozenset(game.spies) in consistent

    if not allowed:
        assert viewer.seat in game.spies and not viewer.is_spy
        with pytest.raises(ImpossibleRecord):
            exact_facts(record, viewer)
        for model in MODELS:
            with pytest.raises(ImpossibleRecord):
                deduce(record, viewer, model)
        return

    facts = exact_facts(record, viewer)
    every = all_assignments(record.players, record.spies)
    assert len(every) == math.comb(record.players, record.spies)
    assert as_sets(every, np.ones(len(every), dtype=bool)) == {
        frozenset(c) for c in combinations(range(record.players), record.spies)
    }
    assert as_sets(facts.assignments, facts.consistent) == set(consistent)
    assert as_sets(facts.assignments, facts.possible) == set(allowed)

    result = deduce(record, viewer, "uniform")
    assert result.consistent == len(consistent)
    assert result.possible == len(allowed)
    expected = uniform_probability(allowed, record.players)
    assert result.spy_probability == pytest.approx(expected, abs=1e-12)

    others = [s for s in range(record.players) if s != viewer.seat]
    assert result.certain_spies == tuple(s for s in others if all(s in a for a in allowed))
    assert result.certain_resistance == tuple(s for s in others if not any(s in a for a in allowed))
    assert facts.certain_spies == result.certain_spies
    assert facts.certain_resistance == result.certain_resistance


@SETTINGS
@given(games_with_viewer())
def test_probabilities_are_probabilities_for_both_models(case: tuple[Game, Viewer]) -> None:
    game, viewer = case
    record = game.record
    allowed = allowed_sets(record, viewer)
    if not allowed:
        return  # covered by the brute-force test above
    for model in MODELS:
        result = deduce(record, viewer, model)
        p = result.spy_probability
        assert len(p) == record.players
        assert all(not math.isnan(x) for x in p), (model, p)
        assert all(0.0 <= x <= 1.0 for x in p), (model, p)
        assert sum(p) == pytest.approx(record.spies, abs=1e-9), model
        assert result.consistent == len(record_consistent_sets(record))
        assert result.possible == len(allowed)
        if viewer.seat is not None and not viewer.is_spy:
            assert p[viewer.seat] == 0.0
        if viewer.is_spy:
            assert p == tuple(1.0 if seat in game.spies else 0.0 for seat in range(record.players)), model
        # A seat that is a spy in every allowed set (or in none) is certain under any model.
        for seat in result.certain_spies:
            assert p[seat] == 1.0
        for seat in result.certain_resistance:
            assert p[seat] == 0.0


@SETTINGS
@given(games())
def test_spy_viewer_with_the_true_spies_gets_the_truth(game: Game) -> None:
    seat = game.spies[0]
    viewer = Viewer.spy(seat, game.spies)
    for model in MODELS:
        result = deduce(game.record, viewer, model)
        assert result.possible == 1
        assert result.spy_probability == tuple(float(s in game.spies) for s in range(game.record.players))
        assert set(result.certain_spies) == set(game.spies) - {seat}
        assert set(result.certain_resistance) == set(range(game.record.players)) - set(game.spies)


def _mission(record: GameRecord, number: int):
    found = [m for m in record.missions if m.mission == number and m.fails is not None]
    assert len(found) == 1, f"reason names mission {number}, which was not played"
    return found[0]


@SETTINGS
@given(games_with_viewer())
def test_exact_reasons_are_true(case: tuple[Game, Viewer]) -> None:
    """The exact reasons hold in every assignment left; behavioural ones are checked against the
    model's own attribution in tests/test_deduction_reasons.py."""
    game, viewer = case
    record = game.record
    allowed = allowed_sets(record, viewer)
    if not allowed:
        return
    for model in MODELS:
        result = deduce(record, viewer, model)
        explanation = explain(record, result)
        assert len(explanation.seats) == record.players
        for seat, reasons in enumerate(explanation.seats):
            assert len(reasons) <= MAX_REASONS_PER_SEAT
            if seat == viewer.seat:
                assert reasons == ()
            kinds = [r.code in EXACT_CODES for r in reasons]
            assert kinds == sorted(kinds, reverse=True), [r.code for r in reasons]  # exact ones first
            if model == "uniform":
                assert all(kinds), [r.code for r in reasons]
            assert all(r.args["seat"] == seat for r in reasons)
        for reason in explanation.all():
            a = reason.args
            seat = a.get("seat")
            if seat is not None:
                assert seat != viewer.seat and 0 <= seat < record.players
            if reason.code == "certain_spy":
                assert all(seat in s for s in allowed)
            elif reason.code == "certain_resistance":
                assert not any(seat in s for s in allowed)
            elif reason.code == "assignments_remaining":
                assert a["count"] == result.possible == len(allowed)
            elif reason.code == "mission_fails":
                mission = _mission(record, a["mission"])
                team = set(mission.proposals[-1].team)
                if viewer.seat is not None and not viewer.is_spy:
                    team.discard(viewer.seat)
                assert set(a["seats"]) == team and len(a["seats"]) == len(team)
                assert a["at_least"] == mission.fails > 0
                assert all(len(s & team) >= mission.fails for s in allowed)
            elif reason.code == "off_failed_teams":
                # The seat is on none of the teams whose Fail cards the table is told of, and has no other reason.
                assert explanation.seats[a["seat"]] == (reason,) and a["points"] <= -10
                assert all(a["seat"] not in _mission(record, m).proposals[-1].team for m in a["missions"])
            elif reason.code == "small_effects":
                # Only for a seat with no other reason, moved 10 points or more in all by effects each under 3.
                assert explanation.seats[a["seat"]] == (reason,) and abs(a["points"]) >= 10 and a["count"] >= 4
            else:
                assert reason.code in {"mission_result", "votes", "proposals"}, reason.code
                assert abs(a["points"]) >= 3


# ---------------------------------------------------------------- impossible records and bad viewers


def two_fails_on_0_and_1() -> GameRecord:
    """5 players; mission 1's team [0, 1] showed 2 Fail cards: both are spies."""
    return parse_record(impossible_record())


def empty_record(players: int = 5) -> GameRecord:
    spies = {5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}[players]
    return parse_record(record_dict("empty", players, spies, []))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    "viewer",
    [Viewer.resistance(0), Viewer.resistance(1), Viewer.spy(2, (2, 3)), Viewer.spy(0, (0, 2))],
    ids=["resistance-0", "resistance-1", "spy-2-3", "spy-0-2"],
)
def test_impossible_record_raises_impossible_record(model: str, viewer: Viewer) -> None:
    record = two_fails_on_0_and_1()
    with np.errstate(all="raise"):
        with pytest.raises(ImpossibleRecord) as caught:
            deduce(record, viewer, model)
        with pytest.raises(ImpossibleRecord):
            exact_facts(record, viewer)
    message = str(caught.value)
    assert len(message) > 10 and "fail" in message.lower()
    assert "nan" not in message.lower()


@pytest.mark.parametrize("model", MODELS)
def test_the_impossible_record_is_fine_for_those_it_is_possible_for(model: str) -> None:
    record = two_fails_on_0_and_1()
    for viewer in (Viewer.outsider(), Viewer.resistance(2), Viewer.spy(0, (0, 1))):
        result = deduce(record, viewer, model)
        assert result.consistent == 1 and result.possible == 1
        assert result.spy_probability == (1.0, 1.0, 0.0, 0.0, 0.0)
        assert set(result.certain_spies) == {0, 1} - {viewer.seat}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    "viewer",
    [
        Viewer.resistance(5),
        Viewer.resistance(-1),
        Viewer.resistance(99),
        Viewer.spy(5, (5, 1)),
        Viewer.spy(0, (1, 2)),  # the viewer's own seat is missing
        Viewer.spy(0, (0,)),  # too few spies
        Viewer.spy(0, (0, 1, 2)),  # too many spies
        Viewer(seat=0, known_spies=(0, 0)),  # the same seat twice
        Viewer.spy(0, (0, 7)),  # a seat not at the table
    ],
    ids=["seat-5", "seat--1", "seat-99", "spy-seat-5", "own-seat-missing", "too-few", "too-many", "twice", "off-table"],
)
def test_invalid_viewers_raise_value_error(model: str, viewer: Viewer) -> None:
    for record in (empty_record(5), two_fails_on_0_and_1()):
        with pytest.raises(ValueError) as caught:
            deduce(record, viewer, model)
        assert not isinstance(caught.value, ImpossibleRecord), "an invalid viewer is not an impossible record"


def test_unknown_model_raises_value_error() -> None:
    with pytest.raises(ValueError, match="nonsense"):
        deduce(empty_record(), Viewer.outsider(), "nonsense")


@pytest.mark.parametrize("players", range(5, 11))
@pytest.mark.parametrize("model", MODELS)
def test_empty_record_is_symmetric(players: int, model: str) -> None:
    record = empty_record(players)
    spies = record.spies
    outsider = deduce(record, Viewer.outsider(), model)
    assert outsider.consistent == outsider.possible == math.comb(players, spies)
    assert outsider.spy_probability == pytest.approx([spies / players] * players, abs=1e-12)
    resistance = deduce(record, Viewer.resistance(0), model)
    assert resistance.possible == math.comb(players - 1, spies)
    assert resistance.spy_probability[0] == 0.0
    assert resistance.spy_probability[1:] == pytest.approx([spies / (players - 1)] * (players - 1), abs=1e-12)


def test_a_certain_spy_is_exactly_one_even_where_rounding_would_overshoot():
    """A record on which the behaviour model's weighted sum once came to 1.0000000000000002."""
    data = {
        "format": "resistance-record/1",
        "id": "g",
        "players": 9,
        "spies": 3,
        "missions": [
            {
                "mission": 1,
                "team_size": 3,
                "fails_required": 1,
                "proposals": [{"leader": 8, "team": [3, 5, 7], "votes": [False, False] + [True] * 7}],
                "fails": 1,
            },
            {
                "mission": 2,
                "team_size": 4,
                "fails_required": 1,
                "proposals": [{"leader": 0, "team": [1, 3, 6, 8], "votes": [True, False, False] + [True] * 6}],
                "fails": 1,
            },
            {
                "mission": 4,
                "team_size": 5,
                "fails_required": 2,
                "proposals": [
                    {
                        "leader": 1,
                        "team": [1, 3, 5, 7, 8],
                        "votes": [False, True, True, True, False, True, False, True, True],
                    }
                ],
                "fails": 1,
            },
            {
                "mission": 3,
                "team_size": 4,
                "fails_required": 1,
                "proposals": [
                    {
                        "leader": 2,
                        "team": [0, 3, 4, 5],
                        "votes": [True, True, True, True, True, True, False, False, True],
                    }
                ],
                "fails": 2,
            },
        ],
    }
    result = deduce(parse_record(data), Viewer.resistance(5))
    assert result.certain_spies == (3,)
    assert result.spy_probability[3] == 1.0
    assert max(result.spy_probability) <= 1.0
