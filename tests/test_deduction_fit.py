"""Fitting pieces of the behaviour model and the evaluation report, on generated games."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from deduction import evaluate
from deduction.analysis import deduce
from deduction.behaviour import BehaviourParams, evidence, vote_exponents
from deduction.evaluate import (
    CHECKPOINTS,
    ECE_GOAL,
    Collected,
    calibrated_ece,
    calibrated_outcomes,
    calibration_slope,
    calibration_test,
    chi2_survival,
    fitted_on_for,
    predictions,
    report,
    score,
    split_of,
)
from deduction.features import (
    PROPOSAL_SOURCES,
    SCORE_STATES,
    approval_habit,
    others_approving,
    proposal_sources,
    record_arrays,
    vote_tallies,
)
from deduction.fit import FitSettings, Observations, fit
from deduction.knowledge import Viewer
from engine import GameRecord, export_record, parse_record
from tests.test_deduction_batch import finished_games
from tests.test_deduction_reasons import without_votes_of


def records(count: int, seed: int, **rates: float):
    return [parse_record(export_record(state, f"g{i}")) for i, state in enumerate(finished_games(count, seed, **rates))]


def test_sabotage_by_score_follows_the_data() -> None:
    """A lone spy on mission 3 who always fails after two failed missions and never after one:
    the (mission, score) table says so, the mission table sits between, and a score never
    seen keeps the mission's table."""
    obs = Observations.from_games(records(12, seed=5))
    obs.sabotage = [(0, 3, 2, 1, 1, 1)] * 40 + [(0, 3, 1, 1, 1, 0)] * 40 + [(0, 1, 0, 1, 1, 0)] * 10
    params = fit(obs)
    p_fail = np.exp(params.sabotage_score_log_prob[3, :, 1, 1, 1])
    mission = float(np.exp(params.sabotage_log_prob[3, 1, 1, 1]))
    assert p_fail[2] > 0.85 and p_fail[1] < 0.15
    assert p_fail[1] < mission < p_fail[2]
    assert p_fail[0] == pytest.approx(mission, abs=1e-9)
    # Each row is a distribution; a lone spy cannot show two Fail cards.
    rows = np.exp(params.sabotage_score_log_prob[1:, :, 1:, 1])
    assert np.allclose(rows.sum(axis=-1), 1.0)
    assert np.all(rows[..., 2:] < 1e-9)


def test_evidence_reads_the_score_before_each_mission() -> None:
    """The sabotage piece of a played mission is the (mission, failed before, ...) cell of
    the spies who played on it."""
    record = next(r for r in records(20, seed=8, spy_fail_rate=0.7) if len(r.played_missions) >= 3)
    params = fit(Observations.from_games([record]))
    arrays = record_arrays(record)
    truth = np.zeros((1, record.players), dtype=bool)
    truth[0, list(record.outcome.spies)] = True
    got = evidence(arrays, truth, params).sabotage[0]
    failed = 0
    for j, m in enumerate(record.played_missions):
        spies = len(set(m.card_players) & set(record.outcome.spies))
        cell = params.sabotage_score_log_prob[m.mission, failed, m.fails_required, spies, m.fails]
        assert got[j] == pytest.approx(cell)
        failed += not m.succeeded


def test_votes_before_any_mission_weigh_the_opening_exponent() -> None:
    """The vote term is the votes on proposals before the first mission times the opening
    exponent, plus the later ones times the vote exponent: zero for the opening votes leaves the
    later ones alone, and the term is linear in between."""
    record = next(r for r in records(20, seed=8) if len(r.played_missions) >= 2)
    params = fit(Observations.from_games([record]))
    arrays = record_arrays(record)
    rows = np.zeros((3, record.players), dtype=bool)
    for row, spies in enumerate(([0, 1], [1, 3], list(record.outcome.spies))):
        rows[row, spies[: record.spies]] = True

    def votes(opening: float) -> np.ndarray:
        return evidence(arrays, rows, replace(params, opening_vote_exponent=opening)).votes

    later_only, both = votes(0.0), votes(1.0)
    assert not np.allclose(later_only, both)
    assert np.allclose(votes(0.35), later_only + 0.35 * (both - later_only), atol=1e-12)
    # Exactly the proposals made before the first mission's cards were played are the opening ones.
    weights = vote_exponents(arrays, params)
    opening = len(record.missions[0].proposals)
    assert np.all(weights[:opening] == params.opening_vote_exponent)
    assert np.all(weights[opening:] == params.vote_exponent) and len(weights) > opening


def test_parameter_file_is_strict(tmp_path) -> None:
    params = fit(Observations.from_games(records(8, seed=3)))
    data = params.to_json()
    again = BehaviourParams.from_json(json.loads(json.dumps(data)))
    assert np.allclose(np.exp(again.sabotage_score_log_prob), np.exp(params.sabotage_score_log_prob), atol=1e-6)
    with pytest.raises(KeyError):
        BehaviourParams.from_json({k: v for k, v in data.items() if k != "sabotage_score_log_prob"})
    with pytest.raises(ValueError):
        BehaviourParams.from_json({**data, "sabotage_score_log_prob": data["sabotage_log_prob"]})
    with pytest.raises(ValueError):
        BehaviourParams.from_json({**data, "format": "resistance-behaviour/1"})


def test_report_has_every_checkpoint() -> None:
    games = records(10, seed=11, spy_fail_rate=0.6)
    result = report(predictions(games, "uniform", lambda i: None))
    checkpoints = result["by_checkpoint"]
    assert sum(checkpoints.get(str(c), {}).get("predictions", 0) for c in CHECKPOINTS) == result["all"]["predictions"]
    assert checkpoints["end"] == result["end"]
    for players, both in result["by_players"].items():
        table = both["by_checkpoint"]
        assert sum(table.get(str(c), {}).get("predictions", 0) for c in CHECKPOINTS) == both["all"]["predictions"]
        assert table["end"] == both["end"], players


def test_vote_habits_count_only_votes_chosen_by_someone_else() -> None:
    """The approval habit reads a voter's earlier votes only; the share of the others approving
    leaves out the voter, the asker and every vote the deadline filled in."""
    # Seat 3's votes, and seat 2's on even proposals, filled in by the deadline.
    arrays = record_arrays(without_votes_of(records(1, seed=3)[0], 3))
    arrays.vote_chosen[::2, 2] = False
    assert not arrays.vote_chosen[:, 1:].all()
    tallies = vote_tallies(arrays, own_seat=0)
    habit, others = approval_habit(tallies), others_approving(tallies)
    assert np.allclose(habit[0], 0.0)  # nothing seen yet: the usual rate
    chosen = arrays.vote_chosen.copy()
    chosen[:, 0] = False
    for p in range(arrays.proposal_count):
        for seat in range(arrays.players):
            mates = chosen[p] & (np.arange(arrays.players) != seat)
            share = (arrays.votes[p][mates].sum() + 0.5) / (mates.sum() + 1.0)
            assert others[p, seat] == pytest.approx(share - 0.5)
            earlier = chosen[:p, seat]
            rate = (arrays.votes[:p, seat][earlier].sum() + 1.2) / (earlier.sum() + 2.0)
            assert habit[p, seat] == pytest.approx(rate - 0.6)


def test_chi2_survival_matches_known_values() -> None:
    assert chi2_survival(2.0, 2) == pytest.approx(np.exp(-1.0), rel=1e-9)  # two degrees: e^(-x/2)
    assert chi2_survival(3.841459, 1) == pytest.approx(0.05, abs=1e-6)
    assert chi2_survival(18.307038, 10) == pytest.approx(0.05, abs=1e-6)
    assert chi2_survival(0.0, 10) == 1.0 and chi2_survival(500.0, 10) < 1e-12


def test_the_calibration_test_counts_games_not_predictions() -> None:
    """Calibrated predictions pass; skewed ones fail; and predictions that share one truth per game
    (as a game's viewers, seats and checkpoints do) are not taken for more evidence than they are."""
    rng = np.random.default_rng(7)
    games = np.repeat(np.arange(400), 30)
    said = rng.uniform(0.02, 0.98, size=len(games))
    calibrated = (rng.uniform(size=len(games)) < said).astype(float)
    assert calibration_test(said, calibrated, games).p_value > 0.01
    skewed = (rng.uniform(size=len(games)) < np.sqrt(said)).astype(float)
    assert calibration_test(said, skewed, games).p_value < 1e-6
    # Every prediction of a game says 0.5 and the game's one coin decides them all: calibrated, but
    # 12,000 predictions are only 400 coins. Counting predictions, a fair 210-190 split would read as
    # z = 1.0 * sqrt(30); counting games it is z = 1.0.
    one_truth = np.repeat((np.arange(400) < 210).astype(float), 30)
    test = calibration_test(np.full(len(games), 0.5), one_truth, games)
    assert test.bins == 1 and test.largest_z == pytest.approx(1.0, abs=0.01)


def test_a_bin_of_few_games_and_certain_predictions_take_no_part_in_the_calibration_test() -> None:
    """A bin whose predictions come from fewer than 30 games says little, with an error counted over so
    few clusters: it once decided the whole test. And a 0 or a 1 (what the rules imply) is left out."""
    rng = np.random.default_rng(11)
    games = np.repeat(np.arange(300), 20)
    said = rng.uniform(0.3, 0.7, size=len(games))
    truth = (rng.uniform(size=len(games)) < said).astype(float)
    base = calibration_test(said, truth, games)
    # Five games' predictions at 0.95 that all came out the other way: alone in their bin.
    few = np.repeat(np.arange(300, 305), 20)
    with_few = calibration_test(
        np.concatenate([said, rng.uniform(0.9, 0.99, len(few))]),
        np.concatenate([truth, np.zeros(len(few))]),
        np.concatenate([games, few]),
    )
    assert (with_few.bins, with_few.chi2) == (base.bins, base.chi2)
    # Thirty such games make a bin of their own, and the test sees them.
    many = np.repeat(np.arange(300, 330), 20)
    with_many = calibration_test(
        np.concatenate([said, rng.uniform(0.9, 0.99, len(many))]),
        np.concatenate([truth, np.zeros(len(many))]),
        np.concatenate([games, many]),
    )
    assert with_many.bins == base.bins + 1 and with_many.p_value < 1e-6
    certain = calibration_test(
        np.concatenate([said, np.zeros(6000), np.ones(6000)]),
        np.concatenate([truth, np.zeros(6000), np.ones(6000)]),
        np.concatenate([games, np.repeat(np.arange(300), 20), np.repeat(np.arange(300), 20)]),
    )
    assert (certain.bins, certain.chi2) == (base.bins, base.chi2)


def test_the_calibration_slope_reads_over_and_under_confidence_counting_games() -> None:
    rng = np.random.default_rng(5)
    games = np.repeat(np.arange(2000), 10)
    said = rng.uniform(0.03, 0.97, size=len(games))
    logit = np.log(said / (1 - said))

    def outcomes(slope: float) -> np.ndarray:
        return (rng.uniform(size=len(games)) < 1 / (1 + np.exp(-slope * logit))).astype(float)

    calibrated = calibration_slope(said, outcomes(1.0), games)
    assert calibrated.within(3) and abs(calibrated.slope - 1) < 0.1 and calibrated.games == 2000
    over = calibration_slope(said, outcomes(0.8), games)  # the predictions claim more than comes true
    assert over.slope == pytest.approx(0.8, abs=0.06) and not over.within(3)
    under = calibration_slope(said, outcomes(1.6), games)
    assert under.slope == pytest.approx(1.6, abs=0.12) and not under.within(3)
    # Each game's ten predictions say the same and share one truth: ten times the predictions, not ten
    # times the evidence. Counted by game, the error is about sqrt(10) times what counting predictions says.
    per_game = rng.uniform(0.03, 0.97, size=2000)
    repeated = np.repeat(per_game, 10)
    shared = np.repeat((rng.uniform(size=2000) < per_game).astype(float), 10)
    by_game = calibration_slope(repeated, shared, games)
    by_prediction = calibration_slope(repeated, shared, np.arange(len(games)))
    assert by_game.slope == pytest.approx(by_prediction.slope)
    assert 2.8 < by_game.standard_error / by_prediction.standard_error < 3.5


def test_a_calibrated_models_ece_is_the_floor_the_report_prints() -> None:
    """The floor is what a perfectly calibrated model shows on the same predictions: outcomes drawn
    from the predictions themselves score an ECE about the floor, not 0; a sample ten times larger
    has a lower floor; and a miscalibrated model lies well above it. It repeats, report after report."""
    rng = np.random.default_rng(3)
    said = rng.uniform(0.02, 0.98, size=3000)
    floor = calibrated_ece(said)
    assert floor == calibrated_ece(said) > 0
    drawn = [score(said, (rng.uniform(size=len(said)) < said).astype(float), with_floor=False).ece for _ in range(60)]
    assert 0.7 * floor < float(np.mean(drawn)) < 1.3 * floor
    # Left out on request (the simulator reads Brier and ECE only), the rest is the same.
    truth = (rng.uniform(size=len(said)) < said).astype(float)
    whole, without = score(said, truth), score(said, truth, with_floor=False)
    assert np.isnan(without.ece_floor) and np.isnan(without.calibrated_meets_goal)
    assert (without.brier, without.log_loss, without.ece) == (whole.brier, whole.log_loss, whole.ece)
    assert whole.ece_floor == floor
    assert calibrated_ece(rng.uniform(0.02, 0.98, size=30000)) < 0.5 * floor
    skewed = (rng.uniform(size=len(said)) < np.sqrt(said)).astype(float)
    assert score(said, skewed).ece > 5 * floor
    games = records(6, seed=5, spy_fail_rate=0.6)
    result = report(predictions(games, "uniform", lambda i: None))
    assert 0 < result["all"]["ece_floor"] <= result["by_checkpoint"]["end"]["ece_floor"]


def test_how_often_a_calibrated_model_meets_the_goal_is_counted_in_shared_draws() -> None:
    """Many predictions leave a calibrated model's ECE far under the goal, few leave it over; the
    chance of meeting the goal in several selections at once reads the same draws for all of them
    (a selection asked twice counts once, and two selections together never beat either alone)."""
    rng = np.random.default_rng(5)
    many = rng.uniform(0.05, 0.95, size=60000)
    assert score(many, (rng.uniform(size=len(many)) < many).astype(float)).calibrated_meets_goal == 1.0
    few = rng.uniform(0.05, 0.95, size=300)
    assert score(few, (rng.uniform(size=len(few)) < few).astype(float)).calibrated_meets_goal < 0.05
    # Ten games of 5 players, and 12,000 predictions each after mission 1 and mission 2.
    said = rng.uniform(0.05, 0.95, size=24000)
    truth = (rng.uniform(size=len(said)) < said).astype(float)
    pairs = enumerate(zip(said, truth, strict=True))
    collected = Collected([(5, 1 + i % 2, i % 2 == 1, p, t, i % 10) for i, (p, t) in pairs])

    def after(cut):
        return lambda n, played, end: played == cut

    first, second = collected.scores(after(1)).calibrated_meets_goal, collected.scores(after(2)).calibrated_meets_goal
    assert 0.05 < first < 0.95 and 0.05 < second < 0.95
    assert collected.calibrated_meets_goal_everywhere([after(1), after(1)]) == first
    both = collected.calibrated_meets_goal_everywhere([after(1), after(2)])
    assert both <= min(first, second) and both == pytest.approx(first * second, abs=0.06)
    goal = report(collected)["goal"]
    assert goal["ece"] == ECE_GOAL and goal["player_counts"] == []  # ten games are not enough for a count's own goal
    assert goal["calibrated_meets_every_checkpoint"] == pytest.approx(both, abs=0.001)


def test_each_score_a_proposal_is_made_at_is_a_state_of_its_own() -> None:
    """Every proposal after mission 1 is read at exactly one of the score states (missions won and
    lost before it), the one its record shows; the proposals of mission 1 (0-0) at none."""
    for record in records(20, seed=17, spy_fail_rate=0.6):
        arrays = record_arrays(record)
        sources = proposal_sources(
            arrays.proposal_numbers, arrays.mission_numbers, arrays.successes_before, arrays.failures_before
        )
        states = sources[:, [PROPOSAL_SOURCES.index(f"score_{won}_{lost}") for won, lost in SCORE_STATES]]
        scores = list(zip(arrays.successes_before.tolist(), arrays.failures_before.tolist(), strict=True))
        for row, (won, lost) in zip(states, scores, strict=True):
            if (won, lost) == (0, 0):
                assert not row.any()
            else:
                assert row.tolist() == [float(state == (won, lost)) for state in SCORE_STATES]
        assert any(score != (0, 0) for score in scores)


def test_calibrated_draws_fit_in_memory_and_repeat(monkeypatch) -> None:
    """The draws are as many as memory allows (every game of a big file scored), drawn a few rows at a
    time, and the same outcomes as drawing them all at once from the seed: the report repeats."""
    monkeypatch.setattr(evaluate, "MAX_DRAWN_OUTCOMES", 50_000)
    rng = np.random.default_rng(11)
    for count, draws in ((200, 250), (1000, evaluate.MIN_FLOOR_DRAWS), (20, evaluate.FLOOR_DRAWS)):
        said = rng.uniform(0.05, 0.95, size=count)
        drawn = calibrated_outcomes(said)
        assert drawn.shape == (draws, count) and drawn.dtype == bool
        at_once = np.random.default_rng(evaluate.FLOOR_SEED).random((draws, count)) < said
        assert np.array_equal(drawn, at_once)


def test_a_game_played_with_avalon_roles_is_read_with_the_avalon_voting() -> None:
    """A record that says it was played with Avalon's roles is read with the weights fitted on every
    game and the Avalon exponents; any other record (no source, or plain roles) with the plain games'
    own weights and exponents. The parameter file keeps both."""
    games = records(24, seed=5, spy_fail_rate=0.7)
    marked = [replace(g, source={"roles": "avalon"}) if i % 2 else g for i, g in enumerate(games)]
    params = fit(Observations.from_games(marked), FitSettings(avalon_vote_exponent=0.3))
    assert params.avalon is not None and params.avalon.vote_exponent == 0.3 and params.vote_exponent == 0.7
    assert not np.allclose(params.vote_weights, params.avalon.vote_weights)  # the plain games' offsets
    assert params.avalon.avalon is None and params.avalon.sabotage_score_log_prob is params.sabotage_score_log_prob

    record = next(g for g in games if len(g.played_missions) >= 3).cut_after_mission(3)
    viewer = Viewer.outsider()

    def spy_probability(r: GameRecord, p: BehaviourParams) -> np.ndarray:
        return np.array(deduce(r, viewer, params=p).spy_probability)

    as_avalon = replace(record, source={"site": "elsewhere", "roles": "avalon"})
    assert np.array_equal(spy_probability(as_avalon, params), spy_probability(record, params.avalon))
    for plain in (record, replace(record, source={"roles": "resistance"})):
        assert np.array_equal(spy_probability(plain, params), spy_probability(record, replace(params, avalon=None)))
    assert not np.allclose(spy_probability(as_avalon, params), spy_probability(record, params))

    again = BehaviourParams.from_json(json.loads(json.dumps(params.to_json())))
    assert again.avalon is not None and again.avalon.vote_exponent == 0.3
    assert np.allclose(spy_probability(as_avalon, again), spy_probability(as_avalon, params), atol=1e-5)
    # A file without the Avalon part reads every record as plain.
    plain_only = BehaviourParams.from_json({k: v for k, v in params.to_json().items() if k != "avalon"})
    assert plain_only.for_record(as_avalon) is plain_only


def test_the_fixed_split_holds_a_fifth_for_the_test_and_a_fifth_for_validation() -> None:
    ids = [f"{n:012x}" for n in range(5000)]
    parts = [split_of(game_id) for game_id in ids]
    assert parts == [split_of(game_id) for game_id in ids]  # the same every time, whatever else is in the file
    for part, share in (("test", 0.2), ("validation", 0.2), ("train", 0.6)):
        assert abs(parts.count(part) / len(ids) - share) < 0.02, part
    assert fitted_on_for("validation") == ("train",)
    assert fitted_on_for("test") == ("train", "validation")


@pytest.mark.parametrize(
    ("probabilities", "truth"),
    [
        ([0.3, 0.6, 0.2, 0.7], [0, 0, 0, 0]),  # one outcome: any steeper line fits better
        ([0.4, 0.4, 0.4, 0.4], [0, 1, 1, 0]),  # one prediction: no line through one point
        ([0.2, 0.3, 0.7, 0.8], [0, 0, 1, 1]),  # the predictions separate the outcomes
    ],
)
def test_a_slope_the_predictions_cannot_place_is_not_estimated_and_judges_nothing(probabilities, truth) -> None:
    slope = calibration_slope(np.array(probabilities), np.array(truth, dtype=float), np.array([0, 0, 1, 1]))
    assert not slope.estimated
    rows = [(5, 1, True, p, float(t), g) for p, t, g in zip(probabilities, truth, (0, 0, 1, 1), strict=True)]
    row = evaluate.calibration_goal(Collected(rows))["selections"]["all"]
    assert row["slope"] is None and row["slope_se"] is None and row["meets"]
    json.dumps(evaluate.calibration_goal(Collected(rows)), allow_nan=False)  # the report stays JSON


@pytest.mark.parametrize("source", [None, {}, {"site": "x"}, {"roles": "resistance"}, {"roles": None}, {"roles": 5}])
def test_only_a_record_marked_avalon_is_read_as_one(source) -> None:
    """The record format marks Avalon games with `roles: "avalon"`; anything else a request may carry
    there is a plain game, read with the plain games' parameters."""
    params = fit(Observations.from_games(records(12, seed=5)))
    record = records(1, seed=9)[0]
    assert params.for_record(replace(record, source=source)) is params
    assert params.for_record(replace(record, source={"roles": "avalon"})) is params.avalon
