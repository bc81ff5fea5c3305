"""Fit the spies' sabotage policy on people's finished games.

Only what a spy on a mission team decides is counted: for every played mission whose
roles are known, how many spies played a card on it and how many Fail cards came out.
A lone spy's choice is fitted as a logistic regression on the mission number and the
score; teams of two or more spies as one rate per mission (did the mission fail?),
pulled towards the lone spies' rate on that mission when the counts are few. Nothing of the
games themselves is kept: the parameters are a handful of numbers (agents/params/sabotage.json).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine import GameRecord, rules

LONE_FEATURES = ("bias", "mission_2", "mission_3", "mission_4", "mission_5", "successes", "failures")


def lone_features(mission: int, successes: int, failures: int) -> np.ndarray:
    x = np.zeros(len(LONE_FEATURES))
    x[0] = 1.0
    if mission >= 2:
        x[mission - 1] = 1.0
    x[5] = successes
    x[6] = failures
    return x


@dataclass(frozen=True)
class SabotageCounts:
    lone_x: np.ndarray  # (N, features): one row per mission played with exactly one spy
    lone_y: np.ndarray  # (N,): 1 if that spy played Fail
    team: dict[int, tuple[int, int]]  # mission -> (missions failed, missions) with two or more spies
    games: int


def count(games: Iterable[GameRecord], roles: tuple[str, ...] = ("resistance",)) -> SabotageCounts:
    xs, ys = [], []
    team: dict[int, list[int]] = {m: [0, 0] for m in range(1, rules.MISSION_COUNT + 1)}
    used = 0
    for record in games:
        if record.outcome is None or (record.source or {}).get("roles", "resistance") not in roles:
            continue
        used += 1
        spies = set(record.outcome.spies)
        successes = failures = 0
        for m in record.played_missions:
            on_team = len(spies & set(m.card_players))
            if on_team == 1:
                xs.append(lone_features(m.mission, successes, failures))
                ys.append(float(m.fails > 0))
            elif on_team >= m.fails_required and on_team >= 2:
                team[m.mission][0] += int(not m.succeeded)
                team[m.mission][1] += 1
            successes += bool(m.succeeded)
            failures += not m.succeeded
    return SabotageCounts(
        lone_x=np.array(xs).reshape(-1, len(LONE_FEATURES)),
        lone_y=np.array(ys),
        team={m: (a, n) for m, (a, n) in team.items()},
        games=used,
    )


def logistic(x: np.ndarray, y: np.ndarray, penalty: float = 1.0, steps: int = 50) -> np.ndarray:
    """L2-penalised logistic regression by Newton's method (the bias is not penalised)."""
    w = np.zeros(x.shape[1])
    ridge = penalty * np.eye(x.shape[1])
    ridge[0, 0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + ridge @ w
        hess = (x.T * (p * (1 - p))) @ x + ridge
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def fit(counts: SabotageCounts, team_prior: float = 10.0) -> dict:
    """The parameters as plain JSON data."""
    w = logistic(counts.lone_x, counts.lone_y)
    team_rate = {}
    for mission, (failed, played) in counts.team.items():
        # The prior: how often a lone spy failed this mission, at the scores it was played at.
        rows = counts.lone_x[:, mission - 1] == 1 if mission >= 2 else counts.lone_x[:, 1:5].sum(axis=1) == 0
        lone = float(counts.lone_y[rows].mean()) if rows.any() else 0.5
        team_rate[str(mission)] = round(float((failed + team_prior * lone) / (played + team_prior)), 4)
    return {
        "lone_spy_fail": {name: round(float(v), 4) for name, v in zip(LONE_FEATURES, w, strict=True)},
        "team_fail_rate": team_rate,
        "counts": {
            "games": counts.games,
            "lone_spy_missions": len(counts.lone_y),
            "team_missions": {str(m): n for m, (_, n) in counts.team.items()},
        },
    }
