"""Telegram handlers: parse the update, call the service, answer. No rule is decided here."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from html import escape, unescape

from telegram import Chat, ReplyParameters, Update, User
from telegram.constants import ChatAction, ChatMemberStatus, ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, TelegramError

from engine import Variants
from tgbot.buttons import (
    CancelPress,
    CardPress,
    ComputerPress,
    HintsPress,
    LanguagePress,
    MissionPress,
    PlotPress,
    RematchPress,
    SettingsPress,
    TeamPress,
    VotePress,
    WaitingPress,
    kind_of,
)
from tgbot.changes import Reply
from tgbot.context import BotContext
from tgbot.i18n import DEFAULT_LANGUAGE, N_, supported, t, tn
from tgbot.outbox import markup
from tgbot.outgoing import Button
from tgbot.ratelimit import MUST_ARRIVE, Answer
from tgbot.render import common, menus
from tgbot.render.common import JOIN_PREFIX
from tgbot.service import NOT_ALLOWED_TO_CONFIGURE, GameService
from tgbot.settings import GroupSettings
from tgbot.table import Player

log = logging.getLogger(__name__)

HTML_TAG = re.compile(r"<[^>]+>")


async def language_of(update: Update, context: BotContext, game_id: str | None = None) -> str:
    """The language to answer in: the user's own if the bot speaks it, else their game's or group's."""
    user = update.effective_user
    own = supported(user.language_code if user else None)
    if own is not None:
        return own
    group = await group_id(update, context) if in_group(update.effective_chat) else None
    return await context.service.fallback_language(group_id=group, game_id=game_id, user_id=user.id if user else None)


# What /newgame may name after it, separated by spaces or commas.
VARIANT_WORDS = {"targeting", "blind", "blind_spies", "plot", "plot_cards"}
VARIANT_SEPARATORS = re.compile(r"[\s,;]+")

# Characters that show as nothing (Telegram accepts a name made of them alone).
_BLANK = "\\s\u115f\u1160\u200b-\u200f\u2060\u2800\u3164\ufeff\uffa0"
BLANK_EDGES = re.compile(f"^[{_BLANK}]+|[{_BLANK}]+$")
BLANK_CHARACTER = re.compile(f"[{_BLANK}]")
# Format characters (direction marks, soft hyphens, tags), control characters, and marks that no
# letter carries show as nothing too. Only trimmed from a name's edges are those above: a flag's tags
# and an emoji's variation selector end it, and are part of what a reader sees.
_UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Mn", "Me", "Zs", "Zl", "Zp"})
# A line break in a name would start a line of its own in every message naming the player, one that
# could pass for the bot's; control characters have no place in a name either.
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Players are listed with commas (teams, votes) and semicolons (Plot cards held): a name holding one
# would read as two players ("Ann, 👎 Bob" in the 👍 line of a vote). Commas of other scripts too.
_COMMAS = ",;\u060c\u061b\u201a\u2e34\u2e41\u3001\ufe10\ufe11\ufe14\ufe50\ufe51\ufe54\uff0c\uff1b"
LIST_SEPARATORS = re.compile(f" *[{_COMMAS}]+ *")
# A name is shown in every group message that lists the players, and a table of ten listing
# Telegram's longest names (64 + 64 characters) overruns Telegram's 4096 characters a message.
MAX_NAME = 40


def player_of(user: User) -> Player:
    # Only computer players' names hold 🤖: a person may not pass for one (and claim to play blind),
    # not even with a second robot or one behind a character that shows as nothing.
    name = LIST_SEPARATORS.sub(" ", CONTROL_CHARACTERS.sub(" ", (user.full_name or "").replace("🤖", "")))
    name = BLANK_EDGES.sub("", name)
    if shows_as_nothing(name):  # it would leave a blank in every list of players
        name = f"@{user.username}" if user.username else str(user.id)
    return Player(user_id=user.id, name=common.cut(name, MAX_NAME), language=user.language_code)


def shows_as_nothing(name: str) -> bool:
    return all(unicodedata.category(c) in _UNSEEN_CATEGORIES or BLANK_CHARACTER.match(c) for c in name)


def in_group(chat: Chat | None) -> bool:
    return chat is not None and chat.type in (Chat.GROUP, Chat.SUPERGROUP)


async def group_id(update: Update, context: BotContext) -> int:
    """The id of the group a command came from, as it is now. Only a basic group can become a
    supergroup, with a new id; a command sent in it just before may reach the bot after the group and
    its game moved, and is taken as sent in the supergroup (where its answer goes: `reply`)."""
    chat = update.effective_chat
    if chat.type != Chat.GROUP:
        return chat.id
    return await context.service.chat_now(chat.id)


async def is_admin(context: BotContext, chat_id: int, user_id: int) -> bool:
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def is_member(context: BotContext, chat_id: int, user_id: int, unknown: bool = True) -> bool:
    """Whether Telegram says the user (or the bot) is in the group now; `unknown` when it refuses (the
    bot is not in the group, or the group became a supergroup) or cannot be asked. A join is not refused
    for that (True); word that someone left may arrive after they came back (webhook workers take updates
    in parallel, and Telegram sends an update again when its worker died), and is acted on only when
    Telegram confirms it (False)."""
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return unknown
    return is_in(member)


def answer_limits(bot, chat: Chat | None, must_arrive: bool = False) -> dict:
    """The flood limits' arguments of an answer to someone's command or press in a group
    (`tgbot.ratelimit.Answer`: in a busy group it leaves the game's messages their share, and is
    dropped rather than kept waiting, unless it `must_arrive`: see `ask`); in private it waits its
    turn like any message."""
    if not in_group(chat) or not getattr(getattr(bot, "rate_limiter", None), "takes_answers", False):
        return {}
    return {"rate_limit_args": MUST_ARRIVE if must_arrive else Answer()}


async def ask(update: Update, context: BotContext, text: str, buttons) -> None:
    """Answer a command with buttons someone must press: /cancel's question, the /settings and
    /language keyboards, a link to open the private chat. Dropped under a flood, it would leave them
    nothing to press; so it waits for its turn (still after the game's share of the group's budget),
    and in webhook mode it waits in the background (`GameService.answer_in_turn`). A plain answer may
    be dropped: sending the command again asks again."""
    chat_id = update.effective_chat.id if update.effective_chat is not None else None
    await context.service.answer_in_turn((chat_id, text, buttons), lambda: reply(update, text, buttons))


async def reply(update: Update, text: str, buttons=(), protected: bool = False) -> None:
    """Answer a command where it was sent (in a forum group, in its topic). In a group the answer
    quotes the command, as Telegram's clients do, and goes without the quote if the command is gone
    by now (its sender, an admin or a bot that tidies commands away deleted it). An answer with
    buttons is not dropped under a flood (`ask`)."""
    if not text:
        return
    bot, chat, message = update.get_bot(), update.effective_chat, update.effective_message
    options = {"parse_mode": ParseMode.HTML, "reply_markup": markup(buttons), "protect_content": protected}
    options |= answer_limits(bot, chat, must_arrive=bool(buttons))
    quote = ReplyParameters(message.message_id, allow_sending_without_reply=True) if in_group(chat) else None
    try:
        await bot.send_message(chat.id, text, reply_parameters=quote, message_thread_id=topic_of(update), **options)
    except ChatMigrated as moved:
        # The group became a supergroup after the command was sent: answer there. (The group's
        # settings and game move with Telegram's service messages, or with the game's next message.)
        try:
            await update.get_bot().send_message(moved.new_chat_id, text, **options)
        except TelegramError as error:
            log.info("a reply was not delivered: %s", type(error).__name__)
    except TelegramError as error:
        # The command has done its work; only this answer is lost (a closed chat, flood, the network).
        log.info("a reply was not delivered: %s", type(error).__name__)


async def can_write_to(context: BotContext, user_id: int) -> bool:
    """Whether the user's private chat with the bot is open (roles and cards go there); False also when
    Telegram cannot say (a timeout): the link to the private chat seats them then."""
    try:
        await context.bot.send_chat_action(user_id, ChatAction.TYPING)
    except (Forbidden, BadRequest):
        return False
    except TelegramError as error:
        log.info("could not ask whether a private chat is open: %s", type(error).__name__)
        return False
    return True


async def groups_only(update: Update, context: BotContext, lang: str) -> bool:
    """Answer a group command sent in private; True when the command may go on. Someone who plays
    already is told where their game is, not to add the bot to a group."""
    if in_group(update.effective_chat):
        return True
    user = update.effective_user
    groups = await context.service.groups_of(user.id) if user is not None else []
    if groups:
        text = tn(
            lang,
            "Send this command in a group: your game is played in %(groups)s.",
            "Send this command in a group: your games are played in %(groups)s.",
            len(groups),
            groups=", ".join(f"«{common.title(group)}»" for group in groups),
        )
    else:
        text = t(lang, "Add me to a group and send this command there: games are played in groups.")
    await reply(update, text)
    return False


@dataclass(frozen=True)
class GroupRequest:
    """Who sent a group command, where, and in which language to answer. `anonymous_admin`: sent
    on behalf of the group itself, which only its admins can do."""

    context: BotContext
    chat_id: int
    user_id: int
    lang: str
    anonymous_admin: bool = False

    async def is_admin(self) -> bool:
        return self.anonymous_admin or await is_admin(self.context, self.chat_id, self.user_id)


def topic_of(update: Update) -> int | None:
    """The forum topic a group message was sent in; None for General, or a group without topics."""
    message = update.effective_message
    return message.message_thread_id if message is not None and message.is_topic_message else None


def sent_as_channel(update: Update) -> bool:
    """Sent on behalf of a channel: Telegram names the same stand-in user as the sender of every
    such message, whoever wrote it, so it says nothing of who that was."""
    message = update.effective_message
    return message is not None and message.sender_chat is not None and message.sender_chat.type == Chat.CHANNEL


def sent_as_group(update: Update) -> bool:
    """Sent by an anonymous admin, on behalf of the group itself: Telegram names the same stand-in
    user (GroupAnonymousBot) as the sender, and asked about it, does not call it an admin; but only
    the group's admins can send such a message."""
    message = update.effective_message
    return message is not None and message.sender_chat is not None and message.sender_chat.id == message.chat.id


ANONYMOUS_REFUSAL = N_("Send this command as yourself, not anonymously: I cannot tell who sent it.")
CHANNEL_REFUSAL = N_("Send this command as yourself, not on behalf of a channel.")


async def sent_by_nobody(update: Update, lang: str) -> bool:
    """Answer a command about the sender's own seat or hints that was sent on behalf of a channel or
    anonymously as the group, which names no person; True when it was (and the command stops)."""
    if sent_as_channel(update):
        await reply(update, t(lang, CHANNEL_REFUSAL))
        return True
    if sent_as_group(update):
        await reply(update, t(lang, ANONYMOUS_REFUSAL))
        return True
    return False


async def group_request(update: Update, context: BotContext) -> GroupRequest | None:
    """The request behind a group-only command that depends on who sent it, or None (answered)
    when it came from a private chat or from a channel."""
    lang = await language_of(update, context)
    if not await groups_only(update, context, lang):
        return None
    if sent_as_channel(update):
        await reply(update, t(lang, CHANNEL_REFUSAL))
        return None
    return GroupRequest(context, await group_id(update, context), update.effective_user.id, lang, sent_as_group(update))


# ---------------------------------------------------------------- commands


async def start(update: Update, context: BotContext) -> None:
    """/start in private: join a game from a Join link, or receive what your games expect of you."""
    payload = context.args[0] if context.args else ""
    # A Join link names its game: someone whose language the bot does not speak gets that game's.
    linked = payload[len(JOIN_PREFIX) :] if payload.startswith(JOIN_PREFIX) else None
    user, lang = update.effective_user, await language_of(update, context, game_id=linked)
    if in_group(update.effective_chat):
        await reply(update, menus.help_text(lang))
        return
    service = context.service
    if payload.startswith(JOIN_PREFIX):
        # The Join button can be forwarded out of the group, or its link typed by anyone.
        async def is_member_of(group_id: int) -> bool:
            return await is_member(context, group_id, user.id)

        answer = await service.join(payload[len(JOIN_PREFIX) :], player_of(user), lang, is_member_of)
        await reply(update, answer.text)
        await service.deliver(answer)
    elif await service.seated(user.id):
        # Someone sent here from their group (their role or a card did not reach them) is playing already.
        await reply(update, t(lang, "Hello! While you play, your role, your cards and your /hints come to this chat."))
    else:
        await reply(update, t(lang, "Hello! Add me to a group and send /newgame there to play The Resistance."))
    await service.resend_private(user.id)


async def new_game(update: Update, context: BotContext) -> None:
    """/newgame [targeting] [blind] [plot]: open a lobby in this group, with those variants."""
    request = await group_request(update, context)
    if request is None:
        return
    chat, user, lang = update.effective_chat, update.effective_user, request.lang
    # "/newgame targeting, blind" as well as "/newgame targeting blind".
    words = {word for word in VARIANT_SEPARATORS.split(" ".join(context.args or ()).lower()) if word}
    unknown = sorted(words - VARIANT_WORDS)
    if unknown:
        # A typo would otherwise open a game without the variant it meant.
        await reply(
            update,
            t(
                lang,
                "I do not know the variant «%(word)s». Add targeting, blind and/or plot, or nothing: "
                "/newgame targeting blind",
                word=escape(common.cut(unknown[0], MAX_NAME)),
            ),
        )
        return
    variants = Variants(
        targeting="targeting" in words,
        blind_spies=bool(words & {"blind", "blind_spies"}),
        plot_cards=bool(words & {"plot", "plot_cards"}),
    )
    host = player_of(user)
    # Whoever opens the game sits at it at once, if the bot can already write to them in private.
    seated = (host,) if await can_write_to(context, user.id) else ()
    answer = await context.service.open_lobby(
        request.chat_id,
        chat.title or "",
        host,
        lang,
        variants,
        players=seated,
        topic=topic_of(update),
        first_language=supported(user.language_code) or DEFAULT_LANGUAGE,
    )
    if answer is not None:
        await reply(update, answer.text)


async def join(update: Update, context: BotContext) -> None:
    """/join in a group: take a seat, once the private chat with the bot is open."""
    user, lang = update.effective_user, await language_of(update, context)
    if not await groups_only(update, context, lang) or await sent_by_nobody(update, lang):
        return
    service = context.service
    game_id, refusal = await service.joinable(await group_id(update, context), user.id, lang)
    if refusal is not None:
        await reply(update, refusal.text)
        return
    if not await can_write_to(context, user.id):
        link = common.join_link(context.bot.username, game_id)
        await ask(
            update,
            context,
            t(
                lang,
                "%(player)s, I cannot write to you in private yet, and roles and cards come there. Press "
                "the button and then Start: you will be seated.",
                player=common.mention(player_of(user)),
            ),
            ((Button(t(lang, "Open the private chat and join"), url=link),),),
        )
        return
    answer = await service.join(game_id, player_of(user), lang)
    await reply(update, answer.text)
    await service.deliver(answer)


async def leave(update: Update, context: BotContext) -> None:
    """/leave: give up a seat before the game starts."""
    lang = await language_of(update, context)
    if await groups_only(update, context, lang) and not await sent_by_nobody(update, lang):
        service = context.service
        answer = await service.leave(await group_id(update, context), update.effective_user.id, lang)
        await reply(update, answer.text)
        await service.deliver(answer)


async def start_game(update: Update, context: BotContext) -> None:
    """/startgame: deal the roles and begin."""
    request = await group_request(update, context)
    if request is None:
        return
    service = context.service
    answer = await service.start_game(request.chat_id, request.user_id, await request.is_admin(), request.lang)
    await reply(update, answer.text)
    await service.deliver(answer)


async def extend(update: Update, context: BotContext) -> None:
    """/extend: more time for the step the game is in (a few times a game; the group hears who asked)."""
    await _pace_command(update, context, context.service.extend)


async def resume(update: Update, context: BotContext) -> None:
    """/resume: a game paused because nobody played goes on."""
    await _pace_command(update, context, context.service.resume)


async def _pace_command(update: Update, context: BotContext, use: Callable[[int, int, str], Awaitable[Reply]]) -> None:
    """A seated player's command on the group's running game: answered where it was sent, the game's
    messages delivered after."""
    request = await group_request(update, context)
    if request is None:
        return
    answer = await use(request.chat_id, request.user_id, request.lang)
    await reply(update, answer.text)
    await context.service.deliver(answer)


async def timezone(update: Update, context: BotContext) -> None:
    """/timezone [name]: the group's time zone, for its quiet hours and the times the bot names."""
    request = await group_request(update, context)
    if request is None:
        return
    service, admin = context.service, await request.is_admin()
    if not context.args:
        current = await service.settings_of(request.chat_id, admin)
        await reply(update, menus.timezone_text(current, request.lang))
        return
    if not await may_configure(update, context, request, admin):
        return
    await reply(update, await service.set_timezone(request.chat_id, request.user_id, admin, request.lang, context.args))


async def my_games(update: Update, context: BotContext) -> None:
    """/mygames in private: every game the person sits in, and what each waits for from them."""
    lang = await language_of(update, context)
    if in_group(update.effective_chat):
        await reply(update, t(lang, "Send /mygames to me in private: what your games wait for is yours alone."))
        return
    await reply(update, await context.service.my_games(update.effective_user.id, lang))


async def add_computer(update: Update, context: BotContext) -> None:
    """/addbot: a computer player takes a seat in the open lobby."""
    await seat_computer(update, context, add=True)


async def remove_computer(update: Update, context: BotContext) -> None:
    """/removebot: the computer player seated last leaves the open lobby."""
    await seat_computer(update, context, add=False)


async def seat_computer(update: Update, context: BotContext, add: bool) -> None:
    request = await group_request(update, context)
    if request is None:
        return
    service = context.service
    answer = await service.seat_computer(request.chat_id, request.user_id, await request.is_admin(), request.lang, add)
    await reply(update, answer.text)
    await service.deliver(answer)


async def cancel(update: Update, context: BotContext) -> None:
    """/cancel: end the lobby or the game, after a confirmation."""
    request = await group_request(update, context)
    if request is None:
        return
    answer = await context.service.ask_cancel(request.chat_id, request.user_id, await request.is_admin(), request.lang)
    if answer.buttons:
        await ask(update, context, answer.text, answer.buttons)
    else:
        await reply(update, answer.text)


async def status(update: Update, context: BotContext) -> None:
    """/status: the board as everyone may see it, posted again with its buttons."""
    lang = await language_of(update, context)
    if await groups_only(update, context, lang):
        text = await context.service.status(await group_id(update, context), lang, topic_of(update))
        await reply(update, text or "")


async def record(update: Update, context: BotContext) -> None:
    """/record: the group's last finished game as a resistance-record/1 JSON file."""
    lang = await language_of(update, context)
    if not await groups_only(update, context, lang):
        return
    # Through the finished game's outbox: retried like any message, never a traceback for a 502.
    refusal = await context.service.send_record(await group_id(update, context), lang, topic_of(update))
    await reply(update, refusal or "")


async def help_command(update: Update, context: BotContext) -> None:
    """/help: the commands."""
    await reply(update, menus.help_text(await language_of(update, context)))


async def rules(update: Update, context: BotContext) -> None:
    """/rules: the rules in short."""
    await reply(update, menus.rules_text(await language_of(update, context)))


async def unknown_command(update: Update, context: BotContext) -> None:
    """A command the bot does not have, sent in private (a typo, or a guess): said so, never silence.
    In a group it may be another bot's, and is left alone."""
    lang = await language_of(update, context)
    await reply(update, t(lang, "I do not know this command. /help lists the ones I know."))


async def private_text(update: Update, context: BotContext) -> None:
    """Words written to the bot in private, where it reads only commands and buttons: a newcomer's
    "hi" or question gets a pointer, not silence. (In a group, talk is the players'.)"""
    lang = await language_of(update, context)
    await reply(update, t(lang, "I read only commands and buttons. /help lists the commands."))


async def chat_migrated(update: Update, context: BotContext) -> None:
    """Telegram's service message that the group became a supergroup under a new chat id: one comes
    in the old chat (`migrate_to_chat_id`), one in the new (`migrate_from_chat_id`)."""
    message = update.effective_message
    if message.migrate_to_chat_id is not None:
        old_chat_id, new_chat_id = message.chat.id, message.migrate_to_chat_id
    else:
        old_chat_id, new_chat_id = message.migrate_from_chat_id, message.chat.id
    await context.service.chat_moved(old_chat_id, new_chat_id)


async def group_renamed(update: Update, context: BotContext) -> None:
    """Someone renamed the group: its game's private messages name it by the new title."""
    message = update.effective_message
    if in_group(message.chat) and message.new_chat_title:
        await context.service.retitled(await group_id(update, context), message.new_chat_title)


async def member_left(update: Update, context: BotContext) -> None:
    """Someone left the group, or an admin removed them: a seat they held in its open lobby is given
    up, and the lobby shows it (they could not see the boards of the game it would start)."""
    message = update.effective_message
    left = message.left_chat_member
    if not in_group(message.chat) or left is None or left.id == context.bot.id:
        return
    chat_id = await group_id(update, context)
    # Telegram is asked only about someone seated in the lobby: an admin removing a hundred spammers
    # would otherwise spend the group's flood limit on the questions.
    if not await context.service.seated_in_lobby(chat_id, left.id):
        return  # no seat to give up
    if await is_member(context, chat_id, left.id, unknown=False):
        return  # word of a leave that reached the bot after they came back
    answer = await context.service.left_group(chat_id, left.id)
    await context.service.deliver(answer)


async def bot_added(update: Update, context: BotContext) -> None:
    """Someone added the bot to a group. Back in a group whose game went on without it (removed
    mid-game: nothing it said there arrived meanwhile, and the deadlines played on), it posts the
    board again, or, if the game ended meanwhile, its end; in a group without a game (or one that saw
    its last game's end) it says what it can do."""
    message = update.effective_message
    if not in_group(message.chat) or all(member.id != context.bot.id for member in message.new_chat_members):
        return
    if not await back_in_group(context, await group_id(update, context)):
        await reply(update, menus.greeting(await language_of(update, context)))


async def group_created(update: Update, context: BotContext) -> None:
    """Someone created a group with the bot in it: Telegram says so with this service message alone
    (no one was "added"), so the greeting comes here."""
    if in_group(update.effective_chat):
        await reply(update, menus.greeting(await language_of(update, context)))


async def back_in_group(context: BotContext, chat_id: int) -> bool:
    """The bot may post in the group again: the board of its game as it is now, or the end of its last
    game if the group never saw it. False when it had nothing of the kind to post."""
    service = context.service
    return await service.board_again(chat_id) or await service.result_again(chat_id)


async def bot_member_changed(update: Update, context: BotContext) -> None:
    """The bot's own membership of a group changed. Removed from the group (or the group deleted), it
    closes the group's open lobby, whose game could not be played there (`GameService.bot_removed`).
    Given back its right to post after an admin had taken it (restricted, then let go), it posts the
    board again, or the end of a game that ended meanwhile: nothing it said there meanwhile arrived
    (Telegram refused it), and the game went on by its deadlines. (Added back after someone removed it,
    it hears of it by the service message too: `bot_added`.)"""
    change = update.my_chat_member
    if change is None or not in_group(change.chat):
        return
    old, new = change.old_chat_member, change.new_chat_member
    if not is_in(new):
        if await is_member(context, change.chat.id, context.bot.id, unknown=False):
            return  # word of a removal that reached the bot after it was added back
        # The chat as Telegram names it: a basic group's old id, once it became a supergroup, is not
        # the game's group any more.
        answer = await context.service.bot_removed(change.chat.id)
        await context.service.deliver(answer)
        return
    if old.status != ChatMemberStatus.RESTRICTED or not may_post(new) or may_post(old):
        return
    await back_in_group(context, await group_id(update, context))


def is_in(member) -> bool:
    """Whether the member is in the group at all: kept from posting (restricted) still is."""
    if member.status == ChatMemberStatus.RESTRICTED:
        return bool(getattr(member, "is_member", True))
    return member.status not in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED)


def may_post(member) -> bool:
    if member.status == ChatMemberStatus.RESTRICTED:
        return bool(member.is_member and member.can_send_messages)
    return member.status in (ChatMemberStatus.MEMBER, ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


# ---------------------------------------------------------------- buttons


async def settings(update: Update, context: BotContext) -> None:
    """/settings: the group's settings as a keyboard that edits itself."""
    request = await group_request(update, context)
    if request is None:
        return
    admin = await request.is_admin()
    if not await may_configure(update, context, request, admin):
        return
    current = await context.service.settings_of(request.chat_id, admin)
    text, buttons = menus.settings_menu(request.chat_id, current, current.language or request.lang, not admin)
    await ask(update, context, text, buttons)


async def language(update: Update, context: BotContext) -> None:
    """/language: choose the language the bot speaks in this group."""
    request = await group_request(update, context)
    if request is None:
        return
    admin = await request.is_admin()
    if not await may_configure(update, context, request, admin):
        return
    text, buttons = menus.language_menu(request.chat_id, request.lang, not admin)
    await ask(update, context, text, buttons)


async def may_configure(update: Update, context: BotContext, request: GroupRequest, admin: bool) -> bool:
    refusal = await context.service.configure_refusal(request.chat_id, request.user_id, admin, request.lang)
    if refusal is not None:
        await reply(update, refusal)
    return refusal is None


async def hints(update: Update, context: BotContext) -> None:
    """/hints: private deduction hints for your running game; never in the group."""
    user, lang = update.effective_user, await language_of(update, context)
    if await sent_by_nobody(update, lang):
        return
    if not in_group(update.effective_chat):
        text, buttons = await context.service.hints(user.id, lang)
        await reply(update, text, buttons, protected=True)
        return
    # Asked in a game's group by one of its players: that game's hints, with no choice to make.
    text, buttons, theirs = await context.service.hints_asked_in(await group_id(update, context), user.id, lang)
    if not theirs:
        # They play no running game: say so here, where they asked (who plays is public).
        await reply(update, text)
        return
    if not await send_private(context, user.id, text, buttons, protected=True):
        link = common.open_chat_link(context.bot.username)
        await ask(
            update,
            context,
            t(lang, "Hints come in private: open the chat with me and send /hints there."),
            ((Button(t(lang, "Open the private chat"), url=link),),),
        )
        return
    await reply(update, t(lang, "I sent your hints in private."))


# ---------------------------------------------------------------- buttons
#
# One handler per kind of button (`tgbot.buttons.KINDS`), each routed by its kind's pattern;
# `invalid_button` answers data that matches no kind.


def pressed(update: Update, kind: type):
    """The press a button's data describes (its pattern already matched), who pressed it, and where."""
    query = update.callback_query
    press = kind_of(kind).decode(query.data)
    chat_id = query.message.chat.id if query.message is not None else None
    return query, press, update.effective_user.id, chat_id


async def game_button(update: Update, context: BotContext, kind: type, apply) -> None:
    query, press, user_id, chat_id = pressed(update, kind)
    lang = await language_of(update, context, game_id=press.game_id)
    answer = await apply(context.service, press, user_id, chat_id, lang)
    await answer_query(query, answer.text, answer.alert)
    await context.service.deliver(answer)


async def vote_button(update: Update, context: BotContext) -> None:
    """👍 / 👎 under a proposal in the group."""
    await game_button(update, context, VotePress, GameService.vote)


async def card_button(update: Update, context: BotContext) -> None:
    """✅ / ❌ on a team member's private card prompt."""
    await game_button(update, context, CardPress, GameService.play_card)


async def team_button(update: Update, context: BotContext) -> None:
    """A seat ticked (or the team proposed) on the leader's private keyboard."""
    await game_button(update, context, TeamPress, GameService.pick_team_member)


async def mission_button(update: Update, context: BotContext) -> None:
    """A mission picked on the leader's private keyboard (Targeting)."""
    await game_button(update, context, MissionPress, GameService.pick_mission)


async def plot_button(update: Update, context: BotContext) -> None:
    """A choice on a private Plot card keyboard (use, pass, deal, a target)."""
    await game_button(update, context, PlotPress, GameService.plot_choice)


async def waiting_button(update: Update, context: BotContext) -> None:
    """⏳ Waiting for…: who must still act, told to whoever asked."""
    await game_button(update, context, WaitingPress, GameService.waiting)


async def host_button(update: Update, context: BotContext, kind: type, apply) -> None:
    """A button only whoever opened the game or a group admin may press (the service asks
    Telegram whether the presser is an admin of the game's own group only)."""
    query, press, user_id, chat_id = pressed(update, kind)
    lang = await language_of(update, context, game_id=press.game_id)

    async def is_admin_in(group_id: int) -> bool:
        return await is_admin(context, group_id, user_id)

    answer = await apply(context.service, press, user_id, chat_id, lang, is_admin_in)
    await answer_query(query, answer.text, answer.alert)
    await context.service.deliver(answer)
    if answer.settles and carries(query.message, query.data):
        await edit_query_message(query, answer.settles)


def carries(message, data: str) -> bool:
    """Whether `data` is a button of `message`: a press forged onto another message (the game's board)
    must not rewrite it."""
    # A message too old for Telegram to show the bot (`InaccessibleMessage`) has no keyboard to read.
    markup = getattr(message, "reply_markup", None)
    rows = markup.inline_keyboard if markup is not None else ()
    return any(button.callback_data == data for row in rows for button in row)


async def cancel_button(update: Update, context: BotContext) -> None:
    """Yes / No under /cancel's question."""
    await host_button(update, context, CancelPress, GameService.cancel)


async def computer_button(update: Update, context: BotContext) -> None:
    """🤖 Add a computer player / Remove one, under the lobby."""
    await host_button(update, context, ComputerPress, GameService.computer_button)


async def hints_button(update: Update, context: BotContext) -> None:
    """🔎 Hints under a player's private messages."""
    query, press, user_id, chat_id = pressed(update, HintsPress)
    lang = await language_of(update, context, game_id=press.game_id)
    if chat_id != user_id:  # the Hints button only ever sits in the player's own private chat
        await answer_query(query, t(lang, "This button is not valid here."))
        return
    text, buttons = await context.service.hints(user_id, lang, press.game_id)
    delivered = await send_private(context, user_id, text, buttons, protected=True)
    await answer_query(
        query, "" if delivered else t(lang, "Hints come in private: open the chat with me and send /hints there.")
    )


async def rematch_button(update: Update, context: BotContext) -> None:
    """🔁 Play again under a finished game."""
    query, press, user_id, chat_id = pressed(update, RematchPress)
    lang = await language_of(update, context, game_id=press.game_id)
    # The group may have been renamed since the game ended: the next one goes by its name now.
    title = query.message.chat.title if query.message is not None else None

    async def can_still_play(group_id: int, player_id: int) -> bool:
        # In the group to see the boards, and reachable in private for a role and cards.
        return await is_member(context, group_id, player_id) and await can_write_to(context, player_id)

    answer = await context.service.rematch(press.game_id, user_id, chat_id, lang, can_still_play, title)
    await answer_query(query, answer.text)


async def settings_button(update: Update, context: BotContext) -> None:
    """A press on the /settings keyboard."""
    query, press, user_id, chat_id = pressed(update, SettingsPress)
    await group_settings_button(update, context, query, press, user_id, chat_id)


async def language_button(update: Update, context: BotContext) -> None:
    """A press on the /language keyboard."""
    query, press, user_id, chat_id = pressed(update, LanguagePress)
    await group_settings_button(update, context, query, press, user_id, chat_id)


async def invalid_button(update: Update, context: BotContext) -> None:
    """Data that no button of this bot ever carried (forged, or from an older version)."""
    lang = await language_of(update, context)
    await answer_query(update.callback_query, t(lang, "This button is not valid."))


BUTTON_HANDLERS = {
    VotePress: vote_button,
    CardPress: card_button,
    TeamPress: team_button,
    MissionPress: mission_button,
    PlotPress: plot_button,
    WaitingPress: waiting_button,
    CancelPress: cancel_button,
    ComputerPress: computer_button,
    HintsPress: hints_button,
    RematchPress: rematch_button,
    SettingsPress: settings_button,
    LanguagePress: language_button,
}


def settings_change(press: SettingsPress | LanguagePress) -> tuple[str, Callable[[GroupSettings], GroupSettings]]:
    """The setting a press names, and what it makes of the settings."""
    if isinstance(press, LanguagePress):
        return "language", lambda current: replace(current, language=press.language)
    return press.setting, lambda current: current.stepped(press.setting, press.shown)


async def group_settings_button(update: Update, context: BotContext, query, press, user_id, chat_id) -> None:
    """A press on the /settings or /language keyboard of the group it was posted in."""
    lang = await language_of(update, context)
    service = context.service

    async def is_admin_in(group_id: int) -> bool:
        return await is_admin(context, group_id, user_id)

    if chat_id != press.chat_id:
        await answer_query(query, t(lang, "This button is not valid here."))
        return
    group = await group_id(update, context)  # a keyboard left in a basic group that became a supergroup
    admin = await is_admin_in(group)
    if isinstance(press, SettingsPress) and press.setting == "done":
        if not await service.may_close_settings(group, user_id, admin):
            await answer_query(query, t(lang, NOT_ALLOWED_TO_CONFIGURE))
            return
        current = await service.settings_of(group, admin)
        await edit_query_message(query, menus.settings_closed(current, current.language or lang))
        await answer_query(query, "")
        return
    # Whoever opened the open lobby, not an admin, changes that lobby's settings alone.
    setting, change = settings_change(press)
    settings, answer = await service.change_settings(group, user_id, admin, lang, change, setting)
    if settings is None:
        await answer_query(query, answer.text)
        return
    shown_in = settings.language or lang
    if isinstance(press, LanguagePress):
        language_name = menus.LANGUAGE_NAMES[settings.language]
        if admin:
            said = t(shown_in, "I will speak %(language)s here.", language=language_name)
        else:
            said = t(shown_in, "I will speak %(language)s in the open lobby's game.", language=language_name)
        await edit_query_message(query, said)
    else:
        await edit_query_message(query, *menus.settings_menu(group, settings, shown_in, not admin))
    await answer_query(query, answer.text)


def plain(html_text: str) -> str:
    """A reply's HTML as the plain text a callback answer shows."""
    return unescape(HTML_TAG.sub("", html_text))


async def answer_query(query, text: str, alert: bool = False) -> None:
    """Answer a press; an answer longer than Telegram shows is cut (Telegram would refuse it whole,
    and the presser would see nothing)."""
    try:
        await query.answer(common.cut(plain(text), common.ANSWER_LIMIT) or None, show_alert=alert)
    except TelegramError as error:
        # The press still counted; only the little answer bubble is lost ("query is too old", a timeout).
        log.info("callback answer not delivered: %s", type(error).__name__)


async def edit_query_message(query, text: str, buttons=()) -> None:
    """Edit the message a button was on; a double tap ("not modified") or an odd message is not an error.
    A message left in a basic group that became a supergroup cannot be edited any more: what it would
    have shown is posted in the supergroup instead."""
    if query.message is None:
        return  # too old for Telegram to show it to the bot: nothing to edit
    bot, chat = query.get_bot(), query.message.chat
    # Dropped under a flood, the pressed keyboard stays as it was, its buttons still there: the next
    # press on it, made on a keyboard that no longer shows the settings as they are, changes nothing
    # (`GroupSettings.stepped`) and edits it to show them.
    options = {"parse_mode": ParseMode.HTML, "reply_markup": markup(buttons)} | answer_limits(bot, chat)
    try:
        await bot.edit_message_text(text, chat_id=chat.id, message_id=query.message.message_id, **options)
    except ChatMigrated as moved:
        try:
            await query.get_bot().send_message(moved.new_chat_id, text, **options)
        except TelegramError as error:
            log.info("a pressed message's new state was not posted: %s", type(error).__name__)
    except TelegramError as error:
        log.info("could not edit the pressed message: %s", type(error).__name__)


async def send_private(context: BotContext, user_id: int, text: str, buttons=(), protected: bool = False) -> bool:
    try:
        await context.bot.send_message(
            user_id, text, parse_mode=ParseMode.HTML, reply_markup=markup(buttons), protect_content=protected
        )
    except TelegramError as error:
        log.info("a private message was not delivered: %s", type(error).__name__)
        return False
    return True
