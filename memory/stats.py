"""A person's counts in one group: games and wins, as Resistance and as spy, per variant.

A game counts once for each person who sat in it (`add`); counts of several groups add up
(`merged`) for the person's /stats in private. Stored as JSON, one document per person and group.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from memory.summary import GameSummary

STANDARD = "standard"  # the variant key of a game with none


@dataclass(frozen=True)
class Tally:
    games: int = 0
    wins: int = 0

    def plus(self, won: bool) -> Tally:
        return Tally(self.games + 1, self.wins + int(won))

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.games + other.games, self.wins + other.wins)

    @property
    def rate(self) -> float | None:
        """The share of games won; None before the first game."""
        return self.wins / self.games if self.games else None


@dataclass(frozen=True)
class PersonStats:
    resistance: Tally = Tally()
    spy: Tally = Tally()
    # Variant key ("standard", or the variants played joined by "+", e.g. "targeting+plot_cards") -> tally.
    variants: dict[str, Tally] = field(default_factory=dict)

    @property
    def overall(self) -> Tally:
        return self.resistance + self.spy

    def add(self, summary: GameSummary, seat: int) -> PersonStats:
        """These counts with one more game: the one `summary` records, played from `seat`."""
        won = summary.won(seat)
        variant = variant_key(summary)
        variants = dict(self.variants)
        variants[variant] = variants.get(variant, Tally()).plus(won)
        if summary.is_spy(seat):
            return replace(self, spy=self.spy.plus(won), variants=variants)
        return replace(self, resistance=self.resistance.plus(won), variants=variants)

    def merged(self, other: PersonStats) -> PersonStats:
        variants = dict(self.variants)
        for key, tally in other.variants.items():
            variants[key] = variants.get(key, Tally()) + tally
        return PersonStats(self.resistance + other.resistance, self.spy + other.spy, variants)

    def to_json(self) -> str:
        def pair(tally: Tally) -> list[int]:
            return [tally.games, tally.wins]

        data = {
            "resistance": pair(self.resistance),
            "spy": pair(self.spy),
            "variants": {key: pair(tally) for key, tally in sorted(self.variants.items())},
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> PersonStats:
        if not text:
            return cls()
        data = json.loads(text)
        return cls(
            Tally(*data["resistance"]),
            Tally(*data["spy"]),
            {key: Tally(*pair) for key, pair in data["variants"].items()},
        )


def variant_key(summary: GameSummary) -> str:
    return "+".join(summary.variants) or STANDARD


def added(stats: dict[int, PersonStats], summary: GameSummary) -> dict[int, PersonStats]:
    """Each person's counts after the game: the people who sat in it, each once (their first seat)."""
    new = {}
    for user_id in summary.people():
        seat = summary.seats_of(user_id)[0]
        new[user_id] = stats.get(user_id, PersonStats()).add(summary, seat)
    return new
