"""Telegram handlers: parse the update, call the service, answer. No rule is decided here."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from html import unescape

from telegram import Chat, Update, User
from telegram.constants import ChatAction, ChatMemberStatus, ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError
from telegram.ext import ContextTypes

from engine import Variants
from tgbot import render
from tgbot.callbacks import BadCallback, HintsPress, LanguagePress, RematchPress, SettingsPress, decode
from tgbot.i18n import DEFAULT_LANGUAGE, supported, t
from tgbot.outbox import markup
from tgbot.outgoing import Button
from tgbot.service import NOT_ALLOWED_TO_CONFIGURE, GameService
from tgbot.settings import GroupSettings
from tgbot.table import Player

log = logging.getLogger(__name__)

JOIN_PREFIX = "join_"
HTML_TAG = re.compile(r"<[^>]+>")


def service_of(context: ContextTypes.DEFAULT_TYPE) -> GameService:
    return context.application.bot_data["service"]


def language_of(user: User | None) -> str:
    return supported(user.language_code if user else None) or DEFAULT_LANGUAGE


def player_of(user: User) -> Player:
    return Player(user_id=user.id, name=user.full_name or str(user.id), language=user.language_code)


def in_group(chat: Chat | None) -> bool:
    return chat is not None and chat.type in (Chat.GROUP, Chat.SUPERGROUP)


async def is_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def reply(update: Update, text: str, buttons=()) -> None:
    if not text:
        return
    try:
        await update.effective_message.reply_text(text, parse_mode=ParseMode.HTML, reply_markup=markup(buttons))
    except TelegramError as error:
        # The command has done its work; only this answer is lost (a closed chat, flood, the network).
        log.info("a reply was not delivered: %s", type(error).__name__)


async def groups_only(update: Update, lang: str) -> bool:
    """Answer a group command sent in private; True when the command may go on."""
    if in_group(update.effective_chat):
        return True
    await reply(update, t(lang, "Add me to a group and send this command there: games are played in groups."))
    return False


@dataclass(frozen=True)
class GroupRequest:
    """Who sent a group command, where, and in which language to answer."""

    context: ContextTypes.DEFAULT_TYPE
    chat_id: int
    user_id: int
    lang: str

    async def is_admin(self) -> bool:
        return await is_admin(self.context, self.chat_id, self.user_id)


async def group_request(update: Update, context: ContextTypes.DEFAULT_TYPE) -> GroupRequest | None:
    """The request behind a group-only command, or None (answered) when it came from a private chat."""
    lang = language_of(update.effective_user)
    if not await groups_only(update, lang):
        return None
    return GroupRequest(context, update.effective_chat.id, update.effective_user.id, lang)


# ---------------------------------------------------------------- commands


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/start in private: join a game from a Join link, or receive what your games expect of you."""
    user, lang = update.effective_user, language_of(update.effective_user)
    if in_group(update.effective_chat):
        await reply(update, render.help_text(lang))
        return
    service = service_of(context)
    payload = context.args[0] if context.args else ""
    if payload.startswith(JOIN_PREFIX):
        answer = await service.join(payload[len(JOIN_PREFIX) :], player_of(user), lang)
        await reply(update, answer.text)
        await service.deliver(answer)
    else:
        await reply(update, t(lang, "Hello! Add me to a group and send /newgame there to play The Resistance."))
    await service.resend_private(user.id)


async def new_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/newgame [targeting] [blind]: open a lobby in this group, with those variants."""
    lang = language_of(update.effective_user)
    if not await groups_only(update, lang):
        return
    chat = update.effective_chat
    words = {word.lower() for word in context.args or ()}
    variants = Variants(targeting="targeting" in words, blind_spies=bool(words & {"blind", "blind_spies"}))
    answer = await service_of(context).open_lobby(
        chat.id, chat.title or "", player_of(update.effective_user), lang, variants
    )
    if answer is not None:
        await reply(update, answer.text)


async def join(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/join in a group: take a seat, once the private chat with the bot is open."""
    user, lang = update.effective_user, language_of(update.effective_user)
    if not await groups_only(update, lang):
        return
    service = service_of(context)
    game_id, refusal = await service.joinable(update.effective_chat.id, lang)
    if refusal is not None:
        await reply(update, refusal.text)
        return
    try:
        await context.bot.send_chat_action(user.id, ChatAction.TYPING)
    except (Forbidden, BadRequest):
        link = render.join_link(context.bot.username, game_id)
        await reply(
            update,
            t(
                lang,
                "%(player)s, I cannot write to you in private yet, and roles and cards come there. Press "
                "the button and then Start: you will be seated.",
                player=render.mention(player_of(user)),
            ),
            ((Button(t(lang, "Open the private chat and join"), url=link),),),
        )
        return
    answer = await service.join(game_id, player_of(user), lang)
    await reply(update, answer.text)
    await service.deliver(answer)


async def leave(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/leave: give up a seat before the game starts."""
    lang = language_of(update.effective_user)
    if await groups_only(update, lang):
        service = service_of(context)
        answer = await service.leave(update.effective_chat.id, update.effective_user.id, lang)
        await reply(update, answer.text)
        await service.deliver(answer)


async def start_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/startgame: deal the roles and begin."""
    request = await group_request(update, context)
    if request is None:
        return
    service = service_of(context)
    answer = await service.start_game(request.chat_id, request.user_id, await request.is_admin(), request.lang)
    await reply(update, answer.text)
    await service.deliver(answer)


async def cancel(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cancel: end the lobby or the game, after a confirmation."""
    request = await group_request(update, context)
    if request is None:
        return
    answer = await service_of(context).ask_cancel(
        request.chat_id, request.user_id, await request.is_admin(), request.lang
    )
    await reply(update, answer.text, answer.buttons)


async def status(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/status: the board as everyone may see it, posted again with its buttons."""
    lang = language_of(update.effective_user)
    if await groups_only(update, lang):
        text = await service_of(context).status(update.effective_chat.id, lang)
        await reply(update, text or "")


async def record(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/record: the group's last finished game as a resistance-record/1 JSON file."""
    lang = language_of(update.effective_user)
    if not await groups_only(update, lang):
        return
    document = await service_of(context).record_document(update.effective_chat.id, lang)
    if document is None:
        await reply(update, t(lang, "No game has finished in this group yet."))
        return
    await update.effective_message.reply_document(
        document.content.encode(), filename=document.filename, caption=document.caption
    )


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/help: the commands."""
    await reply(update, render.help_text(language_of(update.effective_user)))


async def rules(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/rules: the rules in short."""
    await reply(update, render.rules_text(language_of(update.effective_user)))


# ---------------------------------------------------------------- buttons


async def settings(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/settings: the group's settings as a keyboard that edits itself."""
    request = await group_request(update, context)
    if request is None or not await may_configure(update, context, request):
        return
    current = await service_of(context).store.settings(request.chat_id)
    text, buttons = render.settings_menu(request.chat_id, current, current.language or request.lang)
    await reply(update, text, buttons)


async def language(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/language: choose the language the bot speaks in this group."""
    request = await group_request(update, context)
    if request is None or not await may_configure(update, context, request):
        return
    text, buttons = render.language_menu(request.chat_id, request.lang)
    await reply(update, text, buttons)


async def may_configure(update: Update, context: ContextTypes.DEFAULT_TYPE, request: GroupRequest) -> bool:
    allowed = await service_of(context).may_configure(request.chat_id, request.user_id, await request.is_admin())
    if not allowed:
        await reply(update, t(request.lang, NOT_ALLOWED_TO_CONFIGURE))
    return allowed


async def hints(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/hints: private deduction hints for your running game; never in the group."""
    user, lang = update.effective_user, language_of(update.effective_user)
    text, buttons = await service_of(context).hints(user.id, lang)
    if not in_group(update.effective_chat):
        await reply(update, text, buttons)
        return
    if not await send_private(context, user.id, text, buttons):
        link = render.open_chat_link(context.bot.username)
        await reply(
            update,
            t(lang, "Hints come in private: open the chat with me and send /hints there."),
            ((Button(t(lang, "Open the private chat"), url=link),),),
        )
        return
    await reply(update, t(lang, "I sent your hints in private."))


# ---------------------------------------------------------------- buttons


async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Any inline button: check it against the stored game, apply it, answer the presser privately."""
    query = update.callback_query
    lang = language_of(update.effective_user)
    try:
        press = decode(query.data)
    except BadCallback:
        await answer_query(query, t(lang, "This button is not valid."))
        return
    user_id = update.effective_user.id
    chat_id = query.message.chat.id if query.message is not None else None
    service = service_of(context)

    async def is_admin_in(group_id: int) -> bool:
        return await is_admin(context, group_id, user_id)

    if isinstance(press, SettingsPress | LanguagePress):
        await group_settings_button(query, press, user_id, chat_id, lang, service, is_admin_in)
        return
    if isinstance(press, HintsPress):
        if chat_id != user_id:  # the Hints button only ever sits in the player's own private chat
            await answer_query(query, t(lang, "This button is not valid here."))
            return
        text, buttons = await service.hints(user_id, lang, press.game_id)
        delivered = await send_private(context, user_id, text, buttons)
        await answer_query(
            query, "" if delivered else t(lang, "Hints come in private: open the chat with me and send /hints there.")
        )
        return
    if isinstance(press, RematchPress):
        answer = await service.rematch(press.game_id, user_id, chat_id, lang)
        await answer_query(query, answer.text)
        return
    answer = await service.press(press, user_id, chat_id, lang, is_admin_in)
    await answer_query(query, answer.text, answer.alert)
    await service.deliver(answer)


def settings_change(press: SettingsPress | LanguagePress) -> Callable[[GroupSettings], GroupSettings]:
    if isinstance(press, LanguagePress):
        return lambda current: replace(current, language=press.language)
    return lambda current: current.stepped(press.setting)


async def group_settings_button(query, press, user_id, chat_id, lang, service, is_admin_in) -> None:
    """A press on the /settings or /language keyboard of the group it was posted in."""
    if chat_id != press.chat_id:
        await answer_query(query, t(lang, "This button is not valid here."))
        return
    if isinstance(press, SettingsPress) and press.setting == "done":
        if not await service.may_configure(press.chat_id, user_id, await is_admin_in(press.chat_id)):
            await answer_query(query, t(lang, NOT_ALLOWED_TO_CONFIGURE))
            return
        current = await service.store.settings(press.chat_id)
        await edit_query_message(query, render.settings_closed(current, current.language or lang))
        await answer_query(query, "")
        return
    settings, answer = await service.change_settings(
        press.chat_id, user_id, await is_admin_in(press.chat_id), lang, settings_change(press)
    )
    if settings is None:
        await answer_query(query, answer.text)
        return
    shown_in = settings.language or lang
    if isinstance(press, LanguagePress):
        language_name = render.LANGUAGE_NAMES[settings.language]
        await edit_query_message(query, t(shown_in, "I will speak %(language)s here.", language=language_name))
    else:
        await edit_query_message(query, *render.settings_menu(press.chat_id, settings, shown_in))
    await answer_query(query, "")


def plain(html_text: str) -> str:
    """A reply's HTML as the plain text a callback answer shows."""
    return unescape(HTML_TAG.sub("", html_text))


async def answer_query(query, text: str, alert: bool = False) -> None:
    try:
        await query.answer(plain(text) or None, show_alert=alert)
    except TelegramError as error:
        # The press still counted; only the little answer bubble is lost ("query is too old", a timeout).
        log.info("callback answer not delivered: %s", type(error).__name__)


async def edit_query_message(query, text: str, buttons=()) -> None:
    """Edit the message a button was on; a double tap ("not modified") or an odd message is not an error."""
    try:
        await query.edit_message_text(text, parse_mode=ParseMode.HTML, reply_markup=markup(buttons))
    except TelegramError as error:
        log.info("could not edit the pressed message: %s", type(error).__name__)


async def send_private(context: ContextTypes.DEFAULT_TYPE, user_id: int, text: str, buttons=()) -> bool:
    try:
        await context.bot.send_message(user_id, text, parse_mode=ParseMode.HTML, reply_markup=markup(buttons))
    except TelegramError as error:
        log.info("a private message was not delivered: %s", type(error).__name__)
        return False
    return True
