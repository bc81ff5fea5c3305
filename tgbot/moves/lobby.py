"""The lobby: opening it, taking and leaving seats, starting the game, cancelling."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from engine import Phase, Variants, new_game
from engine import rules as game_rules
from tgbot.buttons import CancelPress, encode
from tgbot.changes import Change, Refused, Reply, refuse
from tgbot.i18n import N_, t, tn
from tgbot.moves import announcements, plot_announcements, prompts
from tgbot.outgoing import Button, Edit, Outgoing, Send
from tgbot.render import board
from tgbot.render.common import group_scene, player_language, reads_as, seat_scene, shown, title
from tgbot.settings import GroupSettings
from tgbot.table import MIN_PEOPLE, Player, Stage, Table

LOBBY_KEY = "board:0"  # the lobby's message, then the start's: the game's first board
NOT_ALLOWED_TO_CONFIGURE = N_("Only a group admin, or whoever opened the lobby, can change the settings.")
SETTINGS_BETWEEN_GAMES = N_("Settings can be changed between games.")


def settings_refusal(table: Table | None, user_id: int, is_admin: bool) -> str | None:
    """Why `user_id` may not change the group's settings now (a message to translate), or None: an admin
    may between games, and so may whoever opened the open lobby (that lobby's alone). While a game runs,
    an admin or whoever opened it is told that settings change between games; anyone else, that they may
    not change them at all."""
    opener = table is not None and table.creator_id == user_id
    if table is not None and table.stage is Stage.PLAYING and (is_admin or opener):
        return SETTINGS_BETWEEN_GAMES
    if is_admin or (opener and table.stage is Stage.LOBBY):
        return None
    return NOT_ALLOWED_TO_CONFIGURE


def lobby_message(table: Table, bot_username: str):
    return board.lobby(table.id, table.players, table.settings, table.creator_id, table.language, bot_username)


def open_lobby(
    game_id: str,
    chat_id: int,
    chat_title: str,
    host: Player,
    settings: GroupSettings,
    bot_username: str,
    players: tuple[Player, ...] = (),
    rematch: bool = False,
    topic: int | None = None,
    variants: Variants | None = None,
) -> Change:
    """A new lobby with the group's settings and `variants` (named with /newgame) on top, in its forum
    `topic` if any; `players` are seated already (the host whose private chat is open, or, with
    `rematch`, the players of the game Play again was pressed on)."""
    named = variants or Variants()
    table = Table(
        id=game_id,
        chat_id=chat_id,
        chat_title=chat_title,
        creator_id=host.user_id,
        settings=settings.with_variants(named),
        named_variants=named,
        players=players,
        rematch=rematch,
        topic=topic,
    )
    text, buttons = lobby_message(table, bot_username)
    return Change(table, [Send(chat_id, text, buttons, key=LOBBY_KEY)])


def follow_settings(
    table: Table, settings: GroupSettings, bot_username: str, changed: frozenset[str] | None = None
) -> Change:
    """An open lobby takes the group's new settings, keeping the variants named with /newgame; a game
    that has started keeps its own. `changed`: the names of the settings an admin just changed, the
    only ones the lobby takes (what whoever opened it chose for its game in the others stays)."""
    if changed is not None:
        settings = table.settings.taking(settings, changed)
    settings = settings.with_variants(table.named_variants)
    if table.stage is not Stage.LOBBY or table.settings == settings:
        return Change(table)
    table = replace(table, settings=settings)
    text, buttons = lobby_message(table, bot_username)
    return Change(table, [Edit(table.chat_id, LOBBY_KEY, text, buttons)])


def host_settings(
    table: Table, user_id: int, change: Callable[[GroupSettings], GroupSettings], lang: str, bot_username: str
) -> Change:
    """Whoever opened the open lobby (not an admin) changes its settings: that lobby's game's, not the
    group's, which outlive the lobby and are its admins' to set. The variants named with /newgame stay."""
    if table.stage is not Stage.LOBBY or table.creator_id != user_id:
        raise refuse(lang, NOT_ALLOWED_TO_CONFIGURE)
    return follow_settings(table, change(table.settings), bot_username)


def named_kept_on(table: Table, before: GroupSettings, after: GroupSettings) -> Variants:
    """The variants a settings change from `before` to `after` switched off that the open lobby keeps on:
    it was opened with them (/newgame named them), and its players came for them."""
    if table.stage is not Stage.LOBBY:
        return Variants()
    named, was, now = table.named_variants, before.variants, after.variants
    return Variants(
        targeting=named.targeting and was.targeting and not now.targeting,
        blind_spies=named.blind_spies and was.blind_spies and not now.blind_spies,
        plot_cards=named.plot_cards and was.plot_cards and not now.plot_cards,
    )


def require_lobby(table: Table, lang: str, joining: bool = False) -> None:
    """`joining`: someone wants a seat, and is told where the next one will come from."""
    if table.stage is Stage.PLAYING:
        if joining:
            raise refuse(lang, "This game has already started: join the next one when the group opens it.")
        raise refuse(lang, "This game has already started.")
    if table.stage is not Stage.LOBBY:
        raise refuse(lang, "This game is over.")


def require_joinable(table: Table, user_id: int, lang: str) -> None:
    """Whether `user_id` may look for a seat: the lobby is open. A player of the game already started
    who opens a Join link again (or sends /join) is told they play, not to join the next one."""
    if table.stage is Stage.PLAYING and table.seat_of(user_id) is not None:
        raise refuse(lang, "You are already in this game.")
    require_lobby(table, lang, joining=True)


def join(
    table: Table, player: Player, lang: str, bot_username: str, member: bool = True, by_link: bool = False
) -> Change:
    """`member`: whether the player is in the game's group, where the game is played (its boards,
    the votes); someone sent its Join link from outside cannot play there. `by_link`: from a Join link,
    which outlives its lobby: whoever opens one of a game that is over is told where a new one comes from."""
    if by_link and not table.is_active:
        raise refuse(lang, "This game is over: ask the group for a new link.")
    require_joinable(table, player.user_id, lang)
    if table.seat_of(player.user_id) is not None:
        raise refuse(lang, "You are already in this game.")
    if not member:
        group = title(table.chat_title)
        raise refuse(lang, "This game is played in the group «%(group)s»: join the group first.", group=group)
    if len(table.players) >= game_rules.MAX_PLAYERS:
        raise refuse(
            lang,
            "The table is full: %(max)d players. Join the next game when the group opens it.",
            max=game_rules.MAX_PLAYERS,
        )
    # Two Anns at one table must be told apart, also when one name holds characters that show as
    # nothing or writes the same letters another way: the group would read the same name twice.
    taken = {reads_as(p.name) for p in table.players}
    name = player.name
    suffix = 2
    while reads_as(name) in taken:
        name = f"{player.name} ({suffix})"
        suffix += 1
    table = replace(table, players=table.players + (replace(player, name=name),))
    text, buttons = lobby_message(table, bot_username)
    reply = Reply(
        t(lang, "You joined the game in «%(group)s».", group=title(table.chat_title))
        + "\n"
        + t(lang, "When the game starts, your role comes in our private chat.")
    )
    return Change(table, [Edit(table.chat_id, LOBBY_KEY, text, buttons)], reply)


def leave(table: Table, user_id: int, lang: str, bot_username: str) -> Change:
    if table.stage is not Stage.LOBBY:
        # A seat cannot be emptied once roles are dealt; the way out depends on who asks (/cancel's rule).
        raise refuse(
            lang,
            "The game has started, and a seat cannot be left empty now. If you stop playing, the deadlines "
            "play your turns; whoever opened the game or a group admin can end it with /cancel.",
        )
    if table.seat_of(user_id) is None:
        raise refuse(lang, "You are not in this game.")
    table = replace(table, players=tuple(p for p in table.players if p.user_id != user_id))
    text, buttons = lobby_message(table, bot_username)
    return Change(table, [Edit(table.chat_id, LOBBY_KEY, text, buttons)], Reply(t(lang, "You left the game.")))


def left_group(table: Table, user_id: int, bot_username: str) -> Change:
    """The user left the game's group, or was removed from it. A seat they held in its open lobby is
    given up: they could not see the boards they would vote on (and an admin who removed them would
    have them dealt a role). Once roles are dealt a seat cannot be left empty: the deadlines play it."""
    if table.stage is not Stage.LOBBY or table.seat_of(user_id) is None:
        return Change(table)
    table = replace(table, players=tuple(p for p in table.players if p.user_id != user_id))
    text, buttons = lobby_message(table, bot_username)
    return Change(table, [Edit(table.chat_id, LOBBY_KEY, text, buttons)])


BOT_REMOVED = N_("I was removed from the group «%(group)s», so the game that was being gathered there will not start.")


def bot_removed(table: Table, chat_id: int) -> Change:
    """The bot is no longer in the group `chat_id`: someone removed it, or the group was deleted. Its
    open lobby is closed: started (by itself when its time runs out), it would deal roles in private for
    a game whose boards and votes are in a group the bot cannot reach. The group cannot be told; each
    person seated in the lobby is told in private. A game already running goes on by its deadlines (its
    board is posted again if the bot is added back); a table that moved on to a supergroup stays."""
    if table.stage is not Stage.LOBBY or table.chat_id != chat_id:
        return Change(table)
    group = title(table.chat_title)
    told: list[Outgoing] = [
        Send(p.user_id, t(player_language(p, table.language), BOT_REMOVED, group=group)) for p in table.people
    ]
    return Change(replace(table, stage=Stage.CANCELLED), told)


_HOST_ONLY = {
    "start": (
        N_("Only %(name)s, who opened the game, or a group admin can start it."),
        N_("Only the person who opened the game or a group admin can start it."),
    ),
    "cancel": (
        N_("Only %(name)s, who opened the game, or a group admin can cancel it."),
        N_("Only the person who opened the game or a group admin can cancel it."),
    ),
    "add_computer": (
        N_("Only %(name)s, who opened the game, or a group admin can add computer players."),
        N_("Only the person who opened the game or a group admin can add computer players."),
    ),
    "remove_computer": (
        N_("Only %(name)s, who opened the game, or a group admin can remove computer players."),
        N_("Only the person who opened the game or a group admin can remove computer players."),
    ),
}


def require_host(table: Table, user_id: int, is_admin: bool, lang: str, action: str) -> None:
    if user_id == table.creator_id or is_admin:
        return
    named, unnamed = _HOST_ONLY[action]
    creator = next((p.name for p in table.players if p.user_id == table.creator_id), None)
    raise refuse(lang, named, name=shown(creator)) if creator else refuse(lang, unnamed)


def start_game(table: Table, user_id: int, is_admin: bool, lang: str, rng: random.Random, bot_username: str) -> Change:
    if table.stage is not Stage.LOBBY:
        raise refuse(lang, "This game has already started.")
    require_host(table, user_id, is_admin, lang, "start")
    count = len(table.players)
    if not game_rules.MIN_PLAYERS <= count <= game_rules.MAX_PLAYERS:
        message = tn(
            lang,
            "A game needs %(min)d to %(max)d players; %(n)d has joined.",
            "A game needs %(min)d to %(max)d players; %(n)d have joined.",
            count,
            min=game_rules.MIN_PLAYERS,
            max=game_rules.MAX_PLAYERS,
        )
        raise Refused(Reply(message))
    if len(table.people) < MIN_PEOPLE:
        raise refuse(lang, "A game needs at least %(n)d people besides computer players.", n=MIN_PEOPLE)
    table = replace(table, stage=Stage.PLAYING, game=new_game(count, rng, table.variants))
    # The start is a new message, which notifies the group (an edit notifies nobody); the lobby's
    # message closes in one line, its buttons gone, and its key goes to the start's message, which
    # the edits before the first proposal change (a Plot card deal).
    out: list[Outgoing] = [
        Edit(table.chat_id, LOBBY_KEY, board.lobby_started(table.language)),
        Send(table.chat_id, board.started(group_scene(table)), key=LOBBY_KEY),
    ]
    out += [announcements.role_message(table, seat, bot_username) for seat in range(count)]
    if table.game.phase is Phase.PROPOSING:
        out.append(announcements.leader_prompt(table, bot_username))
    # With Plot cards a game may open on a Plot card decision (a Strong Leader's chance, the deal).
    out += filter(None, (plot_announcements.prompt_for(table, seat, bot_username) for seat in range(count)))
    return Change(table, out)


CANCEL_QUESTION = N_("Cancel this game for everyone?")


def require_may_cancel(table: Table, user_id: int, is_admin: bool, lang: str) -> None:
    """Whoever opened the game, or an admin, may cancel it; once it has started, its opener only
    while they play in it. A game is its players': one who left the lobby (or never sat down) would
    end it for the others."""
    if table.game is not None and user_id == table.creator_id and not is_admin and table.seat_of(user_id) is None:
        raise refuse(lang, "You do not play in this game: only a group admin can cancel it.")
    require_host(table, user_id, is_admin, lang, "cancel")


def ask_cancel(table: Table, user_id: int, is_admin: bool, lang: str) -> Reply:
    if not table.is_active:
        raise refuse(lang, "There is no game to cancel.")
    require_may_cancel(table, user_id, is_admin, lang)
    return Reply(
        t(lang, CANCEL_QUESTION),
        buttons=(
            (
                Button(t(lang, "Yes, cancel it"), data=encode(CancelPress(table.id, True))),
                Button(t(lang, "No, keep playing"), data=encode(CancelPress(table.id, False))),
            ),
        ),
    )


def _answered(lang: str, answer: str) -> Reply:
    """The answer to /cancel's question, which it settles: the question's message reads it, buttonless."""
    text = t(lang, answer)
    return Reply(text, settles=f"{t(lang, CANCEL_QUESTION)}\n\n{text}")


def cancel(table: Table, user_id: int, is_admin: bool, press: CancelPress, lang: str, bot_username: str) -> Change:
    if not table.is_active:
        raise Refused(_answered(lang, N_("This game is already over.")))
    require_may_cancel(table, user_id, is_admin, lang)
    if not press.confirm:
        return Change(table, [], _answered(lang, N_("The game goes on.")))
    if table.game is None:
        out: list[Outgoing] = [Edit(table.chat_id, LOBBY_KEY, board.lobby_closed(table.language))]
    else:
        scene = group_scene(table)
        out = [Edit(table.chat_id, board.board_key(scene), board.cancelled(scene))]
        out += _prompts_closed(table, bot_username)
    return Change(replace(table, stage=Stage.CANCELLED), out, _answered(lang, N_("Cancelled.")))


def _prompts_closed(table: Table, bot_username: str) -> list[Outgoing]:
    """The private keyboards of the decisions the cancelled game was waiting for, left without
    buttons and saying why (one never delivered is not edited: the outbox knows no message for it)."""
    closed: list[Outgoing] = []
    for seat, player in enumerate(table.players):
        if player.computer:
            continue
        lang = seat_scene(table, seat).lang
        for prompt in prompts.decision_prompts(table, seat, bot_username):
            text = f"{prompt.text}\n\n" + t(lang, "🛑 The game was cancelled.")
            closed.append(Edit(prompt.chat_id, prompt.key, text, protected=True))
    return closed
