"""Telegram's side of the group's memory: /stats, /top, /history and its buttons, /nextgame,
/forgetme and its confirmation. Each translates an update into a `MemoryService` call and its answer."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import TelegramError

from tgbot.buttons import ForgetPress, HistoryPress, kind_of
from tgbot.context import BotContext
from tgbot.handlers import (
    answer_limits,
    answer_query,
    ask,
    can_write_to,
    edit_query_message,
    group_request,
    in_group,
    language_of,
    player_of,
    reply,
)
from tgbot.i18n import t
from tgbot.outgoing import Document
from tgbot.render import memory as memory_render

log = logging.getLogger(__name__)


async def stats(update: Update, context: BotContext) -> None:
    """/stats: in a group, the sender's counts and rating there (or, sent as a reply, those of the
    person replied to); in private, the sender's counts over every group."""
    memory = context.service.memory
    if not in_group(update.effective_chat):
        lang = await language_of(update, context)
        user = update.effective_user
        await reply(update, await memory.stats_everywhere(user.id, player_of(user).name, lang))
        return
    request = await group_request(update, context)
    if request is None:
        return
    replied = update.effective_message.reply_to_message
    person = replied.from_user if replied is not None and replied.from_user and not replied.from_user.is_bot else None
    person = person or update.effective_user
    text = await memory.stats_in_group(
        request.chat_id, update.effective_chat.title or "", person.id, player_of(person).name, request.lang
    )
    await reply(update, text)


async def top(update: Update, context: BotContext) -> None:
    """/top in a group: its leaderboard by rating."""
    request = await group_request(update, context)
    if request is not None:
        title = update.effective_chat.title or ""
        await reply(update, await context.service.memory.top(request.chat_id, title, request.lang))


async def history(update: Update, context: BotContext) -> None:
    """/history in a group: its last games, one line each, with a button for each one's record."""
    request = await group_request(update, context)
    if request is None:
        return
    text, buttons = await context.service.memory.history(
        request.chat_id, update.effective_chat.title or "", request.lang
    )
    await reply(update, text, buttons)


async def history_button(update: Update, context: BotContext) -> None:
    """A /history button: that game's record, as a file in the group it was pressed in."""
    query = update.callback_query
    press = kind_of(HistoryPress).decode(query.data)
    lang = await language_of(update, context)
    chat = query.message.chat if query.message is not None else None
    if not in_group(chat):
        await answer_query(query, t(lang, "This group remembers no such game."))
        return
    found = await context.service.memory.record_of(chat.id, press.game_id, lang)
    if isinstance(found, str):
        await answer_query(query, found, alert=True)
        return
    await answer_query(query, "")
    await _send_record(update, context, found)


async def _send_record(update: Update, context: BotContext, document: Document) -> None:
    bot, chat = update.get_bot(), update.effective_chat
    message = update.callback_query.message
    topic = message.message_thread_id if message is not None and message.is_topic_message else None
    try:
        await bot.send_document(
            chat.id,
            document=document.content.encode(),
            filename=document.filename,
            caption=document.caption,
            message_thread_id=topic,
            **answer_limits(bot, chat),
        )
    except TelegramError as error:
        log.info("a record was not delivered: %s", type(error).__name__)


async def next_game(update: Update, context: BotContext) -> None:
    """/nextgame in a group: be told in private when its next lobby opens."""
    request = await group_request(update, context)
    if request is None:
        return
    user = update.effective_user
    writable = await can_write_to(context, user.id)
    text, buttons = await context.service.memory.want_next_game(
        request.chat_id, user.id, player_of(user).name, request.lang, writable
    )
    if buttons:
        await ask(update, context, text, buttons)
    else:
        await reply(update, text)


async def forget_me(update: Update, context: BotContext) -> None:
    """/forgetme in private: after a confirmation, the person's stats and name leave every group's memory."""
    lang = await language_of(update, context)
    if in_group(update.effective_chat):
        await reply(update, t(lang, "Send /forgetme to me in private."))
        return
    text, buttons = memory_render.forget_question(lang)
    await ask(update, context, text, buttons)


async def forget_button(update: Update, context: BotContext) -> None:
    """/forgetme's answer: forgets the person who pressed, and only in their own private chat (the
    data names nobody, so a forged press can forget no one but the presser)."""
    query = update.callback_query
    press = kind_of(ForgetPress).decode(query.data)
    lang = await language_of(update, context)
    user = update.effective_user
    if query.message is None or query.message.chat.id != user.id:
        await answer_query(query, t(lang, "Send /forgetme to me in private."))
        return
    text = await context.service.memory.forget(user.id, lang) if press.confirm else memory_render.kept(lang)
    await answer_query(query, "")
    await edit_query_message(query, text)


COMMANDS = {
    "stats": stats,
    "top": top,
    "history": history,
    "nextgame": next_game,
    "forgetme": forget_me,
}

BUTTON_HANDLERS = {
    HistoryPress: history_button,
    ForgetPress: forget_button,
}
