"""Every way to seat the spies, as a boolean matrix, and which of them a record rules out."""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np

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


def spies_on(assignments: np.ndarray, seats: tuple[int, ...]) -> np.ndarray:
    """How many spies each assignment puts among `seats`."""
    return assignments[:, list(seats)].sum(axis=1)


def consistent_mask(record: GameRecord, assignments: np.ndarray | None = None) -> np.ndarray:
    """True for each assignment the record does not rule out: every played mission had at
    least as many spies among the members who played their own card as it showed Fail cards."""
    if assignments is None:
        assignments = all_assignments(record.players, record.spies)
    mask = np.ones(len(assignments), dtype=bool)
    for mission in record.played_missions:
        if mission.fails:
            mask &= spies_on(assignments, mission.card_players) >= mission.fails
    return mask
