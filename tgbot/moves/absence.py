"""Missed deadlines: each seat's count in a row, and a computer player taking over the seat of a
person who keeps missing them (only where the group's settings allow it, off by default). With Plot
cards, also the holders who let a chance to use a card lapse unanswered: they are asked more briefly
until they answer one (`moves.clock.step_seconds`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine import still_to_act
from tgbot.changes import Change, Refused, Reply
from tgbot.i18n import t
from tgbot.outgoing import Outgoing, Send
from tgbot.render import board, private
from tgbot.render.common import seat_scene
from tgbot.table import Stage, Table

TAKEOVER_AFTER = 2  # deadlines missed in a row before a computer player takes the seat


def acted(table: Table, seat: int) -> Table:
    """A person acted for their seat: their missed deadlines start again from none, and a
    computer player that was taking their turns gives the seat back."""
    missed = _counts(table)
    if missed[seat] == 0 and seat not in table.autopilot:
        return table
    missed[seat] = 0
    return replace(table, missed=tuple(missed), autopilot=tuple(s for s in table.autopilot if s != seat))


def taken_back(table: Table, user_id: int, lang: str, move: Callable[[Table], Change]) -> Change:
    """A press for one of the presser's turns. A person whose turns a computer player takes gets
    the seat back by pressing, even when the press itself is refused: the computer player acts a
    few seconds after each decision opens, so the person's first press back mostly comes too late."""
    try:
        return move(table)
    except Refused as refused:
        seat = table.seat_of(user_id)
        if table.stage is not Stage.PLAYING or seat is None or seat not in table.autopilot:
            raise
        if table.game is not None and seat in still_to_act(table.game):
            # The computer player has not chosen yet: the choice is the person's, and so is the reason it was refused.
            return Change(acted(table, seat), [], refused.reply)
    # The press may be an old button's, of a choice the deadline or the person made: only that it was made is sure.
    text = t(lang, "That choice was already made. From now on you play yourself again.")
    return Change(acted(table, seat), [], Reply(text))


def hurried(table: Table, seat: int) -> bool:
    """Whether `seat` is asked more briefly at a chance: a person who let their last chance lapse
    unanswered. A computer player answers at once, so a seat it plays never is."""
    return seat in table.hurried and not table.played_by_computer(seat)


def chance_lapsed(table: Table, seat: int) -> Table:
    """`seat` let a chance to use a held card lapse unanswered (a pass the rules allow, not a missed
    turn): they are asked more briefly until they answer a chance themselves."""
    if table.played_by_computer(seat) or seat in table.hurried:
        return table
    return replace(table, hurried=tuple(sorted((*table.hurried, seat))))


def chance_answered(table: Table, seat: int) -> Table:
    """A person answered a chance themselves (used the card or passed): their full time again. Only
    this gives it back; a vote or a mission card says nothing of the chances they let lapse."""
    if seat not in table.hurried:
        return table
    return replace(table, hurried=tuple(s for s in table.hurried if s != seat))


def missed_deadline(table: Table, seats: tuple[int, ...]) -> tuple[Table, list[Outgoing]]:
    """`seats` let a deadline pass: count it, and where the group allows it and a person missed
    `TAKEOVER_AFTER` in a row, a computer player takes their turns until they act again."""
    missed = _counts(table)
    taken: list[int] = []
    for seat in seats:
        if table.played_by_computer(seat):
            continue
        missed[seat] += 1
        if table.settings.computer_takeover and missed[seat] >= TAKEOVER_AFTER:
            taken.append(seat)
    table = replace(table, missed=tuple(missed), autopilot=tuple(sorted(set(table.autopilot) | set(taken))))
    out: list[Outgoing] = []
    if taken:
        out.append(Send(table.chat_id, board.computer_took_over(table.players, taken, table.language)))
        for seat in taken:
            scene = seat_scene(table, seat)
            out.append(Send(table.players[seat].user_id, private.computer_took_over(scene), protected=True))
    return table, out


def _counts(table: Table) -> list[int]:
    return list(table.missed) + [0] * (len(table.players) - len(table.missed))
