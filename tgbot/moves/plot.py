"""Plot card presses: a press on a private Plot keyboard becomes an engine action (or a step of
the leader's deal); whoever the game asks next gets their keyboard (`plot_announcements`).

Every press carries the engine's ballot, so a keyboard of a decision that has passed is stale;
the engine itself refuses what its rules do not allow (wrong window, not the holder, a target
the card does not take), with a short answer to whoever pressed.
"""

from __future__ import annotations

import re
from dataclasses import replace

from engine import (
    PLOT_PHASES,
    DealCard,
    GameState,
    IllegalAction,
    OpenUp,
    Overhear,
    Pass,
    Phase,
    Reason,
    Spotlight,
    TakeCard,
    UseNoConfidence,
    UseStrongLeader,
    Watch,
    apply,
    legal_actions,
    public_view,
)
from engine.plot import Card
from tgbot.buttons import PlotPress
from tgbot.changes import Change, Refused, Reply, refuse
from tgbot.i18n import N_, t
from tgbot.moves import absence
from tgbot.moves.play import step
from tgbot.moves.plot_announcements import prompt_for
from tgbot.outgoing import Edit
from tgbot.render import plot as plot_render
from tgbot.render.common import seat_scene
from tgbot.table import Stage, Table

_SEAT_CHOICE = re.compile(r"(sp|wa|oh|ou|dt)(\d{1,2})(?:-(\d{1,2}))?")
_TAKE_CHOICE = re.compile(r"tk([a-z]{2})-(\d{1,2})")

_REFUSALS = {
    Reason.WRONG_WINDOW: N_("That card cannot be used now."),
    Reason.NOT_ASKED: N_("It is not your turn to use a Plot card."),
    Reason.NOT_THE_HOLDER: N_("You do not hold that card."),
    Reason.NOT_DRAWN: N_("That card is not among the cards drawn."),
    Reason.NOT_THE_RECEIVER: N_("Another player must resolve their card first."),
    Reason.WRONG_CARD: N_("That is not what your card does."),
    Reason.BAD_TARGET: N_("That player cannot be chosen for this card."),
    Reason.TOO_MANY_TARGETS: N_("You hold fewer watch cards than that."),
    Reason.NOT_THE_LEADER: N_("Only the leader deals the Plot cards."),
}


def press(table: Table, user_id: int, plot_press: PlotPress, lang: str, bot_username: str) -> Change:
    """A press on a Plot keyboard, already checked to come from the presser's own private chat."""
    if table.stage is not Stage.PLAYING or table.game is None:
        raise refuse(lang, "This game is over.")
    game = table.game
    if game.phase not in PLOT_PHASES or public_view(game).ballot != plot_press.ballot:
        raise refuse(lang, "This choice is closed.")
    seat = table.seat_of(user_id)
    if seat is None:
        raise refuse(lang, "You are not playing in this game.")
    choice = plot_press.choice
    if choice in ("db",) or choice.startswith("dc"):
        return _choose_card_to_deal(table, game, seat, choice, lang, bot_username)
    action = _action(table, game, seat, choice)
    if action is None:
        raise refuse(lang, "This button is not valid.")
    try:
        after, events = apply(game, action)
    except IllegalAction as refusal:
        raise Refused(Reply(t(lang, _REFUSALS.get(refusal.reason, N_("That is not possible now."))))) from None
    done = plot_render.prompt_closed(seat_scene(table, seat), action)
    table = absence.acted(replace(table, draft_card=None), seat)
    if game.phase is not Phase.DEAL:
        table = absence.chance_answered(table, seat)  # a chance answered, by using the card or passing
    change = step(table, after, events, Reply(t(lang, "Done.")), bot_username)
    closed = Edit(user_id, plot_render.plot_key(plot_press.ballot, seat), done, protected=True)
    return replace(change, outgoing=[closed, *change.outgoing])


def _action(table: Table, game: GameState, seat: int, choice: str):
    """The engine action a choice stands for (the engine checks it is allowed); None if it stands for none."""
    if choice == "pass":
        return Pass(seat)
    if choice == "sl":
        return UseStrongLeader(seat)
    if choice == "nc":
        return UseNoConfidence(seat)
    take = _TAKE_CHOICE.fullmatch(choice)
    if take is not None:
        card = plot_render.CARDS_BY_CODE.get(take.group(1))
        return None if card is None else TakeCard(seat, card, int(take.group(2)))
    seats = _SEAT_CHOICE.fullmatch(choice)
    if seats is None:
        return None
    kind, first, second = seats.group(1), int(seats.group(2)), seats.group(3)
    if kind == "wa":
        return Watch(seat, (first,) if second is None else (first, int(second)))
    if second is not None:
        return None
    if kind == "sp":
        return Spotlight(seat, first)
    if kind == "oh":
        return Overhear(seat, first)
    if kind == "ou":
        return OpenUp(seat, first)
    if table.draft_card is None:
        return None  # a receiver before any card was chosen: the keyboard never offers it
    return DealCard(seat, Card(table.draft_card), first)


def _choose_card_to_deal(table: Table, game: GameState, seat: int, choice: str, lang: str, bot_username: str) -> Change:
    """The leader picks which drawn card to give next (or goes back to the cards): only the
    leader's keyboard changes. Whether this seat may give that card now is the engine's to say:
    it is so when some `DealCard` of it is among the seat's legal actions."""
    dealable = {action.card for action in legal_actions(game, seat) if isinstance(action, DealCard)}
    if not dealable:
        raise refuse(lang, "Only the leader deals the Plot cards.")
    card = None if choice == "db" else plot_render.CARDS_BY_CODE.get(choice[2:])
    if choice != "db" and card not in dealable:
        raise refuse(lang, "That card is not among the cards drawn.")
    table = absence.acted(replace(table, draft_card=None if card is None else card.value), seat)
    prompt = prompt_for(table, seat, bot_username)
    assert prompt is not None
    return Change(table, [Edit(prompt.chat_id, prompt.key, prompt.text, prompt.buttons, protected=True)], Reply(""))
