"""Every way to seat the spies, as a boolean matrix, and which of them a record rules out."""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np

from deduction.missions import mission_facts
from engine import GameRecord


@cache
def all_assignments(players: int, spies: int) -> np.ndarray:
    """Matrix of shape (C(players, spies), players): row i marks the spies of assignment i.

    Rows are in the lexicographic order of `itertools.combinations`; the array is read-only
    because it is shared between calls.
    """
    combos = list(combinations(range(players), spies))
    rows = np.zeros((len(combos), players), dtype=bool)
    for i, combo in enumerate(combos):
        rows[i, list(combo)] = True
    rows.setflags(write=False)
    return rows


@cache
def assignment_floats(players: int, spies: int) -> tuple[np.ndarray, np.ndarray]:
    """`all_assignments(players, spies)` as floats, one seat per row (players, C(players, spies)):
    1.0 for a spy; and one assignment per row (C(players, spies), players): 1.0 for a Resistance
    seat. Counts as products of float matrices, which numpy hands to BLAS, each laid out as BLAS
    reads it fastest in the products the record's arrays make. Single precision counts exactly up
    to 2^24, far beyond the 210 assignments of a table, at twice the speed."""
    assignments = all_assignments(players, spies)
    spy_by_seat = np.ascontiguousarray(assignments.T, dtype=np.float32)
    resistance = (~assignments).astype(np.float32)
    spy_by_seat.setflags(write=False)
    resistance.setflags(write=False)
    return spy_by_seat, resistance


def spies_on(assignments: np.ndarray, seats: tuple[int, ...]) -> np.ndarray:
    """How many spies each assignment puts among `seats`."""
    return assignments[:, list(seats)].sum(axis=1)


def consistent_mask(record: GameRecord, assignments: np.ndarray | None = None) -> np.ndarray:
    """True for each assignment the record does not rule out: every played mission had at
    least as many spies among the members whose card was shuffled in unseen as it showed
    hidden Fail cards, and every member whose Fail card was shown is a spy."""
    if assignments is None:
        assignments = all_assignments(record.players, record.spies)
    mask = np.ones(len(assignments), dtype=bool)
    for mission in record.played_missions:
        facts = mission_facts(mission)
        if facts.hidden_fails:
            mask &= spies_on(assignments, facts.hidden_players) >= facts.hidden_fails
        for seat in facts.shown_spies:
            mask &= assignments[:, seat]
    return mask
