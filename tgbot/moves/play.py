"""Presses during a game: votes, cards, the leader's choice; "waiting for", /status, and what a
player who opens the private chat late still needs."""

from __future__ import annotations

from dataclasses import replace

from engine import CastVote, Event, GameState, IllegalAction, Phase, PlayCard, ProposeTeam, Reason, apply, public_view
from engine import rules as game_rules
from tgbot.buttons import CardPress, MissionPress, PlotPress, TeamPress, VotePress, WaitingPress
from tgbot.changes import Change, Refused, Reply, refuse
from tgbot.i18n import N_, t, tn
from tgbot.moves import absence, announcements, plot_announcements, prompts
from tgbot.moves.lobby import LOBBY_KEY, lobby_message
from tgbot.outgoing import Edit, Outgoing, Send
from tgbot.render import board, private
from tgbot.render.common import group_scene, seat_scene, shown, title
from tgbot.table import Stage, Table

# Where each kind of press belongs: votes and "waiting for" on the group's board, the rest
# in the presser's own private chat. Data copied onto another message is refused.
_PRIVATE_PRESSES = (CardPress, TeamPress, MissionPress, PlotPress)


def require_pressed_in_place(table: Table, press, chat_id: int | None, user_id: int, lang: str) -> None:
    if isinstance(press, _PRIVATE_PRESSES):
        in_place = chat_id == user_id
    else:
        in_place = table.in_group(chat_id)
    if not in_place:
        raise refuse(lang, "This button is not valid here.")


def _seat(table: Table, user_id: int, lang: str) -> int:
    seat = table.seat_of(user_id)
    if seat is None or table.game is None:
        raise refuse(lang, "You are not playing in this game.")
    return seat


def _open_decision(table: Table, ballot: int, phase: Phase, lang: str, closed: str) -> GameState:
    """The game, if the press was made for the decision open now; else the press is stale."""
    if table.stage is not Stage.PLAYING or table.game is None:
        raise refuse(lang, closed)
    game = table.game
    if game.phase is not phase or public_view(game).ballot != ballot:
        raise refuse(lang, closed)
    return game


def vote(table: Table, user_id: int, press: VotePress, lang: str, bot_username: str) -> Change:
    closed = N_("This vote is closed.")
    if table.game is not None and table.game.phase is Phase.MISSION:
        # A press on the board's old buttons (a client that has not redrawn it yet) is told why.
        closed = N_("This vote is closed: the team was approved and is playing its cards.")
    game = _open_decision(table, press.ballot, Phase.VOTING, lang, closed)
    seat = _seat(table, user_id, lang)
    if seat in game.current_round.proposals[-1].auto_votes:
        # An Opinion Maker whose time ran out: the rest vote on the same board after the clock voted for them.
        if game.pending_votes[seat]:
            raise refuse(lang, "Time ran out, so your vote was counted as 👍 Approve.")
        raise refuse(lang, "Time ran out, so your vote was counted as 👎 Reject.")
    after, events = _apply(game, CastVote(seat, press.approve), lang)
    message = (
        N_("You voted 👍 Approve (mission %(mission)d, «%(group)s»).")
        if press.approve
        else N_("You voted 👎 Reject (mission %(mission)d, «%(group)s»).")
    )
    reply = Reply(t(lang, message, mission=game.current_round.mission, group=title(table.chat_title)))
    return step(absence.acted(table, seat), after, events, reply, bot_username)


def play_card(table: Table, user_id: int, press: CardPress, lang: str, bot_username: str) -> Change:
    game = _open_decision(table, press.ballot, Phase.MISSION, lang, N_("This mission is over."))
    seat = _seat(table, user_id, lang)
    after, events = _apply(game, PlayCard(seat, press.fail), lang)
    answer = t(lang, "You played ❌ Fail.") if press.fail else t(lang, "You played ✅ Success.")
    change = step(absence.acted(table, seat), after, events, Reply(answer), bot_username)
    played = private.card_played(seat_scene(table, seat), game.current_round.mission, press.fail)
    return replace(
        change, outgoing=[Edit(user_id, private.card_key(press.ballot, seat), played, protected=True), *change.outgoing]
    )


def pick_team_member(table: Table, user_id: int, press: TeamPress, lang: str, bot_username: str) -> Change:
    game = _leader_turn(table, user_id, press.ballot, lang)
    if press.seat is None:
        return _propose(table, game, lang, bot_username)
    if not 0 <= press.seat < game.players:
        raise refuse(lang, "There is no such player.")
    if game.variants.targeting and table.draft_mission is None:
        # The keyboard offers the missions alone until one is picked: a tick now was never on it.
        raise refuse(lang, _REFUSALS[Reason.MISSION_REQUIRED])
    ticked = set(table.draft_team) ^ {press.seat}
    table = absence.acted(table, game.leader)
    return _redraw_leader_prompt(replace(table, draft_team=tuple(sorted(ticked))), bot_username)


def pick_mission(table: Table, user_id: int, press: MissionPress, lang: str, bot_username: str) -> Change:
    """The leader picks (or changes) the mission of their proposal: any the engine says a
    proposal may name now."""
    game = _leader_turn(table, user_id, press.ballot, lang)
    if not game.variants.targeting:
        raise refuse(lang, "This button is not valid.")  # only Targeting's leader picks a mission
    if press.mission not in game.open_missions():
        raise refuse(lang, "That mission cannot be chosen now.")
    table = absence.acted(table, game.leader)
    return _redraw_leader_prompt(replace(table, draft_mission=press.mission), bot_username)


def _leader_turn(table: Table, user_id: int, ballot: int, lang: str) -> GameState:
    game = _open_decision(table, ballot, Phase.PROPOSING, lang, N_("This choice is closed."))
    seat = _seat(table, user_id, lang)
    if seat != game.leader:
        raise refuse(lang, "Only the leader, %(name)s, chooses the team.", name=shown(table.name(game.leader)))
    return game


def _redraw_leader_prompt(table: Table, bot_username: str) -> Change:
    prompt = announcements.leader_prompt(table, bot_username)
    return Change(table, [Edit(prompt.chat_id, prompt.key, prompt.text, prompt.buttons, protected=True)], Reply(""))


def _propose(table: Table, game: GameState, lang: str, bot_username: str) -> Change:
    mission = table.draft_mission if game.variants.targeting else None
    try:
        after, events = apply(game, ProposeTeam(game.leader, table.draft_team, mission))
    except IllegalAction as refusal:
        if refusal.reason is Reason.WRONG_TEAM_SIZE:
            size = game_rules.team_size(game.players, mission or game.open_missions()[0])
            message = tn(lang, "Choose exactly %(n)d player.", "Choose exactly %(n)d players.", size)
            raise Refused(Reply(message)) from None
        raise _refusal(refusal, lang) from None
    table = absence.acted(replace(table, draft_team=(), draft_mission=None), game.leader)
    return step(table, after, events, Reply(t(lang, "Team proposed.")), bot_username)


_REFUSALS = {
    Reason.ALREADY_VOTED: N_("You have already voted."),
    Reason.NOT_ON_TEAM: N_("You are not on this mission's team."),
    Reason.ALREADY_PLAYED: N_("You have already played your card."),
    Reason.RESISTANCE_CANNOT_FAIL: N_("You are in the Resistance: you must play Success."),
    Reason.MISSION_REQUIRED: N_("Choose the mission first."),
    Reason.GAME_OVER: N_("This game is over."),
    Reason.OPINION_MAKERS_FIRST: N_("Wait: the Opinion Makers vote first; you vote once they have."),
}


def _refusal(refusal: IllegalAction, lang: str) -> Refused:
    message = _REFUSALS.get(refusal.reason, N_("That is not possible now."))
    return refuse(lang, message, alert=refusal.reason is Reason.RESISTANCE_CANNOT_FAIL)


def _apply(game: GameState, action, lang: str) -> tuple[GameState, tuple[Event, ...]]:
    try:
        return apply(game, action)
    except IllegalAction as refusal:
        raise _refusal(refusal, lang) from None


def step(
    table: Table, after_game: GameState, events: tuple[Event, ...], reply: Reply | None, bot_username: str
) -> Change:
    """Store the engine's new state and turn its events into messages."""
    after = table.with_game(after_game)
    if after_game.is_over:
        after = replace(after, stage=Stage.OVER)
    out = announcements.after_step(table, after, events, bot_username)
    return Change(after, out + plot_announcements.after_step(table, after, bot_username), reply)


# ---------------------------------------------------------------- looking at the game


def waiting(table: Table, press: WaitingPress, lang: str) -> Reply:
    """Who the game waits for, told to whoever asked (no message in the group)."""
    if table.stage is not Stage.PLAYING or table.game is None:
        return Reply(t(lang, "This game is over."))
    return Reply(board.waiting_answer(group_scene(table), lang))


def repost_board(table: Table, bot_username: str) -> Change:
    """The group's current message again, as a new message that later edits go to."""
    if not table.is_active:
        return Change(table)  # the game ended while /status was on its way
    if table.game is None:
        text, buttons = lobby_message(table, bot_username)
        return Change(table, [Edit(table.chat_id, LOBBY_KEY, text), Send(table.chat_id, text, buttons, key=LOBBY_KEY)])
    return Change(table, announcements.reposted_board(group_scene(table), table.chat_id))


def result_again(table: Table) -> Change:
    """A finished game's end posted again as a new message (see `announcements.result_again`); nothing
    for a game that did not end by its rules (cancelled, or never started)."""
    if table.stage is not Stage.OVER or table.game is None:
        return Change(table)
    return Change(table, announcements.result_again(group_scene(table), table.chat_id))


def pending_private(table: Table, user_id: int, bot_username: str) -> list[Outgoing]:
    """What a player's private chat should hold now: their role, their card prompt if a card is
    due, their leader's keyboard if it is their turn, what Plot cards showed them. The caller sends
    only what never arrived."""
    seat = table.seat_of(user_id)
    if seat is None or table.game is None or table.stage is not Stage.PLAYING:
        return []
    out: list[Outgoing] = [announcements.role_message(table, seat, bot_username)]
    out += prompts.decision_prompts(table, seat, bot_username)
    # What cards showed this player: sent when it happened, or now if that did not reach them.
    return out + plot_announcements.seen_messages(table, seat, bot_username)
