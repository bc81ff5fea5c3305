"""How often a spy plays Fail: the fitted rates (agents/params/sabotage.json) as a small object."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

from agents.fit import LONE_FEATURES, lone_features


@dataclass(frozen=True)
class SabotageRates:
    lone_weights: tuple[float, ...]  # logistic weights, in the order of `agents.fit.LONE_FEATURES`
    team_rate: tuple[float, ...]  # missions 1..5: chance a team with two or more spies fails it

    @classmethod
    def from_dict(cls, data: dict) -> SabotageRates:
        weights = data["lone_spy_fail"]
        if set(weights) != set(LONE_FEATURES):
            raise ValueError(f"lone_spy_fail must have exactly {', '.join(LONE_FEATURES)}")
        team = data["team_fail_rate"]
        rates = tuple(float(team[str(m)]) for m in range(1, 6))
        if not all(0.0 <= r <= 1.0 for r in rates):
            raise ValueError("team_fail_rate must hold probabilities")
        return cls(tuple(float(weights[name]) for name in LONE_FEATURES), rates)

    def lone(self, mission: int, successes: int, failures: int) -> float:
        """Chance that a lone spy on `mission` plays Fail, as people did."""
        z = sum(w * x for w, x in zip(self.lone_weights, lone_features(mission, successes, failures), strict=True))
        return 1 / (1 + math.exp(-z))

    def team(self, mission: int) -> float:
        """Chance that a team holding two or more spies fails `mission`, as people's teams did."""
        return self.team_rate[mission - 1]


@cache
def default_rates() -> SabotageRates:
    """The rates shipped with the package."""
    text = resources.files("agents").joinpath("params/sabotage.json").read_text(encoding="utf-8")
    return SabotageRates.from_dict(json.loads(text))
