"""memory.ratings: OpenSkill updates of the two sides, computer seats, and the Resistance's win chance."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.ratings import DEFAULT, Params, Rating, default_params, rate, resistance_win_chance

SPIES = {5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}
# As stored: four decimals (Rating.to_text), which is all the bot ever rates from.
ratings_st = st.builds(
    Rating, st.floats(0.0, 50.0).map(lambda x: round(x, 4)), st.floats(0.5, 8.5).map(lambda x: round(x, 4))
)


def table(players: int) -> tuple[list[str], list[str]]:
    ids = [f"p{i}" for i in range(players)]
    return ids[SPIES[players] :], ids[: SPIES[players]]


def test_winners_go_up_and_losers_down() -> None:
    resistance, spies = table(7)
    for resistance_won in (True, False):
        new = rate({}, resistance, spies, resistance_won, 7)
        winners, losers = (resistance, spies) if resistance_won else (spies, resistance)
        assert all(new[p].mu > DEFAULT.mu for p in winners)
        assert all(new[p].mu < DEFAULT.mu for p in losers)
        assert all(new[p].sigma < DEFAULT.sigma for p in resistance + spies)


def test_sides_of_unknown_players_are_even_whatever_their_sizes() -> None:
    # A spies' win over unknown players moves them as much as the Resistance's would move it.
    resistance, spies = table(5)
    spies_won = rate({}, resistance, spies, False, 5)
    resistance_won = rate({}, resistance, spies, True, 5)
    assert spies_won["p0"].mu - DEFAULT.mu == pytest.approx(resistance_won["p4"].mu - DEFAULT.mu, rel=0.02)


def test_only_the_named_players_are_returned() -> None:
    resistance, spies = table(5)
    before = {"absent": Rating(31.0, 4.0), "p0": Rating(20.0, 6.0)}
    new = rate(before, resistance, spies, True, 5)
    assert set(new) == set(resistance + spies)
    assert before["absent"] == Rating(31.0, 4.0)  # not touched, and not in the answer
    assert new["p0"].mu < 20.0 and new["p4"].mu > DEFAULT.mu  # p0 from their rating, p4 from the default


def test_computer_seats_take_part_but_are_not_rated() -> None:
    new = rate({}, ["a", "b"], ["c"], True, 5, resistance_computers=1, spy_computers=1)
    assert set(new) == {"a", "b", "c"}
    assert new["a"].mu > DEFAULT.mu > new["c"].mu
    # A computer is an unknown player: the same as a person at the default rating in that seat.
    with_people = rate({}, ["a", "b", "x"], ["c", "y"], True, 5)
    assert new["a"] == with_people["a"] and new["c"] == with_people["c"]


def test_the_sides_must_add_up_to_the_table() -> None:
    with pytest.raises(ValueError):
        rate({}, ["a", "b"], ["c"], True, 5)
    with pytest.raises(ValueError):
        rate({}, ["a", "b", "c"], ["c", "d"], True, 5)
    with pytest.raises(ValueError):
        resistance_win_chance({}, ["a", "b", "c"], ["d"], 4)


@pytest.mark.parametrize("players", range(5, 11))
def test_unknown_sides_win_at_the_base_rate(players: int) -> None:
    resistance, spies = table(players)
    base = 1 / (1 + math.exp(-default_params().base_logit[players]))
    assert resistance_win_chance({}, resistance, spies, players) == pytest.approx(base)
    computers = resistance_win_chance({}, resistance[1:], spies[1:], players, resistance_computers=1, spy_computers=1)
    assert computers == pytest.approx(base)


def test_shipped_base_rates_favour_the_resistance_less_at_bigger_tables() -> None:
    chance = {n: resistance_win_chance({}, *table(n), n) for n in (5, 10)}
    assert 0.5 < chance[10] < chance[5] < 0.9


def test_to_text_round_trip() -> None:
    rating = Rating(27.123456, 5.5)
    assert rating.to_text() == "27.1235 5.5000"
    assert Rating.from_text(rating.to_text()) == Rating(27.1235, 5.5)
    back = Rating.from_text(DEFAULT.to_text())
    assert back.mu == DEFAULT.mu and back.sigma == pytest.approx(DEFAULT.sigma, abs=5e-5)
    for bad in ("25.0", "25.0 -1.0", "nan 3.0", "x y"):
        with pytest.raises(ValueError):
            Rating.from_text(bad)


def test_new_ratings_are_exactly_what_storage_gives_back() -> None:
    # A rebuild carries ratings from game to game in memory; the bot reads them back from text.
    new = rate({"p0": Rating(23.456789, 7.0)}, *table(6), False, 6)
    assert all(Rating.from_text(r.to_text()) == r for r in new.values())


def test_ordinal_is_conservative() -> None:
    assert DEFAULT.ordinal == pytest.approx(0.0)
    assert Rating(30.0, 2.0).ordinal == pytest.approx(24.0)


def test_params_json_round_trip() -> None:
    params = default_params()
    assert Params.from_json(params.to_json()) == params


players_st = st.integers(5, 10)


@st.composite
def games(draw):
    players = draw(players_st)
    spies_n = SPIES[players]
    ids = [f"p{i}" for i in range(players)]
    computer = draw(st.lists(st.booleans(), min_size=players, max_size=players))
    ratings = {p: draw(ratings_st) for p in ids if draw(st.booleans())}
    resistance = [p for i, p in enumerate(ids[spies_n:]) if not computer[spies_n + i]]
    spies = [p for i, p in enumerate(ids[:spies_n]) if not computer[i]]
    return (
        ratings,
        resistance,
        spies,
        draw(st.booleans()),
        players,
        sum(computer[spies_n:]),
        sum(computer[:spies_n]),
    )


@settings(max_examples=60, deadline=None)
@given(games())
def test_any_game_keeps_sigma_positive_and_not_growing(game) -> None:
    ratings, resistance, spies, won, players, res_c, spy_c = game
    new = rate(ratings, resistance, spies, won, players, resistance_computers=res_c, spy_computers=spy_c)
    assert set(new) == set(resistance) | set(spies)
    for person, after in new.items():
        before = ratings.get(person, DEFAULT)
        assert 0 < after.sigma <= before.sigma
        assert math.isfinite(after.mu)
        winner = (person in resistance) == won
        assert (after.mu >= before.mu) if winner else (after.mu <= before.mu)


@settings(max_examples=60, deadline=None)
@given(games())
def test_win_chance_is_a_chance_and_rises_with_the_resistances_skill(game) -> None:
    ratings, resistance, spies, _, players, res_c, spy_c = game
    sides = dict(resistance_computers=res_c, spy_computers=spy_c)
    chance = resistance_win_chance(ratings, resistance, spies, players, **sides)
    assert 0 < chance < 1
    if resistance:
        stronger = dict(ratings)
        r = ratings.get(resistance[0], DEFAULT)
        stronger[resistance[0]] = Rating(r.mu + 5, r.sigma)
        assert resistance_win_chance(stronger, resistance, spies, players, **sides) >= chance
        assert resistance_win_chance(stronger, resistance, spies, players, **sides) > chance or chance > 0.999


@settings(max_examples=60, deadline=None)
@given(games())
def test_swapping_who_is_rated_swaps_the_skill_edge(game) -> None:
    # Mirror the people's skills about the default: the Resistance's log-odds move from the base rate
    # by the same amount the other way.
    ratings, resistance, spies, _, players, res_c, spy_c = game
    mirrored = {p: Rating(2 * DEFAULT.mu - r.mu, r.sigma) for p, r in ratings.items()}
    sides = dict(resistance_computers=res_c, spy_computers=spy_c)
    base = default_params().base_logit[players]

    def logit(rs: dict[str, Rating]) -> float:
        p = resistance_win_chance(rs, resistance, spies, players, **sides)
        return math.log(p / (1 - p)) - base

    if abs(logit(ratings)) < 6:  # away from the clamp
        assert logit(mirrored) == pytest.approx(-logit(ratings), abs=1e-9)
