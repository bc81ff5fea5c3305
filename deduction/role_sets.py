"""Which rules a record's players played by, as far as it changes how they behaved."""

from __future__ import annotations

from engine import GameRecord


def is_plain(record: GameRecord) -> bool:
    """A game of The Resistance itself; `source.roles: "avalon"` marks one played with Avalon's roles,
    where Merlin knew the spies and the table voted on his hints."""
    return (record.source or {}).get("roles", "resistance") == "resistance"
