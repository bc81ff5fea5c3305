"""A finished table as its group's memory keeps it (`memory.summary.GameSummary`)."""

from __future__ import annotations

from engine import export_record
from memory.summary import GameSummary, Seat
from tgbot.table import Table


def summary_of(table: Table, ended_at: float) -> GameSummary:
    """The summary of a table whose game is over (`table.game.is_over`)."""
    game = table.game
    if game is None or not game.is_over:
        raise ValueError("only a finished game is kept in its group's memory")
    seats = tuple(Seat(None if p.computer else p.user_id, p.name, p.computer) for p in table.players[: game.players])
    return GameSummary(table.id, table.chat_id, ended_at, seats, export_record(game, table.id))
