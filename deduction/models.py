"""The probability models, by name: how much weight each consistent assignment gets."""

from __future__ import annotations

import numpy as np

from deduction.behaviour import BehaviourParams, Evidence, default_params, evidence
from deduction.features import record_arrays
from engine import GameRecord

MODELS = ("behaviour", "uniform")
DEFAULT_MODEL = "behaviour"


def assignment_evidence(
    model: str,
    record: GameRecord,
    assignments: np.ndarray,
    params: BehaviourParams | None = None,
    own_seat: int | None = None,
) -> Evidence:
    """Each piece of evidence's log weight for each assignment (rows) under the named model (none
    at all under `uniform`). `own_seat`: the asking Resistance player, whose own choices weigh nothing."""
    if model == "uniform":
        rows = len(assignments)
        return Evidence(np.zeros((rows, 0)), np.zeros((rows, record.players)), np.zeros((rows, record.players)))
    if model == "behaviour":
        return evidence(record_arrays(record), assignments, params or default_params(), own_seat)
    raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")


def assignment_log_weights(
    model: str,
    record: GameRecord,
    assignments: np.ndarray,
    params: BehaviourParams | None = None,
    own_seat: int | None = None,
) -> np.ndarray:
    """Unnormalised log weight of each assignment (rows) under the named model."""
    return assignment_evidence(model, record, assignments, params, own_seat).total()
