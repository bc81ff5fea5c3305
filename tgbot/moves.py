"""What a command or a button press does to a table: pure functions, no Telegram, no Redis.

Each takes the stored table and who acted, checks the press against it (this game, this
phase, this round, this player), asks the engine to apply the action, and returns the
new table with the messages it causes. A refusal raises `Refused` with the short answer
for the person who pressed; the table is then not stored.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from html import escape

from engine import (
    CardsFilled,
    CardsTimedOut,
    CastVote,
    Event,
    IllegalAction,
    Phase,
    PlayCard,
    ProposeTeam,
    Reason,
    TeamProposed,
    VotesFilled,
    VotesRevealed,
    VotesTimedOut,
    apply,
    draw_team,
    new_game,
)
from engine import rules as game_rules
from tgbot import render
from tgbot.callbacks import CancelPress, CardPress, MissionPress, TeamPress, VotePress, encode
from tgbot.i18n import N_, t
from tgbot.outgoing import Button, Edit, Keyboard, Outgoing, Send
from tgbot.settings import GroupSettings
from tgbot.table import Player, Stage, Table


@dataclass(frozen=True)
class Reply:
    """What the person who acted is told at once, privately where possible.

    `text` is HTML like every message (names escaped); a callback answer, which Telegram
    shows as plain text, gets it with the markup taken out.
    """

    text: str
    alert: bool = False
    buttons: Keyboard = ()
    # The game whose queued messages go out once this answer has been given, so the person
    # who pressed is never kept waiting behind the group's messages.
    deliver_for: str | None = None


class Refused(Exception):
    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.text)
        self.reply = reply


def refuse(lang: str, message: str, alert: bool = False, **values: object) -> Refused:
    return Refused(Reply(t(lang, message, **values), alert=alert))


@dataclass(frozen=True)
class Change:
    table: Table
    outgoing: list[Outgoing] = field(default_factory=list)
    reply: Reply | None = None


# ---------------------------------------------------------------- lobby


def open_lobby(
    game_id: str,
    chat_id: int,
    chat_title: str,
    host: Player,
    settings: GroupSettings,
    bot_username: str,
    players: tuple[Player, ...] = (),
) -> Change:
    """A new lobby with the group's settings; a rematch brings its `players` already seated."""
    table = Table(
        id=game_id,
        chat_id=chat_id,
        chat_title=chat_title,
        creator_id=host.user_id,
        settings=settings,
        players=players,
    )
    text, buttons = render.lobby(table, bot_username)
    return Change(table, [Send(chat_id, text, buttons, key="lobby")])


def follow_settings(table: Table, settings: GroupSettings, bot_username: str) -> Change:
    """An open lobby takes the group's new settings; a game that has started keeps its own."""
    if table.stage is not Stage.LOBBY or table.settings == settings:
        return Change(table)
    table = replace(table, settings=settings)
    text, buttons = render.lobby(table, bot_username)
    return Change(table, [Edit(table.chat_id, "lobby", text, buttons)])


def require_lobby(table: Table, lang: str) -> None:
    if table.stage is not Stage.LOBBY:
        raise refuse(lang, "This game has already started.")


def join(table: Table, player: Player, lang: str, bot_username: str) -> Change:
    require_lobby(table, lang)
    if table.seat_of(player.user_id) is not None:
        raise refuse(lang, "You are already in this game.")
    if len(table.players) >= game_rules.MAX_PLAYERS:
        raise refuse(lang, "The table is full: %(max)d players.", max=game_rules.MAX_PLAYERS)
    taken = {p.name for p in table.players}
    name = player.name
    suffix = 2
    while name in taken:  # two Anns at one table must be told apart
        name = f"{player.name} ({suffix})"
        suffix += 1
    table = replace(table, players=table.players + (replace(player, name=name),))
    text, buttons = render.lobby(table, bot_username)
    reply = Reply(t(lang, "You joined the game in «%(group)s».", group=render.group_title(table)))
    return Change(table, [Edit(table.chat_id, "lobby", text, buttons)], reply)


def leave(table: Table, user_id: int, lang: str, bot_username: str) -> Change:
    if table.stage is not Stage.LOBBY:
        raise refuse(lang, "The game has started: use /cancel to end it.")
    if table.seat_of(user_id) is None:
        raise refuse(lang, "You are not in this game.")
    table = replace(table, players=tuple(p for p in table.players if p.user_id != user_id))
    text, buttons = render.lobby(table, bot_username)
    return Change(table, [Edit(table.chat_id, "lobby", text, buttons)], Reply(t(lang, "You left the game.")))


_HOST_ONLY = {
    "start": (
        N_("Only %(name)s, who opened the game, or a group admin can start it."),
        N_("Only the person who opened the game or a group admin can start it."),
    ),
    "cancel": (
        N_("Only %(name)s, who opened the game, or a group admin can cancel it."),
        N_("Only the person who opened the game or a group admin can cancel it."),
    ),
}


def _require_host(table: Table, user_id: int, is_admin: bool, lang: str, action: str) -> None:
    if user_id == table.creator_id or is_admin:
        return
    named, unnamed = _HOST_ONLY[action]
    creator = next((p.name for p in table.players if p.user_id == table.creator_id), None)
    raise refuse(lang, named, name=escape(creator)) if creator else refuse(lang, unnamed)


def start_game(table: Table, user_id: int, is_admin: bool, lang: str, rng: random.Random, bot_username: str) -> Change:
    if table.stage is not Stage.LOBBY:
        raise refuse(lang, "This game has already started.")
    _require_host(table, user_id, is_admin, lang, "start")
    count = len(table.players)
    if not game_rules.MIN_PLAYERS <= count <= game_rules.MAX_PLAYERS:
        raise refuse(
            lang,
            "A game needs %(min)d to %(max)d players; %(count)d have joined.",
            min=game_rules.MIN_PLAYERS,
            max=game_rules.MAX_PLAYERS,
            count=count,
        )
    game = new_game(count, rng, table.variants)
    table = replace(table, stage=Stage.PLAYING, game=game)
    out: list[Outgoing] = [Edit(table.chat_id, "lobby", render.lobby_started(table))]
    for seat in range(len(table.players)):
        out.append(
            _private(
                table,
                seat,
                render.role_message(table, seat),
                render.role_buttons(table, seat),
                f"role:{seat}",
                bot_username,
            )
        )
    text, buttons = render.round_message(table)
    out.append(Send(table.chat_id, text, buttons, key=render.proposal_key(table)))
    return Change(table, out)


def ask_cancel(table: Table, user_id: int, is_admin: bool, lang: str) -> Reply:
    if not table.is_active:
        raise refuse(lang, "There is no game to cancel.")
    _require_host(table, user_id, is_admin, lang, "cancel")
    return Reply(
        t(lang, "Cancel this game for everyone?"),
        buttons=(
            (
                Button(t(lang, "Yes, cancel it"), data=encode(CancelPress(table.id, True))),
                Button(t(lang, "No, keep playing"), data=encode(CancelPress(table.id, False))),
            ),
        ),
    )


def cancel(table: Table, user_id: int, is_admin: bool, press: CancelPress, lang: str) -> Change:
    if not table.is_active:
        raise refuse(lang, "This game is already over.")
    _require_host(table, user_id, is_admin, lang, "cancel")
    if not press.confirm:
        return Change(table, [], Reply(t(lang, "The game goes on.")))
    out: list[Outgoing] = []
    if table.game is None:
        out.append(Edit(table.chat_id, "lobby", render.lobby_closed(table)))
    else:
        text, _ = render.round_message(table)
        out.append(Edit(table.chat_id, render.proposal_key(table), text))
        out.append(Send(table.chat_id, t(table.language, "🛑 The game was cancelled.")))
    return Change(replace(table, stage=Stage.CANCELLED), out, Reply(t(lang, "Cancelled.")))


# ---------------------------------------------------------------- presses during a game


def require_pressed_in_place(table: Table, press, chat_id: int | None, user_id: int, lang: str) -> None:
    """A button counts only on the message that carried it: cards in the player's own private
    chat, everything else in the game's group. Data copied onto another message is refused."""
    expected = user_id if isinstance(press, CardPress) else table.chat_id
    if chat_id != expected:
        raise refuse(lang, "This button is not valid here.")


def repost_board(table: Table, bot_username: str) -> Change:
    """The group's current message again, as a new message that later edits go to."""
    if not table.is_active:
        return Change(table)  # the game ended while /status was on its way
    if table.game is None:
        text, buttons = render.lobby(table, bot_username)
        return Change(table, [Send(table.chat_id, text, buttons, key="lobby")])
    text, buttons = render.round_message(table)
    return Change(table, [Send(table.chat_id, text, buttons, key=render.proposal_key(table))])


def _seat(table: Table, user_id: int, lang: str) -> int:
    seat = table.seat_of(user_id)
    if seat is None or table.game is None:
        raise refuse(lang, "You are not playing in this game.")
    return seat


def _playing(table: Table, lang: str, closed_message: str) -> None:
    if table.stage is not Stage.PLAYING or table.game is None:
        raise refuse(lang, closed_message)


def vote(table: Table, user_id: int, press: VotePress, lang: str, bot_username: str) -> Change:
    _playing(table, lang, N_("This vote is closed."))
    seat = _seat(table, user_id, lang)
    game = table.game
    current = game.current_round
    if (
        game.phase is not Phase.VOTING
        or press.round_index != len(game.rounds) - 1
        or current is None
        or press.proposal_number != len(current.proposals)
    ):
        raise refuse(lang, "This vote is closed.")
    try:
        after, events = apply(game, CastVote(seat, press.approve))
    except IllegalAction as refusal:
        raise _refusal(refusal, lang) from None
    if press.approve:
        reply = t(
            lang,
            "You voted 👍 Approve (mission %(mission)d, «%(group)s»).",
            mission=current.mission,
            group=render.group_title(table),
        )
    else:
        reply = t(
            lang,
            "You voted 👎 Reject (mission %(mission)d, «%(group)s»).",
            mission=current.mission,
            group=render.group_title(table),
        )
    return _step(table, after, events, Reply(reply), bot_username)


def play_card(table: Table, user_id: int, press: CardPress, lang: str, bot_username: str) -> Change:
    _playing(table, lang, N_("This mission is over."))
    seat = _seat(table, user_id, lang)
    game = table.game
    if game.phase is not Phase.MISSION or press.round_index != len(game.rounds) - 1:
        raise refuse(lang, "This mission is over.")
    try:
        after, events = apply(game, PlayCard(seat, press.fail))
    except IllegalAction as refusal:
        raise _refusal(refusal, lang) from None
    mission = game.current_round.mission
    answer = t(lang, "You played ❌ Fail.") if press.fail else t(lang, "You played ✅ Success.")
    change = _step(table, after, events, Reply(answer), bot_username)
    played = Edit(
        user_id, render.card_key(press.round_index, seat), render.card_played(table, seat, mission, press.fail)
    )
    return replace(change, outgoing=[played, *change.outgoing])


def pick_team_member(table: Table, user_id: int, press: TeamPress, lang: str, bot_username: str) -> Change:
    game = _leader_turn(table, user_id, press.version, lang)
    if press.seat is None:
        return _propose(table, game, lang, bot_username)
    if not 0 <= press.seat < game.players:
        raise refuse(lang, "There is no such player.")
    ticked = set(table.draft_team) ^ {press.seat}
    return _redraw(replace(table, draft_team=tuple(sorted(ticked))))


def pick_mission(table: Table, user_id: int, press: MissionPress, lang: str) -> Change:
    """The leader picks (or changes) the mission of their proposal: any the engine says a
    proposal may name now (under Targeting every leader may pick, after a rejection too)."""
    game = _leader_turn(table, user_id, press.version, lang)
    if press.mission not in game.open_missions():
        raise refuse(lang, "That mission cannot be chosen now.")
    return _redraw(replace(table, draft_mission=press.mission))


def _leader_turn(table: Table, user_id: int, version: int, lang: str):
    _playing(table, lang, N_("This choice is closed."))
    seat = _seat(table, user_id, lang)
    game = table.game
    if game.phase is not Phase.PROPOSING or version != game.version:
        raise refuse(lang, "This choice is closed.")
    if seat != game.leader:
        raise refuse(lang, "Only the leader, %(name)s, chooses the team.", name=escape(table.name(game.leader)))
    return game


def _redraw(table: Table) -> Change:
    text, buttons = render.round_message(table)
    return Change(table, [Edit(table.chat_id, render.proposal_key(table), text, buttons)], Reply(""))


def _propose(table: Table, game, lang: str, bot_username: str) -> Change:
    # Under Targeting every proposal names its mission; the engine decides whether it may.
    mission = table.draft_mission if game.variants.targeting else None
    try:
        after, events = apply(game, ProposeTeam(game.leader, table.draft_team, mission))
    except IllegalAction as refusal:
        if refusal.reason is Reason.WRONG_TEAM_SIZE:
            number = mission or game.open_missions()[0]
            raise refuse(
                lang, "Choose exactly %(size)d players.", size=game_rules.team_size(game.players, number)
            ) from None
        raise _refusal(refusal, lang) from None
    table = replace(table, draft_team=(), draft_mission=None)
    return _step(table, after, events, Reply(t(lang, "Team proposed.")), bot_username)


_REFUSALS = {
    Reason.ALREADY_VOTED: N_("You have already voted."),
    Reason.NOT_ON_TEAM: N_("You are not on this mission's team."),
    Reason.ALREADY_PLAYED: N_("You have already played your card."),
    Reason.RESISTANCE_CANNOT_FAIL: N_("You are in the Resistance: you must play Success."),
    Reason.MISSION_REQUIRED: N_("Choose the mission first."),
    Reason.GAME_OVER: N_("This game is over."),
}


def _refusal(refusal: IllegalAction, lang: str) -> Refused:
    message = _REFUSALS.get(refusal.reason, N_("That is not possible now."))
    return refuse(lang, message, alert=refusal.reason is Reason.RESISTANCE_CANNOT_FAIL)


# ---------------------------------------------------------------- what a step shows


def _step(table: Table, after_game, events: tuple[Event, ...], reply: Reply | None, bot_username: str) -> Change:
    """Store the engine's new state and turn its events into messages."""
    before = table
    after = table.with_game(after_game)
    if after_game.is_over:
        after = replace(after, stage=Stage.OVER)
    chat = table.chat_id
    out: list[Outgoing] = []
    old_key = render.proposal_key(before)
    if after_game.is_over or render.proposal_key(after) != old_key:
        round_index, number = (int(part) for part in old_key.split(":")[1:])
        if round_index < len(after_game.rounds) and number <= len(after_game.rounds[round_index].proposals):
            out.append(Edit(chat, old_key, render.closed_proposal(after, round_index, number)))
        if after_game.is_over:
            out.append(Send(chat, render.game_over(after), render.play_again(after)))
        else:
            text, buttons = render.round_message(after)
            out.append(Send(chat, text, buttons, key=render.proposal_key(after)))
    else:
        text, buttons = render.round_message(after)
        out.append(Edit(chat, old_key, text, buttons))
    notices = [
        render.deadline_notice(after, event)
        for event in events
        if isinstance(event, VotesFilled | CardsFilled) or (isinstance(event, TeamProposed) and event.drawn)
    ]
    out[:0] = [Send(chat, text) for text in notices if text]
    for event in events:
        if isinstance(event, VotesRevealed) and event.approved:
            round_index = len(after_game.rounds) - 1
            for seat in after_game.current_round.team:
                text, buttons = render.card_prompt(after, seat)
                out.append(_private(after, seat, text, buttons, render.card_key(round_index, seat), bot_username))
    return Change(after, out, reply)


def _private(table: Table, seat: int, text: str, buttons: Keyboard, key: str, bot_username: str) -> Send:
    notice, notice_buttons = render.unreachable_notice(table, seat, bot_username)
    return Send(
        table.players[seat].user_id,
        text,
        buttons,
        key=key,
        notice_chat_id=table.chat_id,
        notice_text=notice,
        notice_buttons=notice_buttons,
    )


def pending_private(table: Table, user_id: int, bot_username: str) -> list[Outgoing]:
    """What a player should have in private now: their role, and their card prompt if one is due.

    Sent again when a player opens the private chat late or unblocks the bot.
    """
    seat = table.seat_of(user_id)
    if seat is None or table.game is None or table.stage is not Stage.PLAYING:
        return []
    out: list[Outgoing] = [Send(user_id, render.role_message(table, seat), render.role_buttons(table, seat))]
    game = table.game
    if game.phase is Phase.MISSION and seat in game.current_round.team and seat not in game.played_seats:
        text, buttons = render.card_prompt(table, seat)
        out.append(Send(user_id, text, buttons, key=render.card_key(len(game.rounds) - 1, seat)))
    return out


# ---------------------------------------------------------------- the clock


def step_of(table: Table) -> str:
    """Names the step a deadline belongs to; a new name means a new deadline."""
    if table.stage is Stage.LOBBY:
        return "lobby"
    if table.stage is not Stage.PLAYING or table.game is None:
        return ""
    game = table.game
    return f"{game.phase.value}:{len(game.rounds)}:{game.proposal_number}"


def step_seconds(table: Table) -> int:
    settings = table.settings
    if table.stage is Stage.LOBBY:
        return settings.lobby_seconds
    phase = table.game.phase
    if phase is Phase.PROPOSING:
        return settings.proposal_seconds
    if phase is Phase.VOTING:
        return settings.vote_seconds
    return settings.mission_seconds


def rescheduled(change: Change, now: float) -> Change:
    """Give the table's step a fresh deadline (and half-way reminder) if the step is new."""
    table = change.table
    step = step_of(table)
    if step == table.step:
        return change
    if not step:
        return replace(change, table=replace(table, step="", deadline=None, reminder_at=None))
    seconds = step_seconds(table)
    return replace(change, table=replace(table, step=step, deadline=now + seconds, reminder_at=now + seconds / 2))


def on_clock(table: Table, now: float, rng: random.Random, bot_username: str) -> Change:
    """What the clock does to the table at `now`: nothing, a reminder, or the deadline's rule."""
    if not table.is_active or table.deadline is None:
        return Change(table)
    if now >= table.deadline:
        return _deadline(table, rng, bot_username)
    if table.reminder_at is not None and now >= table.reminder_at:
        text = render.reminder(table)
        return Change(replace(table, reminder_at=None), [Send(table.chat_id, text)] if text else [])
    return Change(table)


def _deadline(table: Table, rng: random.Random, bot_username: str) -> Change:
    if table.stage is Stage.LOBBY:
        if len(table.players) >= game_rules.MIN_PLAYERS:
            return start_game(table, table.creator_id, True, table.language, rng, bot_username)
        closed = replace(table, stage=Stage.CANCELLED)
        return Change(closed, [Edit(table.chat_id, "lobby", render.lobby_timed_out(table))])
    game = table.game
    if game.phase is Phase.PROPOSING:
        # The engine draws the team (with the clock's random source); the mission the leader
        # had already picked under Targeting is kept.
        action = draw_team(game, rng, preferred_mission=table.draft_mission)
    elif game.phase is Phase.VOTING:
        action = VotesTimedOut(table.settings.missing_vote_approves)
    else:
        action = CardsTimedOut()
    after, events = apply(game, action)
    return _step(replace(table, draft_team=(), draft_mission=None), after, events, None, bot_username)
