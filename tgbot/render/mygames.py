"""/mygames: every table a person sits at, and what each waits for from them. Told in private only:
whose turn it is is public, but the list of one person's games is theirs."""

from __future__ import annotations

from engine import Phase, public_view
from tgbot.i18n import t
from tgbot.render.common import title
from tgbot.render.pace import moment
from tgbot.table import Stage, Table


def my_games(tables: list[tuple[Table, int]], lang: str) -> str:
    """`tables`: each open or running table with the person's seat at it."""
    if not tables:
        return t(lang, "You sit at no game now. Open one in a group with /newgame.")
    lines = [t(lang, "🎲 <b>Your games</b>")]
    for table, seat in tables:
        state = _waits(table, seat, lang)
        lines.append(t(lang, "• «%(group)s»: %(state)s", group=title(table.chat_title), state=state))
    return "\n".join(lines)


def _waits(table: Table, seat: int, lang: str) -> str:
    if table.stage is Stage.LOBBY:
        return t(lang, "the lobby is open, waiting for the game to start.")
    if table.is_paused:
        return t(lang, "paused, because nobody played: /resume in the group goes on.")
    view = public_view(table.game)
    if seat not in view.waiting_for or table.played_by_computer(seat):
        return t(lang, "nothing from you now.")
    until = moment(table.deadline, table.settings, lang) if table.deadline is not None else ""
    need = {
        Phase.VOTING: t(lang, "your vote on the team for mission %(mission)s", mission=view.current_mission),
        Phase.PROPOSING: t(lang, "you to choose the next team"),
        Phase.MISSION: t(lang, "your card on mission %(mission)s", mission=view.current_mission),
    }.get(view.phase, t(lang, "your Plot card choice"))
    if not until:
        return t(lang, "waits for %(need)s.", need=need)
    return t(lang, "waits for %(need)s, until %(until)s.", need=need, until=until)
