"""The probability models, by name: how much weight each consistent assignment gets."""

from __future__ import annotations

import numpy as np

from deduction.behaviour import BehaviourParams, default_params, log_weights
from deduction.features import record_arrays
from engine import GameRecord

MODELS = ("behaviour", "uniform")
DEFAULT_MODEL = "behaviour"


def assignment_log_weights(
    model: str, record: GameRecord, assignments: np.ndarray, params: BehaviourParams | None = None
) -> np.ndarray:
    """Unnormalised log weight of each assignment (rows) under the named model."""
    if model == "uniform":
        return np.zeros(len(assignments))
    if model == "behaviour":
        return log_weights(record_arrays(record), assignments, params or default_params())
    raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
