"""People's ratings: OpenSkill over the two sides of each game, and a side's modelled chance to win.

Pure: no I/O beyond reading the package's own fitted numbers (memory/params/ratings.json) once.
How it is modelled and how well it predicts: docs/ratings.md (benchmarks/ratings_fit.py measures).

- A game is a match of two teams, the Resistance and the spies, the winner ranked first.
- OpenSkill rates a team by the sum of its players' mu, which would make the bigger side (the
  Resistance, always) the favourite before anyone has played, and so make a spies' win look like
  an upset every time. Each update therefore adds a fixed, never-rated "side" player with mu
  `MU * (size difference) + side_offset[players]` to the Resistance. The shipped offsets are 0:
  two sides of unknown players are even in the updates (offsets matching each side's own win
  rate, and OpenSkill as it is, both predicted worse).
- A computer seat is a player at `DEFAULT` who is never updated: it takes part in the team's
  strength and uncertainty, and nobody's rating is stored for it.
- Someone missing from `ratings` starts at `DEFAULT`.
- The chance the Resistance wins is logistic(base_logit[players] + k * edge), where edge is
  OpenSkill's z-score of the skill difference between the sides, measured from `DEFAULT` so that
  two sides of unknown players get exactly the base rate for that player count.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, TypeVar

from openskill import models

MU = 25.0
SIGMA = MU / 3

Id = TypeVar("Id", bound=Hashable)


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative skill /top ranks by: the skill is above it at 99.9% (one-sided)."""
        return self.mu - 3 * self.sigma

    def to_text(self) -> str:
        return f"{self.mu:.4f} {self.sigma:.4f}"

    @classmethod
    def from_text(cls, text: str) -> Rating:
        mu, sigma = text.split()
        rating = cls(float(mu), float(sigma))
        if not (math.isfinite(rating.mu) and math.isfinite(rating.sigma) and rating.sigma > 0):
            raise ValueError(f"not a rating: {text!r}")
        return rating


DEFAULT = Rating(MU, SIGMA)


@dataclass(frozen=True)
class Params:
    model: str  # an openskill.models name, e.g. "PlackettLuce"
    beta: float  # OpenSkill's performance noise: how much one game says about skill
    tau: float  # OpenSkill's drift: keeps sigma from shrinking to nothing, so ratings keep moving
    side_offset: Mapping[int, float]  # players -> the Resistance's handicap (mu units) in updates
    base_logit: Mapping[int, float]  # players -> log-odds the Resistance wins between unknown sides
    k: float  # how much the skill edge moves those log-odds

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Params:
        return cls(
            model=data["model"],
            beta=float(data["beta"]),
            tau=float(data["tau"]),
            side_offset={int(n): float(v) for n, v in data["side_offset"].items()},
            base_logit={int(n): float(v) for n, v in data["base_logit"].items()},
            k=float(data["k"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "beta": self.beta,
            "tau": self.tau,
            "side_offset": {str(n): v for n, v in sorted(self.side_offset.items())},
            "base_logit": {str(n): v for n, v in sorted(self.base_logit.items())},
            "k": self.k,
        }


@lru_cache(maxsize=1)
def default_params() -> Params:
    """The parameters shipped with the package (memory/params/ratings.json)."""
    text = resources.files("memory").joinpath("params/ratings.json").read_text(encoding="utf-8")
    return Params.from_json(json.loads(text))


@lru_cache(maxsize=8)
def _model(name: str, beta: float, tau: float) -> Any:
    # limit_sigma: a game never makes anyone's rating less certain (tau only slows the narrowing).
    return getattr(models, name)(mu=MU, sigma=SIGMA, beta=beta, tau=tau, limit_sigma=True)


def _check(resistance: Sequence[Id], spies: Sequence[Id], players: int, computers: int, params: Params) -> None:
    if players not in params.base_logit:
        raise ValueError(f"no ratings for games of {players} players")
    if len(resistance) + len(spies) + computers != players:
        raise ValueError("the sides and computer seats do not add up to the players")
    if len(set(resistance) | set(spies)) != len(resistance) + len(spies):
        raise ValueError("someone is named twice")


def skill_edge(
    ratings: Mapping[Id, Rating],
    resistance: Sequence[Id],
    spies: Sequence[Id],
    *,
    resistance_computers: int = 0,
    spy_computers: int = 0,
    params: Params | None = None,
) -> float:
    """OpenSkill's z-score of the Resistance's skill over the spies', each player measured from
    `DEFAULT` (so it is 0 for unknown players whatever the sides' sizes)."""
    p = params or default_params()
    res = [ratings.get(i, DEFAULT) for i in resistance] + [DEFAULT] * resistance_computers
    spy = [ratings.get(i, DEFAULT) for i in spies] + [DEFAULT] * spy_computers
    lead = sum(r.mu - MU for r in res) - sum(r.mu - MU for r in spy)
    spread = 2 * p.beta**2 + sum(r.sigma**2 for r in res + spy)
    return lead / math.sqrt(spread)


def resistance_win_chance(
    ratings: Mapping[Id, Rating],
    resistance: Sequence[Id],
    spies: Sequence[Id],
    players: int,
    *,
    resistance_computers: int = 0,
    spy_computers: int = 0,
    params: Params | None = None,
) -> float:
    """The modelled chance the Resistance wins, in (0, 1)."""
    p = params or default_params()
    _check(resistance, spies, players, resistance_computers + spy_computers, p)
    edge = skill_edge(
        ratings, resistance, spies, resistance_computers=resistance_computers, spy_computers=spy_computers, params=p
    )
    logit = p.base_logit[players] + p.k * edge
    # Clamped so the answer stays strictly inside (0, 1) in floating point, and shows as at most 99.9%.
    return 1 / (1 + math.exp(-min(max(logit, -7.0), 7.0)))


def rate(
    ratings: Mapping[Id, Rating],
    resistance: Sequence[Id],
    spies: Sequence[Id],
    resistance_won: bool,
    players: int,
    *,
    resistance_computers: int = 0,
    spy_computers: int = 0,
    params: Params | None = None,
) -> dict[Id, Rating]:
    """The new ratings of everyone named on either side after one game; nobody else changes, and
    computer seats are not rated."""
    p = params or default_params()
    _check(resistance, spies, players, resistance_computers + spy_computers, p)
    model = _model(p.model, p.beta, p.tau)

    def team(ids: Sequence[Id], computers: int) -> list[Any]:
        return [model.rating(mu=r.mu, sigma=r.sigma) for r in (ratings.get(i, DEFAULT) for i in ids)] + [
            model.rating(mu=MU, sigma=SIGMA) for _ in range(computers)
        ]

    res, spy = team(resistance, resistance_computers), team(spies, spy_computers)
    # The side player: evens the sides' sizes and carries the side's own advantage; sigma 0 so it
    # adds no uncertainty, and it is thrown away after the update.
    handicap = MU * (len(spy) - len(res)) + p.side_offset.get(players, 0.0)
    new_res, new_spy = model.rate(
        [res + [model.rating(mu=handicap, sigma=0.0)], spy], ranks=[0, 1] if resistance_won else [1, 0]
    )
    updated = zip(list(resistance) + list(spies), new_res[: len(resistance)] + new_spy[: len(spies)], strict=True)
    # Rounded as stored (to_text), so ratings carried in memory (a rebuild) equal those read back.
    return {i: Rating(round(r.mu, 4), round(r.sigma, 4)) for i, r in updated}
