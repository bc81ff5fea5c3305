"""Which rules a record's players played by, as far as it changes how they behaved."""

from __future__ import annotations

from engine import GameRecord


def played_with_avalon_roles(record: GameRecord) -> bool:
    """`source.roles: "avalon"` marks a game played with Avalon's roles, where Merlin knew the spies
    and the table voted on his hints (the record format's own marking; any other value, or none, is a
    game of The Resistance itself)."""
    return (record.source or {}).get("roles") == "avalon"


def is_plain(record: GameRecord) -> bool:
    """A game of The Resistance itself."""
    return not played_with_avalon_roles(record)
