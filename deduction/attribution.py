"""What each group of evidence did to each seat's spy probability, measured by the model itself.

The behaviour model's log weight of an assignment is a sum of pieces (`behaviour.Evidence`).
The pieces fall into groups a player can name:

- `mission_result`: one played mission's Fail cards as behaviour (its sabotage column: how
  likely spies on that team were to play what was shown). The hard logic of a Fail count
  (which assignments it rules out) is not in it: that already decided which rows exist, and
  its exact reasons (`certain_spy`, `mission_fails`, ...) say so.
- `votes`: every vote one seat chose, all proposals together. Taking them out of the record
  also changes how the others' votes on those proposals are read (each vote is read given
  the share of the others approving), so their effect is measured with that too.
- `proposals`: every team one seat chose as leader.

The effect of a group g on seat s is leave-one-group-out:

    effect[g, s] = P(s is a spy | all evidence) - P(s is a spy | all evidence but g)

so a positive effect means g raised the seat's spy chance, and taking g out of the evidence
moves the probability back by exactly that much. Effects are measured one group at a time
with all the others present, so they need not add up to the seat's whole shift: two groups
that say the same thing each take little back. (Exact Shapley values would split such shared
credit, but then no single removal would show the stated number; the hint says what removing
the evidence does, which a player can check.)

Only the fact that the pieces add up to the log weight is relied on: however the model scales
them, removing a mission's or a leader's column is removing that evidence, and the evidence
says how much of the vote term goes with each seat's votes (`Evidence.vote_term_lost_without_each_seat`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from deduction.behaviour import Evidence

MISSION_RESULT = "mission_result"
VOTES = "votes"
PROPOSALS = "proposals"


@dataclass(frozen=True)
class EvidenceGroup:
    kind: str  # MISSION_RESULT, VOTES or PROPOSALS
    index: int  # the played mission's position among the played missions, or the voter's / leader's seat


@dataclass(frozen=True)
class Attribution:
    groups: tuple[EvidenceGroup, ...]
    effects: np.ndarray  # (groups, players): P(all evidence) - P(all but that group), per seat

    def effect(self, group: EvidenceGroup) -> np.ndarray:
        """That group's effect on every seat (zeros for a group that weighs nothing)."""
        return self.effects[self.groups.index(group)]


@lru_cache(maxsize=64)
def _groups(missions: int, players: int) -> tuple[EvidenceGroup, ...]:
    return (
        tuple(EvidenceGroup(MISSION_RESULT, m) for m in range(missions))
        + tuple(EvidenceGroup(VOTES, s) for s in range(players))
        + tuple(EvidenceGroup(PROPOSALS, s) for s in range(players))
    )


def evidence_groups(evidence: Evidence) -> tuple[tuple[EvidenceGroup, ...], np.ndarray]:
    """Every group and how much of each assignment's log weight taking it out of the record
    removes: (groups, (1 + G, A) matrix, row 0 all zeros for nothing taken out, row 1 + g for
    group g). For a mission's result or a leader's teams that is its own column of the evidence; a
    seat's votes also shape how the others' votes are read, so theirs is the whole vote term less
    what it would be without them.

    One row per group, not one column: every step after this reduces over the assignments, and
    numpy reduces along a contiguous row in one pass where it would go down a column one row of
    the matrix at a time."""
    groups = _groups(evidence.sabotage.shape[1], evidence.votes.shape[1])
    votes_removed = evidence.vote_term_lost_without_each_seat()
    removed = np.empty((1 + len(groups), len(votes_removed)))
    removed[0] = 0.0
    np.concatenate([evidence.sabotage, votes_removed, evidence.proposals], axis=1, out=removed[1:].T)
    return groups, removed


def spies_and_ones(rows: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """The assignments `rows` (A, players) as 1.0 and 0.0 with a last column of ones: a product of
    weights with it gives every seat's spy weight and the weights' sum at once."""
    matrix = np.ones((len(rows), rows.shape[1] + 1), dtype=dtype)
    matrix[:, :-1] = rows
    return matrix


def _probabilities(log_weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Spy probability per seat for each row of log weights: (K, A) -> (K, players). `rows`: the
    assignments as 1.0 and 0.0, with a last column of ones, which sums each row's weights in the
    same product."""
    weights = np.exp(log_weights - log_weights.max(axis=1, keepdims=True))
    summed = weights @ rows  # (K, players + 1)
    return summed[:, :-1] / summed[:, -1:]


def attribute(rows: np.ndarray, evidence: Evidence) -> Attribution:
    """Each evidence group's effect on each seat, for the possible assignments `rows` (A, players)
    and the evidence weighed for them (the same rows)."""
    groups, removed = evidence_groups(evidence)
    if len(rows) == 0 or len(groups) == 0:
        return Attribution(groups, np.zeros((len(groups), rows.shape[1])))
    # What is removed equally from every assignment cancels in the softmax: its effect is exactly
    # zero (the asker's own choices, a mission nobody could have sabotaged), not rounding noise.
    moving = (removed[1:] != removed[1:, :1]).any(axis=1)
    with_ones = spies_and_ones(rows)
    # Row 0: all the evidence; row 1 + g: all but group g. One softmax for all.
    probabilities = _probabilities(evidence.total() - removed, with_ones)
    # A seat that is a spy in every possible assignment, or in none, stays so whatever is taken
    # out: its effects are exactly zero, not a softmax's rounding noise (whose sign would pick a fact).
    spy_counts = with_ones[:, -1] @ with_ones[:, :-1]  # exact: whole numbers
    uncertain = (spy_counts > 0) & (spy_counts < len(rows))
    effects = (probabilities[0] - probabilities[1:]) * uncertain
    effects[~moving] = 0.0
    return Attribution(groups, effects)
