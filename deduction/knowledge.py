"""Who is asking, and what they legitimately know beyond the public record."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Viewer:
    """The asker: an outsider (`seat is None`), a Resistance seat, or a spy who knows every spy.

    A Resistance seat knows only that it is not a spy. A spy knows the full spy list
    (`known_spies`), which makes the answer exact. Nothing else about the hidden roles
    may reach the deduction.
    """

    seat: int | None = None
    known_spies: tuple[int, ...] | None = None

    @classmethod
    def outsider(cls) -> Viewer:
        return cls()

    @classmethod
    def resistance(cls, seat: int) -> Viewer:
        return cls(seat=seat)

    @classmethod
    def spy(cls, seat: int, spies: tuple[int, ...]) -> Viewer:
        return cls(seat=seat, known_spies=tuple(sorted(spies)))

    @property
    def is_spy(self) -> bool:
        return self.known_spies is not None
