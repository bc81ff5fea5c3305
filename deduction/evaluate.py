"""Score a model on finished games, as a Resistance player would have used it.

For every game, every Resistance seat as viewer, after every played mission (the record
cut just after it, outcome removed), predict every other seat; report the mean Brier
score, mean log loss and expected calibration error (10 equal bins).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from deduction.analysis import deduce
from deduction.behaviour import BehaviourParams
from deduction.knowledge import Viewer
from engine import GameRecord

CLIP = 1e-6


@dataclass(frozen=True)
class Scores:
    predictions: int
    brier: float
    log_loss: float
    ece: float


def score(probabilities: np.ndarray, truth: np.ndarray) -> Scores:
    if len(probabilities) == 0:
        return Scores(0, float("nan"), float("nan"), float("nan"))
    p = np.clip(probabilities, CLIP, 1 - CLIP)
    brier = float(np.mean((probabilities - truth) ** 2))
    log_loss = float(-np.mean(truth * np.log(p) + (1 - truth) * np.log(1 - p)))
    bins = np.minimum((probabilities * 10).astype(int), 9)
    ece = 0.0
    for b in range(10):
        in_bin = bins == b
        if in_bin.any():
            ece += in_bin.mean() * abs(probabilities[in_bin].mean() - truth[in_bin].mean())
    return Scores(len(p), brier, log_loss, float(ece))


@dataclass
class Collected:
    """Predictions grouped the way the report shows them."""

    rows: list[tuple[int, int, bool, float, float]]  # (players, missions played, end_of_game, probability, truth)

    def scores(self, where: Callable[[int, int, bool], bool] = lambda players, played, end: True) -> Scores:
        chosen = [(p, t) for players, played, end, p, t in self.rows if where(players, played, end)]
        if not chosen:
            return score(np.array([]), np.array([]))
        probabilities, truth = map(np.array, zip(*chosen, strict=True))
        return score(probabilities, truth)


def predictions(games: list[GameRecord], model: str, params_for: Callable[[int], BehaviourParams | None]) -> Collected:
    """Predict every checkpoint of `games`; `params_for(i)` gives the parameters for game i."""
    rows: list[tuple[int, int, bool, float, float]] = []
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
                        rows.append(
                            (record.players, cut, cut == played, answer.spy_probability[seat], float(seat in spies))
                        )
    return Collected(rows)


CHECKPOINTS = (1, 2, 3, 4, 5)


def report(collected: Collected) -> dict:
    """Scores overall, at the end of games, after each mission (`by_checkpoint`: the record cut
    just after mission 1..5, and "end"), and per player count (each with the same checkpoints)."""

    def as_dict(s: Scores) -> dict:
        return {
            "predictions": s.predictions,
            "brier": round(s.brier, 4),
            "log_loss": round(s.log_loss, 4),
            "ece": round(s.ece, 4),
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

    by_players = defaultdict(dict)
    for players in sorted({row[0] for row in collected.rows}):
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
    }
