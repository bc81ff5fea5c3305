"""Computer players at a table: seating and unseating them in the lobby, and their turns in a game
(their own seats, and those of people they took over from: `absence`).

A computer player decides through `agents`, from its own seat's view only, and its action goes
through the engine and `play.step` like any press, so the group sees the same messages. It acts
after a delay drawn the same way whatever its role and its choice: how long it takes says nothing.
"""

from __future__ import annotations

import random
from dataclasses import replace

from agents import act, difficulty_named
from engine import PLOT_PHASES, Phase, apply, public_view
from engine import rules as game_rules
from tgbot.changes import Change, Reply, refuse
from tgbot.i18n import t
from tgbot.moves.lobby import LOBBY_KEY, lobby_message, require_host, require_lobby
from tgbot.moves.play import step
from tgbot.outgoing import Edit, Outgoing, Send
from tgbot.render import plot as plot_render
from tgbot.render import private
from tgbot.render.common import seat_scene, shown
from tgbot.table import Player, Stage, Table

COMPUTER_NAMES = ("Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Hedy", "Claude", "Margaret", "Linus")
# Seconds before a computer player acts: the first of a decision, and each next one of the same decision.
FIRST_DELAY = (2.0, 6.0)
NEXT_DELAY = (1.0, 4.0)


# ---------------------------------------------------------------- the lobby


def add(table: Table, user_id: int, is_admin: bool, lang: str, bot_username: str) -> Change:
    require_lobby(table, lang)
    require_host(table, user_id, is_admin, lang, "add_computer")
    if len(table.players) >= game_rules.MAX_PLAYERS:
        raise refuse(lang, "The table is full: %(max)d players.", max=game_rules.MAX_PLAYERS)
    taken_ids = {p.user_id for p in table.players}
    taken_names = {p.name for p in table.players}
    number = next(n for n in range(1, game_rules.MAX_PLAYERS + 1) if -n not in taken_ids)
    name = next(f"🤖 {n}" for n in COMPUTER_NAMES if f"🤖 {n}" not in taken_names)
    table = replace(table, players=table.players + (Player(-number, name, None, computer=True),))
    text, buttons = lobby_message(table, bot_username)
    reply = Reply(t(lang, "%(name)s takes a seat.", name=shown(name)))
    return Change(table, [Edit(table.chat_id, LOBBY_KEY, text, buttons)], reply)


def remove(table: Table, user_id: int, is_admin: bool, lang: str, bot_username: str) -> Change:
    """The computer player seated last leaves."""
    require_lobby(table, lang)
    require_host(table, user_id, is_admin, lang, "remove_computer")
    leaving = next((p for p in reversed(table.players) if p.computer), None)
    if leaving is None:
        raise refuse(lang, "No computer player sits at this table.")
    table = replace(table, players=tuple(p for p in table.players if p is not leaving))
    text, buttons = lobby_message(table, bot_username)
    reply = Reply(t(lang, "%(name)s left the table.", name=shown(leaving.name)))
    return Change(table, [Edit(table.chat_id, LOBBY_KEY, text, buttons)], reply)


# ---------------------------------------------------------------- turns


def _keyboards_closed(game, table: Table, seat: int, action) -> list[Outgoing]:
    """The keyboard of the decision a computer player just made for a person on autopilot keeps no
    live buttons and says what it chose for them (a leader's is closed by the step itself, as
    every leader's is)."""
    ballot = public_view(game).ballot
    scene = seat_scene(table, seat)
    user = table.players[seat].user_id
    if game.phase is Phase.MISSION:
        text = private.card_played_for_you(scene, game.current_round.mission, action.fail)
        return [Edit(user, private.card_key(ballot, seat), text, protected=True)]
    if game.phase in PLOT_PHASES:
        text = plot_render.prompt_closed_for_you(scene, action)
        return [Edit(user, plot_render.plot_key(ballot, seat), text, protected=True)]
    return []


def waiting_computers(table: Table) -> tuple[int, ...]:
    """The seats played by a computer that the game waits for now."""
    if table.stage is not Stage.PLAYING or table.game is None:
        return ()
    return tuple(seat for seat in public_view(table.game).waiting_for if table.played_by_computer(seat))


def scheduled(change: Change, new_step: bool, now: float, rng: random.Random) -> Change:
    """When the next computer-played seat acts: a fresh delay for a new decision; within one
    decision the time `take_turn` set stands; never while no such seat is waited for."""
    table = change.table
    if not waiting_computers(table):
        at = None
    elif new_step or table.computer_at is None:
        at = now + rng.uniform(*FIRST_DELAY)
    else:
        at = table.computer_at
    return change if at == table.computer_at else replace(change, table=replace(table, computer_at=at))


def take_turn(table: Table, now: float, rng: random.Random, bot_username: str) -> Change:
    """One computer-played seat the game waits for acts (which one is drawn at random)."""
    seats = waiting_computers(table)
    if not seats:
        return Change(replace(table, computer_at=None))
    seat = rng.choice(seats)
    game = table.game
    action = act(game, seat, rng, difficulty_named(table.settings.computer_level))
    after, events = apply(game, action)
    # A person on autopilot may have ticked a team or picked a card before the computer player took over.
    table = replace(table, draft_team=(), draft_mission=None, draft_card=None)
    change = step(table, after, events, None, bot_username)
    if seat in table.autopilot:
        change = replace(change, outgoing=[*_keyboards_closed(game, table, seat, action), *change.outgoing])
    same_decision = public_view(after).ballot == public_view(game).ballot
    following = now + rng.uniform(*NEXT_DELAY) if same_decision and waiting_computers(change.table) else None
    return replace(change, table=replace(change.table, computer_at=following))


# ---------------------------------------------------------------- nobody reads a computer's chat


def without_computer_mail(change: Change) -> Change:
    """Drop the private messages addressed to computer players: no Telegram user has their ids."""
    computers = {p.user_id for p in change.table.players if p.computer} - {change.table.chat_id}
    if not computers:
        return change
    kept = [item for item in change.outgoing if not (isinstance(item, Send | Edit) and item.chat_id in computers)]
    return change if len(kept) == len(change.outgoing) else replace(change, outgoing=kept)
