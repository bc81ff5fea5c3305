"""A player's private hints: the deduction engine run on the public record and their own role only."""

from __future__ import annotations

from deduction.analysis import deduce
from deduction.knowledge import Viewer
from deduction.reasons import explain
from engine import record_of, seat_view
from engine.state import Role
from tgbot import render
from tgbot.table import Table

MAX_REASONS_SHOWN = 3


def hints_text(table: Table, seat: int) -> str:
    """What `seat` may be told. A Resistance member sees the others through their own eyes; a spy,
    who knows everything already, sees how the Resistance sees the table (the public record alone)."""
    record = record_of(table.game, table.id).without_outcome()
    view = seat_view(table.game, seat)
    spy_view = view.role is Role.SPY
    viewer = Viewer.outsider() if spy_view else Viewer.resistance(seat)
    deduction = deduce(record, viewer)
    reasons = explain(record, deduction, limit=MAX_REASONS_SHOWN)
    return render.hints(table, seat, deduction.spy_probability, deduction.possible, reasons, spy_view)
