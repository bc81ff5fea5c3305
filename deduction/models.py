"""The probability models, by name: how much weight each consistent assignment gets."""

from __future__ import annotations

import numpy as np

from deduction.behaviour import BehaviourParams, Evidence, default_params, evidence
from deduction.features import RecordArrays

MODELS = ("behaviour", "uniform")
DEFAULT_MODEL = "behaviour"


def assignment_evidence(
    model: str,
    arrays: RecordArrays,
    assignments: np.ndarray,
    params: BehaviourParams | None = None,
    own_seat: int | None = None,
) -> Evidence:
    """Each piece of evidence's log weight for each assignment (rows) under the named model (none
    at all under `uniform`). `own_seat`: the asking Resistance player, whose own choices weigh nothing."""
    if model == "uniform":
        rows = len(assignments)
        return Evidence(np.zeros((rows, 0)), np.zeros((rows, arrays.players)), np.zeros((rows, arrays.players)))
    if model == "behaviour":
        return evidence(arrays, assignments, params or default_params(), own_seat)
    raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
