"""A player's private hints: the deduction engine run on the public record and their own role only."""

from __future__ import annotations

from deduction.analysis import Deduction, deduce
from deduction.knowledge import Viewer, viewer_of
from deduction.reasons import explain
from engine import GameRecord, record_of, seat_view
from engine.state import Role
from tgbot.render import hints as hints_render
from tgbot.render.common import seat_scene
from tgbot.table import Table


def hint_deduction(table: Table, seat: int) -> tuple[GameRecord, Deduction, bool]:
    """The public record now, the deduction `seat` may be shown, and whether it is a spy's view.

    A Resistance member sees the others through their own eyes (with what Plot cards showed
    them alone); a spy sees the table as the public record alone shows it, no role known (not
    as any Resistance member sees it: each of them knows their own role). The record is the one
    /record exports once the game is over, cut to this moment, so the same numbers come from
    `python -m deduction batch` on it.
    """
    record = record_of(table.game, table.id).without_outcome()
    own = seat_view(table.game, seat)
    spy_view = own.role is Role.SPY
    viewer = Viewer.outsider() if spy_view else viewer_of(own)
    return record, deduce(record, viewer), spy_view


def hints_text(table: Table, seat: int) -> str:
    """What `seat` may be told."""
    record, deduction, spy_view = hint_deduction(table, seat)
    explanation = explain(record, deduction, per_seat=hints_render.REASONS_PER_SEAT)
    listed = hints_render.listed_seats(seat, len(table.players), spy_view)
    if hints_render.unexplained(deduction.spy_probability, explanation, listed):
        # The numbers shown differ, yet no effect reached `MIN_POINTS` (the first votes, each a point
        # or two) and no Fail card sets seats apart: the largest are named however small, down to a point.
        explanation = explain(record, deduction, per_seat=hints_render.REASONS_PER_SEAT, min_points=1)
    return hints_render.hints(
        seat_scene(table, seat),
        deduction.spy_probability,
        deduction.possible,
        explanation,
        spy_view,
        counted_up_to(record),
    )


def counted_up_to(record: GameRecord) -> hints_render.Counted | None:
    """The last thing the record counts: the latest vote, and the result of its mission if that was
    played; None before the first vote."""
    if not record.missions:
        return None
    latest = record.missions[-1]  # rounds in the order played; each holds only its voted proposals
    return hints_render.Counted(latest.mission, len(latest.proposals), latest.played)
