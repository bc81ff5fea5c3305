"""Score a model on finished games, as a Resistance player would have used it.

For every game, every Resistance seat as viewer, after every played mission (the record
cut just after it, outcome removed), predict every other seat; report the mean Brier
score, mean log loss and expected calibration error (10 equal bins), and a test of
calibration that counts games rather than predictions (`calibration_test`).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from deduction.analysis import deduce
from deduction.behaviour import BehaviourParams
from deduction.knowledge import Viewer
from engine import GameRecord

CLIP = 1e-6

# A fixed split of games by their id, for choosing among models without touching the games that
# judge the choice: one in five games is held out for the final test, one in five for validation.
SPLITS = ("train", "validation", "test")


def split_of(game_id: str) -> str:
    """Which part of the fixed split a game belongs to, by a hash of its id (the same on every
    machine and in every file order)."""
    bucket = int.from_bytes(hashlib.blake2b(game_id.encode(), digest_size=8).digest(), "big") % 5
    return "test" if bucket == 0 else "validation" if bucket == 1 else "train"


def fitted_on_for(held_out: str) -> tuple[str, ...]:
    """The parts a model is fitted on when `held_out` is scored: the training part for validation,
    training and validation for the test."""
    return ("train",) if held_out == "validation" else ("train", "validation")


@dataclass(frozen=True)
class Scores:
    predictions: int
    brier: float
    log_loss: float
    ece: float
    ece_floor: float  # what a perfectly calibrated model would show on these predictions (`calibrated_eces`)
    calibrated_meets_goal: float  # how often such a model shows an ECE of at most ECE_GOAL here


# The calibration goal the report measures every ECE against.
ECE_GOAL = 0.01


def score(
    probabilities: np.ndarray, truth: np.ndarray, calibrated: np.ndarray | None = None, with_floor: bool = True
) -> Scores:
    """Scores of the predictions; `calibrated` is the ECE a perfectly calibrated model shows in each
    draw of its outcomes (`calibrated_eces`, drawn here when not given). `with_floor=False` leaves
    that model out (NaN): drawing it takes most of the time (0.7 s for 68,000 predictions)."""
    if len(probabilities) == 0:
        return Scores(0, float("nan"), float("nan"), float("nan"), float("nan"), float("nan"))
    p = np.clip(probabilities, CLIP, 1 - CLIP)
    brier = float(np.mean((probabilities - truth) ** 2))
    log_loss = float(-np.mean(truth * np.log(p) + (1 - truth) * np.log(1 - p)))
    ece = float(expected_calibration_error(probabilities, truth[None])[0])
    if not with_floor:
        return Scores(len(p), brier, log_loss, ece, float("nan"), float("nan"))
    if calibrated is None:
        calibrated = calibrated_eces(probabilities)
    return Scores(len(p), brier, log_loss, ece, float(calibrated.mean()), float(np.mean(calibrated <= ECE_GOAL)))


def calibration_bins(probabilities: np.ndarray) -> np.ndarray:
    """Each prediction's bin of ten equal ones (1.0 in the last)."""
    return np.minimum((probabilities * 10).astype(int), 9)


def expected_calibration_error(probabilities: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
    """ECE (ten equal bins) of the predictions against each row of outcomes (rows, predictions)."""
    bins = calibration_bins(probabilities)
    ece = np.zeros(len(outcomes))
    for b in range(10):
        in_bin = bins == b
        if in_bin.any():
            observed = outcomes[:, in_bin].mean(axis=1)
            ece += in_bin.mean() * np.abs(probabilities[in_bin].mean() - observed)
    return ece


# Outcomes drawn per prediction for `calibrated_eces`, from a fixed seed so the report repeats; fewer
# when there are so many predictions (every game of the file scored) that the draws would fill memory.
FLOOR_DRAWS = 1000
MIN_FLOOR_DRAWS = 100
MAX_DRAWN_OUTCOMES = 200_000_000  # a byte each
DRAWS_AT_ONCE = 10  # each outcome is drawn from a uniform number of 8 bytes: a few rows at a time
FLOOR_SEED = 12462


def calibrated_outcomes(probabilities: np.ndarray) -> np.ndarray:
    """Rows of outcomes (FLOOR_DRAWS of them, or as many as MAX_DRAWN_OUTCOMES allows), each drawn from
    its own prediction: what a perfectly calibrated model's predictions would meet."""
    count = len(probabilities)
    draws = max(MIN_FLOOR_DRAWS, min(FLOOR_DRAWS, MAX_DRAWN_OUTCOMES // max(count, 1)))
    rng = np.random.default_rng(FLOOR_SEED)
    outcomes = np.empty((draws, count), dtype=bool)
    for start in range(0, draws, DRAWS_AT_ONCE):
        stop = min(draws, start + DRAWS_AT_ONCE)
        outcomes[start:stop] = rng.random((stop - start, count)) < probabilities
    return outcomes


def calibrated_eces(probabilities: np.ndarray, outcomes: np.ndarray | None = None) -> np.ndarray:
    """The ECE a perfectly calibrated model shows on these very predictions, in each draw of
    `calibrated_outcomes` (of these predictions, or the columns of a larger draw given). ECE is not
    0 for such a model on a finite sample, and a goal below what it shows is a goal no model can be
    sure to meet. The draws are independent, where the predictions of one game share one truth: the
    real spread is wider still."""
    if outcomes is None:
        outcomes = calibrated_outcomes(probabilities)
    return expected_calibration_error(probabilities, outcomes)


def calibrated_ece(probabilities: np.ndarray) -> float:
    """The floor: the ECE a perfectly calibrated model shows on these predictions, on average."""
    return float(calibrated_eces(probabilities).mean())


# A bin needs predictions from this many games to take part in the calibration test: the clustered
# error of a bin of fewer games is too small, and one such bin used to decide the whole test.
MIN_BIN_GAMES = 30


@dataclass(frozen=True)
class CalibrationTest:
    bins: int  # bins that took part
    largest_z: float  # the largest |z| of a bin
    chi2: float  # the sum of the bins' squared z
    p_value: float  # of chi2 against the chi-squared distribution with `bins` degrees of freedom


def uncertain(probabilities: np.ndarray) -> np.ndarray:
    """Which predictions are not certain: a 0 or a 1 is what the rules or the viewer's own knowledge
    imply, right by construction, and would only crowd the end bins with residuals of 0."""
    return (probabilities > CLIP) & (probabilities < 1 - CLIP)


def calibration_test(probabilities: np.ndarray, truth: np.ndarray, games: np.ndarray) -> CalibrationTest:
    """Is the model's calibration distinguishable from a perfect model's, counting games, not predictions?

    ECE has no error bar, and the predictions of one game share one truth (every viewer, seat and
    checkpoint of it). So, certain predictions left out, in each of ECE's ten bins with predictions
    from at least `MIN_BIN_GAMES` games: the mean of (outcome - prediction), its standard error with the
    games as clusters (the residuals, less their mean, summed per game), and its z; then the sum of the
    squared z against chi-squared with a degree of freedom per bin. (An approximation: one game's
    predictions fall into several bins.)"""
    kept = uncertain(probabilities)
    probabilities, truth, games = probabilities[kept], truth[kept], games[kept]
    bins = calibration_bins(probabilities)
    z = []
    for b in range(10):
        in_bin = bins == b
        if len(np.unique(games[in_bin])) < MIN_BIN_GAMES:
            continue
        residual = truth[in_bin] - probabilities[in_bin]
        per_game = np.bincount(games[in_bin], weights=residual - residual.mean())
        error = math.sqrt(float((per_game**2).sum())) / in_bin.sum()
        if error > 0:
            z.append(residual.mean() / error)
    if not z:
        return CalibrationTest(0, float("nan"), float("nan"), float("nan"))
    chi2 = float(np.sum(np.square(z)))
    return CalibrationTest(len(z), float(np.max(np.abs(z))), chi2, chi2_survival(chi2, len(z)))


@dataclass(frozen=True)
class CalibrationSlope:
    slope: float  # b in logit P(spy) = a + b * logit(prediction): 1 when calibrated, under 1 over-confident
    standard_error: float  # with the games as clusters
    intercept: float
    games: int

    @property
    def estimated(self) -> bool:
        """False when the predictions cannot place a line (fewer than two games, one value, one outcome)."""
        return math.isfinite(self.slope) and math.isfinite(self.standard_error)

    def within(self, standard_errors: float) -> bool:
        return abs(self.slope - 1) <= standard_errors * self.standard_error


def calibration_slope(probabilities: np.ndarray, truth: np.ndarray, games: np.ndarray) -> CalibrationSlope:
    """The calibration slope (Cox's): the logistic regression of the outcomes on the predictions' logits,
    certain predictions left out, fitted by Newton's method, its standard error the sandwich one with
    the games as clusters (a game's predictions share its one truth)."""
    kept = uncertain(probabilities)
    p, y, g = probabilities[kept], truth[kept], games[kept]
    unknown = CalibrationSlope(float("nan"), float("nan"), float("nan"), int(len(np.unique(g))))
    x = np.column_stack([np.ones(len(p)), np.log(p / (1 - p))])
    # A line needs two games, two different predictions and both outcomes (one outcome alone
    # separates perfectly: Newton's steps would run off).
    if len(np.unique(g)) < 2 or len(np.unique(x[:, 1])) < 2 or len(np.unique(y)) < 2:
        return unknown
    beta = np.array([0.0, 1.0])
    try:
        for _ in range(50):
            fitted = 1 / (1 + np.exp(-(x @ beta)))
            weights = fitted * (1 - fitted)
            hessian = x.T @ (x * weights[:, None])
            step = np.linalg.solve(hessian, x.T @ (y - fitted))
            beta = beta + step
            if np.max(np.abs(step)) < 1e-10:
                break
        else:  # still climbing after 50 steps: the predictions separate the outcomes
            return unknown
        fitted = 1 / (1 + np.exp(-(x @ beta)))
        bread = np.linalg.inv(x.T @ (x * (fitted * (1 - fitted))[:, None]))
    except np.linalg.LinAlgError:  # the predictions separate the outcomes: no finite line
        return unknown
    _, cluster = np.unique(g, return_inverse=True)
    scores = np.zeros((cluster.max() + 1, 2))
    np.add.at(scores, cluster, x * (y - fitted)[:, None])
    covariance = bread @ (scores.T @ scores) @ bread
    return CalibrationSlope(float(beta[1]), math.sqrt(float(covariance[1, 1])), float(beta[0]), int(cluster.max()) + 1)


def chi2_survival(x: float, degrees: int) -> float:
    """P(X >= x) for X chi-squared with `degrees` degrees of freedom: the regularized upper incomplete
    gamma function Q(degrees / 2, x / 2), by its power series (exact enough for these sizes)."""
    if x <= 0:
        return 1.0
    a, half = degrees / 2.0, x / 2.0
    term = total = 1.0 / a
    n = 0
    while term > 1e-16 * total:
        n += 1
        term *= half / (a + n)
        total += term
    lower = math.exp(-half + a * math.log(half) - math.lgamma(a)) * total
    return min(1.0, max(0.0, 1.0 - lower))


@dataclass
class Collected:
    """Predictions grouped the way the report shows them."""

    # (players, missions played, end_of_game, probability, truth, game): `game` numbers the scored games
    rows: list[tuple[int, int, bool, float, float, int]]

    @cached_property
    def calibrated(self) -> np.ndarray:
        """Outcomes a perfectly calibrated model's predictions would meet (`calibrated_outcomes`),
        drawn once for every prediction, so that every selection of the report reads the same draws
        and whether a calibrated model meets the goal everywhere at once can be counted."""
        return calibrated_outcomes(self._arrays[0])

    @cached_property
    def _situations(self) -> tuple[list[tuple[int, int, bool]], np.ndarray]:
        """Each distinct (players, missions played, end of game) of the rows, and each row's index into them."""
        keys = [(n, played, end) for n, played, end, *_ in self.rows]
        distinct = sorted(set(keys))
        index = {key: i for i, key in enumerate(distinct)}
        return distinct, np.array([index[key] for key in keys], dtype=int)

    def picked(self, where: Callable[[int, int, bool], bool]) -> np.ndarray:
        """The indices of the predictions `where` picks."""
        distinct, situation = self._situations
        chosen = np.array([bool(where(*key)) for key in distinct], dtype=bool)
        return np.flatnonzero(chosen[situation]) if len(situation) else np.array([], dtype=int)

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.array([row[3] for row in self.rows], dtype=float),
            np.array([row[4] for row in self.rows], dtype=float),
            np.array([row[5] for row in self.rows], dtype=int),
        )

    def chosen(self, where: Callable[[int, int, bool], bool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(probabilities, truth, games) of the predictions `where` picks."""
        return self._columns(self.picked(where))

    def _columns(self, picked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        probabilities, truth, games = self._arrays
        return probabilities[picked], truth[picked], games[picked]

    def calibrated_eces(self, where: Callable[[int, int, bool], bool]) -> np.ndarray:
        """The ECE a perfectly calibrated model shows on the predictions `where` picks, per draw."""
        picked = self.picked(where)
        probabilities, _, _ = self._columns(picked)
        return calibrated_eces(probabilities, self.calibrated[:, picked])

    def scores(self, where: Callable[[int, int, bool], bool] = lambda players, played, end: True) -> Scores:
        probabilities, truth, _ = self.chosen(where)
        return score(probabilities, truth, self.calibrated_eces(where) if len(probabilities) else None)

    def calibration(self, where: Callable[[int, int, bool], bool]) -> CalibrationTest:
        return calibration_test(*self.chosen(where))

    def slope(self, where: Callable[[int, int, bool], bool]) -> CalibrationSlope:
        return calibration_slope(*self.chosen(where))

    def calibrated_meets_goal_everywhere(self, selections: list[Callable[[int, int, bool], bool]]) -> float:
        """How often a perfectly calibrated model shows an ECE of at most ECE_GOAL in every one of
        `selections` at once (in the same draws)."""
        meets = np.ones(len(self.calibrated), dtype=bool)
        for where in selections:
            if len(self.picked(where)):
                meets &= self.calibrated_eces(where) <= ECE_GOAL
        return float(meets.mean())


def predictions(games: list[GameRecord], model: str, params_for: Callable[[int], BehaviourParams | None]) -> Collected:
    """Predict every checkpoint of `games`; `params_for(i)` gives the parameters for game i."""
    rows: list[tuple[int, int, bool, float, float, int]] = []
    for i, record in enumerate(games):
        assert record.outcome is not None
        spies = set(record.outcome.spies)
        params = params_for(i)
        played = len(record.played_missions)
        for cut in range(1, played + 1):
            snapshot = record.cut_after_mission(cut)
            for viewer in range(record.players):
                if viewer in spies:
                    continue
                answer = deduce(snapshot, Viewer.resistance(viewer), model, params)
                for seat in range(record.players):
                    if seat != viewer:
                        truth = float(seat in spies)
                        rows.append((record.players, cut, cut == played, answer.spy_probability[seat], truth, i))
    return Collected(rows)


CHECKPOINTS = (1, 2, 3, 4, 5)


def report(collected: Collected) -> dict:
    """Scores overall, at the end of games, after each mission (`by_checkpoint`: the record cut
    just after mission 1..5, and "end"), and per player count (each with the same checkpoints);
    `calibration_test` for all of them, after each mission, at the end and per player count."""

    def as_dict(s: Scores) -> dict:
        return {
            "predictions": s.predictions,
            "brier": round(s.brier, 4),
            "log_loss": round(s.log_loss, 4),
            "ece": round(s.ece, 4),
            "ece_floor": round(s.ece_floor, 4),
            "calibrated_meets_goal": round(s.calibrated_meets_goal, 3),
        }

    def tested(where: Callable[[int, int, bool], bool]) -> dict:
        test = collected.calibration(where)
        if not test.bins:
            return {"bins": 0, "largest_z": None, "chi2": None, "p": None}
        return {
            "bins": test.bins,
            "largest_z": round(test.largest_z, 2),
            "chi2": round(test.chi2, 2),
            "p": round(test.p_value, 4),
        }

    def checkpoints(players: int | None) -> dict:
        def table(n: int) -> bool:
            return players is None or n == players

        out = {}
        for cut in CHECKPOINTS:
            chosen = collected.scores(lambda n, played, end, cut=cut: table(n) and played == cut)
            if chosen.predictions:
                out[str(cut)] = as_dict(chosen)
        out["end"] = as_dict(collected.scores(lambda n, played, end: table(n) and end))
        return out

    calibration = {"all": tested(lambda n, played, end: True)}
    for cut in CHECKPOINTS:
        calibration[f"after {cut}"] = tested(lambda n, played, end, cut=cut: played == cut)
    calibration["end"] = tested(lambda n, played, end: end)
    by_players = defaultdict(dict)
    for players in sorted({row[0] for row in collected.rows}):
        calibration[f"{players} players"] = tested(lambda n, played, end, players=players: n == players)
        by_players[players] = {
            "all": as_dict(collected.scores(lambda n, played, end, players=players: n == players)),
            "end": as_dict(collected.scores(lambda n, played, end, players=players: n == players and end)),
            "by_checkpoint": checkpoints(players),
        }
    return {
        "all": as_dict(collected.scores()),
        "end": as_dict(collected.scores(lambda n, played, end: end)),
        "by_checkpoint": checkpoints(None),
        "by_players": dict(by_players),
        # Each selection's calibration tested with the games as clusters (`calibration_test`).
        "calibration_test": calibration,
        "calibration_goal": calibration_goal(collected),
        "goal": goal(collected),
    }


# The calibration goal: in each of the eight selections below, the clustered calibration test finds
# nothing at this level (0.05 shared among the eight), and the calibration slope is within
# SLOPE_STANDARD_ERRORS of 1; overall and at the end of games it is within SLOPE_BAND as well.
GOAL_SELECTIONS: dict[str, Callable[[int, int, bool], bool]] = {
    **{f"after {cut}": (lambda n, played, end, cut=cut: played == cut) for cut in CHECKPOINTS},
    "end": lambda n, played, end: end,
    "5-6 players": lambda n, played, end: n <= 6,
    "7-10 players": lambda n, played, end: n >= 7,
}
GOAL_ALPHA = 0.05 / len(GOAL_SELECTIONS)
SLOPE_STANDARD_ERRORS = 3.0
SLOPE_BAND = (0.9, 1.1)


def calibration_goal(collected: Collected) -> dict:
    """Each goal selection's test and slope, whether it meets the goal, and whether all do."""

    def checked(where: Callable[[int, int, bool], bool], banded: bool) -> dict:
        test, slope = collected.calibration(where), collected.slope(where)
        test_passes = test.bins == 0 or test.p_value >= GOAL_ALPHA
        # Like a test without bins, a slope the predictions cannot place judges nothing.
        slope_passes = not slope.estimated or (
            slope.within(SLOPE_STANDARD_ERRORS) and (not banded or SLOPE_BAND[0] <= slope.slope <= SLOPE_BAND[1])
        )
        return {
            "bins": test.bins,
            "p": None if not test.bins else round(test.p_value, 4),
            "slope": round(slope.slope, 3) if slope.estimated else None,
            "slope_se": round(slope.standard_error, 3) if slope.estimated else None,
            "games": slope.games,
            "meets": bool(test_passes and slope_passes),
        }

    rows = {name: checked(where, banded=name == "end") for name, where in GOAL_SELECTIONS.items()}
    rows["all"] = checked(lambda n, played, end: True, banded=True)
    return {
        "alpha": round(GOAL_ALPHA, 5),
        "slope_band": list(SLOPE_BAND),
        "selections": rows,
        "met": all(row["meets"] for row in rows.values()),
    }


# A player count needs this many scored games for a calibration goal of its own.
ENOUGH_GAMES = 30


def goal(collected: Collected) -> dict:
    """How often a perfectly calibrated model, on these very predictions, shows an ECE of at most
    ECE_GOAL after every mission and at the end of the game at once, and also at every player count
    with ENOUGH_GAMES games: the chance that any model, however well calibrated, meets the goal on
    these games (an overestimate: the draws are independent, a game's predictions are not)."""
    games_by_players = defaultdict(set)
    for players, _, _, _, _, game in collected.rows:
        games_by_players[players].add(game)
    counted = sorted(n for n, games in games_by_players.items() if len(games) >= ENOUGH_GAMES)
    checkpoints = [lambda n, played, end, cut=cut: played == cut for cut in CHECKPOINTS]
    checkpoints.append(lambda n, played, end: end)
    player_counts = [lambda n, played, end, players=players: n == players for players in counted]
    return {
        "ece": ECE_GOAL,
        "player_counts": counted,
        "calibrated_meets_every_checkpoint": round(collected.calibrated_meets_goal_everywhere(checkpoints), 3),
        "calibrated_meets_everywhere": round(
            collected.calibrated_meets_goal_everywhere(checkpoints + player_counts), 3
        ),
    }
