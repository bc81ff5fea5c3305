"""What a seat believes about the hidden roles, from the deduction, and what that says of a team.

A belief is the deduction's weighted list of spy assignments the seat cannot rule out.
Deductions are cached per public record and viewer: the answer depends on nothing else,
so a cache shared by every seat of a game leaks nothing between them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from itertools import combinations

import numpy as np

from agents.view import AgentView
from deduction.analysis import deduce
from deduction.behaviour import BehaviourParams, default_params
from deduction.exact import ImpossibleRecord
from deduction.knowledge import Viewer, viewer_of
from engine import GameRecord


@dataclass(frozen=True)
class Belief:
    rows: np.ndarray  # (R, players) bool: the spy assignments not ruled out
    weights: np.ndarray  # (R,) their probabilities, summing to 1
    spy_probability: np.ndarray  # (players,) each seat's chance of being a spy

    def reaching(self, teams: np.ndarray, spies_needed: int) -> np.ndarray:
        """For each team (rows of a bool matrix), the chance it holds at least `spies_needed` spies."""
        on_team = teams.astype(np.float64) @ self.rows.T.astype(np.float64)
        return (on_team >= spies_needed - 0.5).astype(np.float64) @ self.weights

    def success_chance(self, teams: np.ndarray, fails_required: int) -> np.ndarray:
        """For each team, the chance that it holds too few spies to fail its mission."""
        return 1.0 - self.reaching(teams, fails_required)

    def restricted(self, seat: int, known_roles: tuple[tuple[int, bool], ...] = ()) -> Belief:
        """The belief of someone who also knows that `seat` is a spy (a blind spy about themselves),
        and the side of each seat in `known_roles` (seat, is a spy)."""
        keep = self.rows[:, seat].copy()
        for other, spy in known_roles:
            keep &= self.rows[:, other] == spy
        weights = self.weights[keep]
        total = weights.sum()
        weights = weights / total if total > 0 else np.full(len(weights), 1.0 / max(len(weights), 1))
        rows = self.rows[keep]
        return Belief(rows, weights, weights @ rows)


def exact_belief(players: int, spies: tuple[int, ...]) -> Belief:
    row = np.zeros((1, players), dtype=bool)
    row[0, list(spies)] = True
    return Belief(row, np.ones(1), row[0].astype(np.float64))


class Deductions:
    """Deductions per public record and viewer, as beliefs; `clear()` between games keeps it small,
    and it empties itself once it holds `max_entries` (a long-lived cache in the bot stays bounded)."""

    def __init__(self, max_entries: int = 4096) -> None:
        self._cache: dict[tuple, Belief] = {}
        self.max_entries = max_entries

    def clear(self) -> None:
        self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)

    def belief(self, record: GameRecord, viewer: Viewer) -> Belief:
        key = (record.players, record.variants, record.missions, viewer)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= self.max_entries:
                self._cache.clear()
            found = self._cache[key] = _belief(record, viewer)
        return found


@cache
def computer_reading() -> BehaviourParams:
    """The deduction's parameters as computer players read a table: the votes before any mission
    weigh as much as the later ones. People's first votes follow the table's talk, and the hints
    weigh them less; a computer player's first vote comes from the same reasoning as its later
    ones, and reading them fully wins more games among computer players (docs/agents.md)."""
    shipped = default_params()
    return replace(shipped, opening_vote_exponent=shipped.vote_exponent)


def _belief(record: GameRecord, viewer: Viewer) -> Belief:
    answer = deduce(record, viewer, params=computer_reading())
    rows = answer.facts.possible_rows
    log_w = answer.log_weights
    weights = np.exp(log_w - log_w.max()) if np.isfinite(log_w.max()) else np.ones(len(rows))
    return Belief(rows, weights / weights.sum(), np.array(answer.spy_probability))


def own_belief(view: AgentView, deductions: Deductions) -> Belief:
    """What the seat itself believes: a Resistance member from the record and its own role, a spy
    who knows every spy exactly, a blind spy as the table sees it plus that it is a spy and the
    sides its Plot cards showed it."""
    if not view.is_spy:
        # With Plot cards, what the seat alone saw (a role, a mission card) counts as certain.
        return deductions.belief(view.record, viewer_of(view.own))
    if view.knows_all_spies:
        return exact_belief(view.players, view.own.known_spies)
    # A blind spy: what Plot cards showed it alone counts too (a role it saw, a Fail it watched).
    known = tuple((seen.seat, seen.spy) for seen in view.own.seen_roles)
    known += tuple((seen.seat, True) for seen in view.own.seen_cards if seen.fail)
    return deductions.belief(view.record, Viewer.outsider()).restricted(view.seat, known)


def table_belief(view: AgentView, deductions: Deductions) -> Belief:
    """How the table as a whole sees every seat: the public record alone."""
    return deductions.belief(view.record, Viewer.outsider())


def cover_belief(view: AgentView, deductions: Deductions) -> Belief:
    """What a Resistance member in this seat would believe: the spies' cover story. When the record
    already shows the seat must be a spy, there is no such story: the table's view stands in."""
    try:
        return deductions.belief(view.record, Viewer.resistance(view.seat))
    except ImpossibleRecord:
        return table_belief(view, deductions)


@cache
def teams_of(players: int, size: int) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
    """Every team of `size` at a table of `players`, in seat order, and the same as a bool matrix."""
    teams = tuple(combinations(range(players), size))
    matrix = np.zeros((len(teams), players), dtype=bool)
    for i, team in enumerate(teams):
        matrix[i, list(team)] = True
    matrix.setflags(write=False)
    return teams, matrix


def team_row(players: int, team: tuple[int, ...]) -> np.ndarray:
    row = np.zeros((1, players), dtype=bool)
    row[0, list(team)] = True
    return row
