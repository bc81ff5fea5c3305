"""Who is asking, and what they legitimately know beyond the public record."""

from __future__ import annotations

from dataclasses import dataclass

from engine import Role, SeatView


@dataclass(frozen=True)
class SeenCard:
    """A mission card the asker watched being played (Keeping a Close Eye on You)."""

    mission: int  # the mission's number on the board
    seat: int
    fail: bool


@dataclass(frozen=True)
class Viewer:
    """The asker: an outsider (`seat is None`), a Resistance seat, or a spy who knows every spy.

    A Resistance seat knows that it is not a spy, and what Plot cards showed it alone: roles it
    saw (`known_roles`, seat and whether a spy) and mission cards it watched (`seen_cards`).
    A spy knows the full spy list (`known_spies`), which makes the answer exact. Nothing else
    about the hidden roles may reach the deduction.
    """

    seat: int | None = None
    known_spies: tuple[int, ...] | None = None
    known_roles: tuple[tuple[int, bool], ...] = ()  # (seat, is a spy)
    seen_cards: tuple[SeenCard, ...] = ()

    @classmethod
    def outsider(cls) -> Viewer:
        return cls()

    @classmethod
    def resistance(
        cls, seat: int, known_roles: tuple[tuple[int, bool], ...] = (), seen_cards: tuple[SeenCard, ...] = ()
    ) -> Viewer:
        return cls(seat=seat, known_roles=tuple(sorted(known_roles)), seen_cards=tuple(seen_cards))

    @classmethod
    def spy(cls, seat: int, spies: tuple[int, ...]) -> Viewer:
        return cls(seat=seat, known_spies=tuple(sorted(spies)))

    @property
    def is_spy(self) -> bool:
        return self.known_spies is not None


def viewer_of(seat: SeatView) -> Viewer:
    """What a seat knows, as the deduction takes it: a spy told who the spies are knows it all; a
    Resistance member knows their own side and what Plot cards showed them. (A spy under Blind
    Spies knows only their own side, which no `Viewer` describes: ValueError.)"""
    if seat.role is Role.SPY:
        if len(seat.known_spies) < 2:
            raise ValueError("a spy who does not know the other spies has no viewer")
        return Viewer.spy(seat.seat, seat.known_spies)
    return Viewer.resistance(
        seat.seat,
        tuple((seen.seat, seen.spy) for seen in seat.seen_roles),
        tuple(SeenCard(seen.mission, seen.seat, seen.fail) for seen in seat.seen_cards),
    )
