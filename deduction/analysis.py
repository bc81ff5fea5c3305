"""The deduction API: one record and one asker in, spy probabilities and their reasons out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deduction.behaviour import BehaviourParams, Evidence, default_params
from deduction.exact import ExactFacts, SpyGroup, exact_facts
from deduction.features import RecordArrays, record_arrays
from deduction.knowledge import Viewer
from deduction.models import DEFAULT_MODEL, assignment_evidence
from engine import GameRecord


@dataclass(frozen=True)
class Deduction:
    viewer: Viewer
    model: str
    spy_probability: tuple[float, ...]  # one per seat; sums to the number of spies
    consistent: int  # assignments the public record does not rule out
    possible: int  # of those, the ones the viewer's own knowledge does not rule out either
    certain_spies: tuple[int, ...]
    certain_resistance: tuple[int, ...]
    spy_groups: tuple[SpyGroup, ...]
    facts: ExactFacts
    log_weights: np.ndarray  # per possible assignment, under the model
    evidence: Evidence  # the pieces `log_weights` adds up, per possible assignment
    arrays: RecordArrays  # the public record as the model read it


def deduce(
    record: GameRecord,
    viewer: Viewer | None = None,
    model: str = DEFAULT_MODEL,
    params: BehaviourParams | None = None,
) -> Deduction:
    """Spy probabilities for every seat as `viewer` can know them.

    Only the public record (never its outcome) and the viewer's own knowledge are used.
    Raises `ImpossibleRecord` when nothing fits, `ValueError` for an unknown model or viewer.
    """
    viewer = viewer if viewer is not None else Viewer.outsider()
    record = record.without_outcome()
    arrays = record_arrays(record)
    facts = exact_facts(record, viewer, arrays.consistent)
    rows = facts.possible_rows
    # A Resistance asker's own votes and teams are no evidence to them about the others.
    own_seat = viewer.seat if not viewer.is_spy else None
    pieces = assignment_evidence(model, arrays, rows, (params or default_params()).for_record(record), own_seat)
    log_w = pieces.total()
    most = log_w.max()
    weights = np.exp(log_w - most) if np.isfinite(most) else np.ones(len(rows))
    # Rounding can push a sum of weights a hair past its total; a certain seat is exactly 0 or 1.
    probability = np.minimum((weights @ rows) / weights.sum(), 1.0)
    probability[list(facts.certain_spies)] = 1.0
    probability[list(facts.certain_resistance)] = 0.0
    return Deduction(
        viewer=viewer,
        model=model,
        spy_probability=tuple(probability.tolist()),
        consistent=int(np.count_nonzero(facts.consistent)),
        possible=len(rows),
        certain_spies=facts.certain_spies,
        certain_resistance=facts.certain_resistance,
        spy_groups=facts.spy_groups,
        facts=facts,
        log_weights=log_w,
        evidence=pieces,
        arrays=arrays,
    )
