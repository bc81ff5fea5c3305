"""Engine events in, messages out: what the group and each player are told after a step.

The group's board changes only on events everyone must see at once (a team put forward, a
rejected team's votes, an approved team's vote closed, a mission's result with its team's votes,
the end); a vote or a card cast in between is answered to its player alone. Private messages
follow whoever the game waits for next.
"""

from __future__ import annotations

from typing import get_args

from engine import CardsFilled, Event, GameOver, MissionCompleted, Phase, TeamProposed, VotesRevealed
from engine.events import CardWatched, ChancePassed, PlotEvent
from engine.plot import Card
from tgbot.memory_summary import summary_of
from tgbot.outgoing import Edit, Keyboard, Outgoing, Photo, Send
from tgbot.render import board, private
from tgbot.render.common import GroupScene, group_scene, seat_scene
from tgbot.render.picture import game_picture
from tgbot.table import Table

# The events the group's board shows as they happen. With Plot cards, every public use of a card is
# seen at once too (a Plot card is public from the moment it is dealt, and everyone always knows who
# holds what), the cards the leader draws face up and who was put in the spotlight (before the team
# plays, so that they play knowing it) among them; but not a chance let pass (nothing happened) nor a
# watch, which comes after the cards and is told with the result it precedes.
_SHOWN_AT_ONCE = (
    VotesRevealed,
    MissionCompleted,
    GameOver,
    *(kind for kind in get_args(PlotEvent) if kind not in (ChancePassed, CardWatched)),
)


def after_step(before: Table, after: Table, events: tuple[Event, ...], bot_username: str) -> list[Outgoing]:
    """The messages that the engine's `events`, taking `before` to `after`, cause."""
    scene = group_scene(after)
    chat = after.chat_id
    out: list[Outgoing] = []
    proposed = next((e for e in events if isinstance(e, TeamProposed)), None)
    if proposed is not None:
        leader = after.players[proposed.leader]
        # A person whose turns a computer player takes did not propose it (a press of theirs gives the seat back first).
        by_computer = proposed.leader in before.autopilot and not proposed.drawn
        leader_scene = seat_scene(after, proposed.leader)
        done = private.leader_done(leader_scene, proposed.team, proposed.mission, proposed.drawn, by_computer)
        out.append(Edit(leader.user_id, private.leader_key(group_scene(before).view.ballot), done, protected=True))
        text, buttons = board.board(scene)
        out.append(Send(chat, text, buttons, key=board.board_key(scene)))
    if any(isinstance(e, _SHOWN_AT_ONCE) for e in events):
        # The vote closes on the board at once: an approved team's votes wait for its result there,
        # but its buttons go, and the group reads that the mission is under way.
        text, buttons = board.approved(scene) if _votes_wait_for_result(events, scene) else board.board(scene)
        # The end's edit leaves a receipt once it reaches the group: a bot removed from the group (or kept
        # from posting) when the game ended reads it when it is back (`GameService.result_again`).
        over = any(isinstance(e, GameOver) for e in events)
        receipt = board.RESULT_KEY if over else ""
        out.append(Edit(chat, board.board_key(scene), text, buttons, receipt=receipt))
        if over:
            out.append(end_picture(after))
    filled = next((e for e in events if isinstance(e, CardsFilled)), None)
    if filled is not None:
        # A prompt whose card the deadline played keeps no live buttons.
        ballot = group_scene(before).view.ballot
        mission = before.game.current_round.mission
        for seat in filled.seats:
            text = private.card_timed_out(seat_scene(after, seat), mission)
            out.append(Edit(after.players[seat].user_id, private.card_key(ballot, seat), text, protected=True))
    if scene.view.phase is Phase.MISSION and group_scene(before).view.phase is not Phase.MISSION:
        out += [card_prompt(after, seat, bot_username) for seat in scene.view.team or ()]
    if scene.view.phase is Phase.PROPOSING and group_scene(before).view.ballot != scene.view.ballot:
        out.append(leader_prompt(after, bot_username))
    return out


def end_picture(table: Table) -> Photo:
    """The finished game in one picture (`tgbot.render.picture`), in the group's language, posted right
    after its result: the whole game's votes, teams and missions, with everyone's role."""
    png = game_picture(summary_of(table, 0.0), group_scene(table).lang)
    return Photo.of_png(table.chat_id, f"resistance-{table.id}.png", png)


def _votes_wait_for_result(events: tuple[Event, ...], scene: GroupScene) -> bool:
    """An approved team's votes are shown with its mission's result: while the team plays its cards
    nobody else has anything to decide, and the team's card prompts carry the votes. If someone else
    may decide before the result (a Plot window: No Confidence and Spotlight come before the cards, a
    watch after them), the votes are shown at once."""
    view = scene.view
    if view.phase is not Phase.MISSION:
        return False
    if view.plot is not None and any(Card.KEEPING_A_CLOSE_EYE_ON_YOU in hand for hand in view.plot.hands):
        return False
    return all(isinstance(e, VotesRevealed) for e in events if isinstance(e, _SHOWN_AT_ONCE))


def leader_prompt(table: Table, bot_username: str) -> Send:
    scene = seat_scene(table, table.game.leader)
    text, buttons = private.leader_prompt(scene, table.draft_team, table.draft_mission)
    return to_player(table, scene.seat.seat, text, buttons, private.leader_key(scene.view.ballot), bot_username)


def card_prompt(table: Table, seat: int, bot_username: str) -> Send:
    scene = seat_scene(table, seat)
    text, buttons = private.card_prompt(scene)
    return to_player(table, seat, text, buttons, private.card_key(scene.view.ballot, seat), bot_username)


def role_message(table: Table, seat: int, bot_username: str) -> Send:
    scene = seat_scene(table, seat)
    text, buttons, key = private.role_message(scene), private.role_buttons(scene), private.role_key(seat)
    return to_player(table, seat, text, buttons, key, bot_username, waits=False)


def to_player(
    table: Table, seat: int, text: str, buttons: Keyboard, key: str, bot_username: str, waits: bool = True
) -> Send:
    """A private message that the group hears about if the player cannot be reached. Every
    private message of a game holds something only its player may see, so none may be forwarded.
    `waits`: whether it asks for a decision the game waits for (the group is told which). A
    person whose turns a computer player takes is not waited for: the group hears nothing then."""
    player = table.players[seat]
    if waits and seat in table.autopilot:
        return Send(player.user_id, text, buttons, key=key, protected=True)
    notice, notice_buttons = board.unreachable_notice(player, table.language, bot_username, waits)
    return Send(
        player.user_id,
        text,
        buttons,
        key=key,
        protected=True,
        notice_chat_id=table.chat_id,
        notice_text=notice,
        notice_buttons=notice_buttons,
    )


def result_again(scene: GroupScene, chat_id: int) -> list[Outgoing]:
    """The finished game's last board (its end: who won, the spies named, Play again) as a new message,
    for a group that never saw it. Sent once whoever asks for it: the outbox drops it once a message
    of its key reached the group, the end's own edit or an earlier copy."""
    text, buttons = board.board(scene)
    return [Send(chat_id, text, buttons, key=board.RESULT_KEY, once=True)]


def reposted_board(scene: GroupScene, chat_id: int) -> list[Outgoing]:
    """The board again as a new message; the old copy keeps its text but loses its buttons, so
    only one message ever carries a decision's buttons."""
    text, buttons = board.board(scene)
    key = board.board_key(scene)
    return [Edit(chat_id, key, text), Send(chat_id, text, buttons, key=key)]
