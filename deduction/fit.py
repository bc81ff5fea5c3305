"""Fit the behaviour model's parameters on finished games whose roles are known.

Avalon games (where Merlin's knowledge shaped how the Resistance voted) share the vote
weights with plain games; plain games get their own offsets, held near zero by a penalty,
so the many Avalon games inform the few plain ones without overruling them. The shared
weights alone, with exponents of their own, read a record that says it was played with
Avalon's roles.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import comb

import numpy as np

from deduction.behaviour import MAX_TEAM_SPIES, BehaviourParams
from deduction.features import TEAM_SPY_BUCKETS, VOTE_FEATURES, record_arrays, vote_feature_tensor
from deduction.role_sets import is_plain
from engine import GameRecord


@dataclass(frozen=True)
class FitSettings:
    vote_exponent: float = 0.7
    opening_vote_exponent: float = 0.35  # votes before any mission was played: half as much
    proposal_exponent: float = 0.4
    # Avalon games read with their own vote weights; their votes and teams, shaped by Merlin's
    # hints, are tempered further (chosen on the fixed validation split: docs/deduction.md).
    avalon_vote_exponent: float = 0.45
    avalon_opening_vote_exponent: float = 0.225
    avalon_proposal_exponent: float = 0.4
    avalon_weight: float = 1.0  # weight of an Avalon game's sabotage and proposal counts
    shared_penalty: float = 1.0  # L2 penalty on the vote weights shared by all games
    plain_offset_penalty: float = 30.0  # L2 penalty on the plain games' own vote offsets
    sabotage_prior: float = 4.0  # pseudo-counts pulling a mission's sabotage table to the pooled one
    score_prior: float = 4.0  # pseudo-counts pulling a (mission, score) sabotage table to the mission's
    proposal_prior: float = 20.0  # pseudo-counts pulling proposal rates towards random teams


@dataclass
class Observations:
    """Everything the fit counts, extracted once from a list of games; `game` indexes rows by game."""

    vote_x: list[np.ndarray] = field(default_factory=list)
    vote_y: list[np.ndarray] = field(default_factory=list)
    vote_role: list[np.ndarray] = field(default_factory=list)
    vote_game: list[np.ndarray] = field(default_factory=list)
    # (game, mission, failed missions before it, fails_required, spies on team, fails)
    sabotage: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)
    # (game, leader is spy, players, team size, spies on team, leader on team)
    proposals: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)
    plain: list[bool] = field(default_factory=list)

    @classmethod
    def from_games(cls, games: list[GameRecord]) -> Observations:
        obs = cls()
        for g, record in enumerate(games):
            if record.outcome is None:
                raise ValueError(f"game {record.id} has no outcome: its roles are unknown")
            obs.plain.append(is_plain(record))
            arrays = record_arrays(record)
            spies = np.zeros(record.players, dtype=np.intp)
            spies[list(record.outcome.spies)] = 1
            team_spies = arrays.teams.astype(np.intp) @ spies
            leader_spy = spies[arrays.leaders]
            count = arrays.proposal_count
            if count:
                tensor = vote_feature_tensor(arrays)
                bucket = np.minimum(team_spies, TEAM_SPY_BUCKETS - 1)
                chosen = arrays.vote_chosen  # (P, players): votes a deadline filled in are left out
                x = tensor[np.arange(count), :, leader_spy, bucket]  # (P, players, F)
                obs.vote_x.append(x[chosen])
                obs.vote_y.append(arrays.votes[chosen].astype(float))
                obs.vote_role.append(np.broadcast_to(spies, (count, record.players))[chosen])
                obs.vote_game.append(np.full(int(chosen.sum()), g))
            spies_playing = arrays.card_players.astype(np.intp) @ spies
            for playing, mission, failed, fails, required in zip(
                spies_playing,
                arrays.played_missions,
                arrays.failures_before[arrays.played_index],
                arrays.hidden_fails,
                arrays.played_fails_required,
                strict=True,
            ):
                obs.sabotage.append((g, int(mission), int(failed), int(required), int(playing), int(fails)))
            sizes = arrays.teams.sum(axis=1)
            for p in np.flatnonzero(arrays.team_chosen):
                on_team = int(arrays.teams[p, arrays.leaders[p]])
                obs.proposals.append(
                    (g, int(leader_spy[p]), record.players, int(sizes[p]), int(team_spies[p]), on_team)
                )
        return obs


def fit_logistic(x: np.ndarray, y: np.ndarray, penalty: np.ndarray, iterations: int = 50) -> np.ndarray:
    """L2-penalised logistic regression by Newton's method."""
    weights = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ weights)))
        gradient = x.T @ (p - y) + penalty * weights
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.max(np.abs(step)) < 1e-7:
            break
    return weights


def teams_like(leader_spy: int, players: int, spies: int, size: int, team_spies: int, on_team: int) -> int:
    """How many teams of `size` hold `team_spies` spies and do (1) or do not (0) hold the leader."""
    other_spies = spies - leader_spy
    other_resistance = players - spies - (1 - leader_spy)
    spies_to_pick = team_spies - (leader_spy if on_team else 0)
    seats_to_pick = size - on_team
    if spies_to_pick < 0 or seats_to_pick - spies_to_pick < 0:
        return 0
    return comb(other_spies, spies_to_pick) * comb(other_resistance, seats_to_pick - spies_to_pick)


SPY_COUNT = {5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}


def fit(obs: Observations, settings: FitSettings = FitSettings(), games: np.ndarray | None = None) -> BehaviourParams:
    """Fit on the games whose index is in `games` (all by default)."""
    use = np.ones(len(obs.plain), dtype=bool) if games is None else np.isin(np.arange(len(obs.plain)), games)
    plain = np.array(obs.plain)
    game_weight = np.where(plain, 1.0, settings.avalon_weight) * use

    plain_weights, avalon_weights = _fit_votes(obs, use, plain, settings)
    sabotage, sabotage_by_score = _fit_sabotage(obs, game_weight, settings)
    proposals = _fit_proposals(obs, game_weight, settings)
    avalon = BehaviourParams(
        vote_weights=avalon_weights,
        vote_exponent=settings.avalon_vote_exponent,
        opening_vote_exponent=settings.avalon_opening_vote_exponent,
        proposal_exponent=settings.avalon_proposal_exponent,
        sabotage_log_prob=sabotage,
        sabotage_score_log_prob=sabotage_by_score,
        proposal_log_prob=proposals,
    )
    return replace(
        avalon,
        vote_weights=plain_weights,
        vote_exponent=settings.vote_exponent,
        opening_vote_exponent=settings.opening_vote_exponent,
        proposal_exponent=settings.proposal_exponent,
        avalon=avalon,
    )


def _fit_votes(
    obs: Observations, use: np.ndarray, plain: np.ndarray, settings: FitSettings
) -> tuple[np.ndarray, np.ndarray]:
    """The vote weights for plain games (shared + plain offsets) and for Avalon games (shared alone)."""
    x = np.concatenate(obs.vote_x)
    y = np.concatenate(obs.vote_y)
    role = np.concatenate(obs.vote_role)
    game = np.concatenate(obs.vote_game)
    keep = use[game]
    plain_row = plain[game].astype(float)[:, None]
    features = len(VOTE_FEATURES)
    penalty = np.concatenate(
        [np.full(features, settings.shared_penalty), np.full(features, settings.plain_offset_penalty)]
    )
    plain_weights = np.zeros((2, features))
    avalon_weights = np.zeros((2, features))
    for r in (0, 1):
        rows = keep & (role == r)
        design = np.hstack([x[rows], x[rows] * plain_row[rows]])
        fitted = fit_logistic(design, y[rows], penalty)
        plain_weights[r] = fitted[:features] + fitted[features:]  # plain games are what the bot plays
        avalon_weights[r] = fitted[:features]
    return plain_weights, avalon_weights


def _fit_sabotage(obs: Observations, game_weight: np.ndarray, settings: FitSettings) -> tuple[np.ndarray, np.ndarray]:
    """The table by mission (smoothed towards all missions pooled), and by mission and score
    (smoothed towards the mission's)."""
    by_score = np.zeros((6, 3, 3, MAX_TEAM_SPIES + 1, MAX_TEAM_SPIES + 1))
    for g, mission, failed, required, team_spies, fails in obs.sabotage:
        by_score[mission, failed, required, min(team_spies, MAX_TEAM_SPIES), fails] += game_weight[g]
    counts = by_score.sum(axis=1)
    log_prob = np.full(counts.shape, -np.inf)
    for required in (1, 2):
        for k in range(MAX_TEAM_SPIES + 1):
            possible = np.arange(MAX_TEAM_SPIES + 1) <= k
            pooled = counts[1:, required, k].sum(axis=0) + possible * 1.0
            pooled = pooled / pooled.sum()
            for mission in range(1, 6):
                row = counts[mission, required, k] + settings.sabotage_prior * pooled
                with np.errstate(divide="ignore"):
                    log_prob[mission, required, k] = np.where(possible, np.log(row / row.sum()), -np.inf)
    # Earlier missions' results: a mission's failures before it fix its score (the rest succeeded).
    rows = by_score + settings.score_prior * np.exp(log_prob)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        score_log_prob = np.log(rows / rows.sum(axis=-1, keepdims=True))
    score_log_prob[np.broadcast_to(~np.isfinite(log_prob)[:, None], score_log_prob.shape)] = -np.inf
    return log_prob, score_log_prob


def _fit_proposals(obs: Observations, game_weight: np.ndarray, settings: FitSettings) -> np.ndarray:
    counts = np.zeros((2, 11, 6, MAX_TEAM_SPIES + 1, 2))
    for g, leader_spy, players, size, team_spies, on_team in obs.proposals:
        counts[leader_spy, players, size, team_spies, on_team] += game_weight[g]
    log_prob = np.full(counts.shape, -np.inf)
    for leader_spy in (0, 1):
        for players, spies in SPY_COUNT.items():
            for size in range(1, 6):
                teams = np.array(
                    [
                        [teams_like(leader_spy, players, spies, size, k, on) for on in (0, 1)]
                        for k in range(MAX_TEAM_SPIES + 1)
                    ],
                    dtype=float,
                )
                if teams.sum() == 0:
                    continue
                observed = counts[leader_spy, players, size]
                rate = (observed + settings.proposal_prior * teams / teams.sum()) / (
                    observed.sum() + settings.proposal_prior
                )
                with np.errstate(divide="ignore", invalid="ignore"):
                    log_prob[leader_spy, players, size] = np.where(teams > 0, np.log(rate / teams), -np.inf)
    return log_prob
