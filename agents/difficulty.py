"""How well a computer player plays."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Difficulty:
    name: str
    noise: float  # chance of proposing or voting at random among the legal choices
    coordinate: bool  # spies on one team agree who plays Fail, and a Fail that decides the game is always played


EASY = Difficulty("easy", noise=0.3, coordinate=False)
NORMAL = Difficulty("normal", noise=0.0, coordinate=True)
DIFFICULTIES = {d.name: d for d in (EASY, NORMAL)}


def difficulty_named(name: str) -> Difficulty:
    try:
        return DIFFICULTIES[name]
    except KeyError:
        raise ValueError(f"unknown difficulty {name!r}; choose one of {', '.join(DIFFICULTIES)}") from None
