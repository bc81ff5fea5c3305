"""People's ratings in a group: OpenSkill (Plackett-Luce), the two sides of a game rated as teams."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from openskill.models import PlackettLuce


@cache
def _model() -> PlackettLuce:
    return PlackettLuce()


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """A conservative estimate of skill: what /top ranks by."""
        return self.mu - 3 * self.sigma

    def to_text(self) -> str:
        return f"{self.mu:.4f} {self.sigma:.4f}"

    @classmethod
    def from_text(cls, text: str) -> Rating:
        mu, sigma = text.split()
        return cls(float(mu), float(sigma))


DEFAULT = Rating(_model().mu, _model().sigma)


def rate(
    ratings: Mapping[str, Rating],
    resistance: Sequence[str],
    spies: Sequence[str],
    resistance_won: bool,
    players: int,
    *,
    resistance_computers: int = 0,
    spy_computers: int = 0,
) -> dict[str, Rating]:
    """New ratings of the people on both sides; computer players sit at the default rating and are
    not rated. `players` is the table's size (a side's chance depends on it)."""
    model = _model()

    def team(ids: Sequence[str], computers: int) -> list:
        return [model.rating(*_pair(ratings.get(i, DEFAULT))) for i in ids] + [
            model.rating(DEFAULT.mu, DEFAULT.sigma) for _ in range(computers)
        ]

    sides = [team(resistance, resistance_computers), team(spies, spy_computers)]
    new = model.rate(sides, ranks=[0, 1] if resistance_won else [1, 0])
    rated = {}
    for ids, side in ((resistance, new[0]), (spies, new[1])):
        for person, rating in zip(ids, side, strict=False):
            rated[person] = Rating(rating.mu, rating.sigma)
    return rated


def _pair(rating: Rating) -> tuple[float, float]:
    return rating.mu, rating.sigma
