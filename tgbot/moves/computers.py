"""Computer players at a table: seating and unseating them in the lobby, and their turns in a game
(their own seats, and those of people they took over from: `absence`).

A computer player decides through `agents`, from its own seat's view only, and its action goes
through the engine and `play.step` like any press, so the group sees the same messages. It acts
after a delay drawn the same way whatever its role and its choice: how long it takes says nothing.
Every computer-played seat one decision waits for (a vote, a mission's cards) acts in the same turn,
so that theirs are all in within a second or so of the game starting to wait for them, however many
they are.
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
# Seconds from when the game starts waiting for computer-played seats to their turn, in which all of
# them act: a vote, a mission's cards, a Plot card decision; a computer leader's team takes a little
# longer, as a person's would. The clock wakes for it within `tgbot.app.WAKE_SECONDS`, so every
# computer vote is in within 2 s of the game waiting only for them.
DECISION_DELAY = (0.3, 1.2)
LEADER_DELAY = (1.0, 3.0)
# A turn's seats act one after another, each a new action through the engine: at most this many (a
# seat asked again within one decision waits for the next turn, `DECISION_DELAY` later).
MOST_ACTIONS_PER_TURN = 2 * game_rules.MAX_PLAYERS


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


def delay(table: Table) -> tuple[float, float]:
    """The range a computer player's delay is drawn from, by what the game waits for (which is public)."""
    return LEADER_DELAY if table.game.phase is Phase.PROPOSING else DECISION_DELAY


def scheduled(change: Change, new_step: bool, now: float, rng: random.Random) -> Change:
    """When the computer-played seats the game waits for act: a fresh delay for a new decision; within
    one decision the time already set stands (the seats it waits for act together, `take_turn`); never
    while no such seat is waited for."""
    table = change.table
    if not waiting_computers(table):
        at = None
    elif new_step or table.computer_at is None:
        at = now + rng.uniform(*delay(table))
    else:
        at = table.computer_at
    return change if at == table.computer_at else replace(change, table=replace(table, computer_at=at))


def take_turn(table: Table, now: float, rng: random.Random, bot_username: str) -> Change:
    """Every computer-played seat the game waits for acts, one after another in an order drawn at
    random, each from its own seat's view of the game as the one before left it, until the decision
    is made: all the computer votes of a vote, or cards of a mission, in one turn; a leader's team
    opens a new decision, whose computer players get a turn of their own (`scheduled`)."""
    # The next turn's time is drawn before anyone acts: what they chose does not move it.
    timing = random.Random(rng.getrandbits(64))
    if not waiting_computers(table):
        return Change(replace(table, computer_at=None))
    ballot = public_view(table.game).ballot
    # A person on autopilot may have ticked a team or picked a card before the computer player took over.
    change = Change(replace(table, draft_team=(), draft_mission=None, draft_card=None))
    acted: set[int] = set()
    for _ in range(MOST_ACTIONS_PER_TURN):
        current = change.table
        if current.game.is_over or public_view(current.game).ballot != ballot:
            break
        seats = [seat for seat in waiting_computers(current) if seat not in acted]
        if not seats:
            break
        seat = rng.choice(seats)
        acted.add(seat)
        acting = _act(current, seat, rng, bot_username)
        change = replace(acting, outgoing=[*change.outgoing, *acting.outgoing])
    same_decision = not change.table.game.is_over and public_view(change.table.game).ballot == ballot
    following = (
        now + timing.uniform(*delay(change.table)) if same_decision and waiting_computers(change.table) else None
    )
    return replace(change, table=replace(change.table, computer_at=following))


def _act(table: Table, seat: int, rng: random.Random, bot_username: str) -> Change:
    """One computer-played seat's action, through the engine and the same step as a press."""
    game = table.game
    # The seats computer players play share a spy's Fail rotation; a person's card is their own.
    rotation = frozenset(s for s in range(len(table.players)) if table.played_by_computer(s))
    action = act(game, seat, rng, difficulty_named(table.settings.computer_level), rotation=rotation)
    after, events = apply(game, action)
    change = step(table, after, events, None, bot_username)
    if seat in table.autopilot:
        change = replace(change, outgoing=[*_keyboards_closed(game, table, seat, action), *change.outgoing])
    return change


# ---------------------------------------------------------------- nobody reads a computer's chat


def without_computer_mail(change: Change) -> Change:
    """Drop the private messages addressed to computer players: no Telegram user has their ids."""
    computers = {p.user_id for p in change.table.players if p.computer} - {change.table.chat_id}
    if not computers:
        return change
    kept = [item for item in change.outgoing if not (isinstance(item, Send | Edit) and item.chat_id in computers)]
    return change if len(kept) == len(change.outgoing) else replace(change, outgoing=kept)
