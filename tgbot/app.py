"""Build the python-telegram-bot Application: handlers, a rate limiter shared by all workers,
storage, command menu, the deadline clock."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError
from telegram import BotCommand, Update
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    filters,
)
from telegram.request import BaseRequest

from tgbot import handlers, memory_handlers, migrate
from tgbot.buttons import kind_of
from tgbot.config import Settings
from tgbot.context import CONTEXT_TYPES
from tgbot.dataset import Dataset
from tgbot.i18n import DEFAULT_LANGUAGE, LANGUAGES, N_, supported, t
from tgbot.indexes import ClockShardsUnreachable
from tgbot.outbox import Outbox
from tgbot.ratelimit import RedisRateLimiter
from tgbot.render.common import look_alike_prototypes
from tgbot.service import RECOVERY_SECONDS, GameService
from tgbot.shared_clock import SYNC_SECONDS, SharedClock
from tgbot.store import Store

log = logging.getLogger(__name__)

# The updates the bot asks Telegram for: messages (commands, service messages), presses, and changes of
# the bot's own membership of a group (`handlers.bot_member_changed`).
ALLOWED_UPDATES = ["message", "callback_query", "my_chat_member"]

# How often each worker looks for due deadlines and outboxes left with messages.
CLOCK_SECONDS = 2.0
# While Redis does not answer, how often a worker asks again (to deliver what waits at once).
PROBE_SECONDS = 0.25
# Between ticks, how often each worker looks whether a game's clock is due (`_wake`).
WAKE_SECONDS = 0.25
# Updates that nobody waits for an answer to, held while Redis does not answer (`unattended`): at most.
HELD_UPDATES = 1000
HELD_TRIES = 3  # times one is held: an error of storage that is no outage must not repeat every tick
# At start, while Redis does not answer yet, how often a worker asks again.
START_RETRY_SECONDS = 1.0
START_REPEAT_SECONDS = 60.0  # and how often the log says it is still waiting

COMMANDS = (
    ("newgame", N_("Open a game in this group")),
    ("join", N_("Join the open game")),
    ("leave", N_("Leave the game before it starts")),
    ("startgame", N_("Start the game")),
    ("addbot", N_("Seat a computer player in the lobby")),
    ("removebot", N_("Let the last computer player go")),
    ("status", N_("Show the missions and whose turn it is")),
    ("extend", N_("More time for this step")),
    ("resume", N_("Go on with a paused game")),
    ("mygames", N_("Your games and what they wait for (in private)")),
    ("cancel", N_("End the lobby or the game")),
    ("record", N_("The last finished game's record")),
    ("history", N_("The group's last games, each with its record")),
    ("stats", N_("Your games and wins (here, or everywhere in private)")),
    ("top", N_("The group's best players by rating")),
    ("nextgame", N_("Be told in private when the next game opens here")),
    ("forgetme", N_("Take your stats and name out of every group's memory")),
    ("hints", N_("Private hints: who could the spies be?")),
    ("settings", N_("Variants, deadlines, hints, language")),
    ("language", N_("The language I speak in this group")),
    ("timezone", N_("The group's time zone, for a slow game's quiet hours")),
    ("rules", N_("How to play")),
    ("help", N_("All commands")),
)


def command_menu(lang: str) -> list[BotCommand]:
    return [BotCommand(name, t(lang, description)) for name, description in COMMANDS]


async def prepare(application: Application) -> None:
    """Once the bot knows its own username: create the game service and register the command menu.

    `run_polling` calls this as post_init; code that drives the application itself calls it
    after `initialize()`.
    """
    store: Store = application.bot_data["store"]
    outbox = Outbox(store, application.bot)
    clock = SharedClock(store.redis, application.bot_data["local_clock"])
    dataset = Dataset(store.redis, clock)
    waited_since = await _when_storage_answers(store, clock, dataset)
    if waited_since is not None:
        # Deadlines that passed while this worker waited were nobody's to meet (see `_tick`).
        application.bot_data["unreachable_since"] = waited_since + clock.offset
    application.bot_data["clock"] = clock
    application.bot_data["service"] = GameService(store, outbox, application.bot.username, clock, dataset=dataset)
    look_alike_prototypes()  # built now rather than on the first join, where it would hold up every update
    await _set_command_menu(application)
    if application.job_queue is not None and application.bot_data.get("clock_seconds"):
        # A first tick as soon as the application starts (the job queue with it), however long
        # after this: it delivers what a killed worker left queued, waiting out that worker's outbox
        # locks (see `_tick`). A one-off job, because APScheduler moves the first run of a repeating
        # job that starts late to the next interval.
        seconds = application.bot_data["clock_seconds"]
        application.bot_data["recovering"] = True
        application.job_queue.run_once(_tick, when=0, name="recovery", job_kwargs={"misfire_grace_time": None})
        application.job_queue.run_repeating(_tick, interval=seconds, first=seconds, name="deadlines")
        application.job_queue.run_repeating(_sync_clock, interval=SYNC_SECONDS, first=SYNC_SECONDS, name="clock")
        if seconds > WAKE_SECONDS:
            application.job_queue.run_repeating(_wake, interval=WAKE_SECONDS, first=WAKE_SECONDS, name="wake")


async def _set_command_menu(application: Application) -> None:
    """The command menu in every language, set at every start. Telegram keeps the menu last set, so one
    that times out or meets a flood limit (workers starting together) is left as it was: the worker starts."""
    for lang in (None, *LANGUAGES):
        try:
            if lang is None:
                await application.bot.set_my_commands(command_menu(DEFAULT_LANGUAGE))
            else:
                await application.bot.set_my_commands(command_menu(lang), language_code=lang)
        except TelegramError as error:
            log.warning("the command menu (%s) was not set: %s", lang or "default", type(error).__name__)


async def _when_storage_answers(store: Store, clock: SharedClock, dataset: Dataset) -> float | None:
    """What a worker needs of Redis before it can serve: keys of an earlier version renamed, the shared
    clock measured, the marker of Redis's data read (`tgbot.dataset`). A Redis that does not answer yet
    (started after the bot, restarting) is waited for, and asked again every `START_RETRY_SECONDS`: a worker
    that exited instead stayed down unless something started it again. Returns when the wait began, by the
    worker's own clock (None: Redis answered)."""
    waiting = False
    began = told = clock.local()
    while True:
        try:
            await migrate.legacy_keys(store.redis)
            await migrate.clock_shards(store.redis)
            await clock.sync()
            await dataset.start()
        except RedisError as error:
            # Said again now and then: a wrong address or password never answers.
            if not waiting or clock.local() - told >= START_REPEAT_SECONDS:
                log.warning("storage unavailable at start (%s): waiting for it", type(error).__name__)
                told = clock.local()
            waiting = True
            await asyncio.sleep(START_RETRY_SECONDS)
            continue
        if not waiting:
            return None
        log.info("storage answers: starting")
        return began


async def _sync_clock(context) -> None:
    """Measure this worker's offset to Redis's clock again (`tgbot.shared_clock`)."""
    try:
        await context.application.bot_data["clock"].sync()
    except RedisError as error:
        log.warning("the shared clock was not measured: storage unavailable (%s)", type(error).__name__)


async def _tick(context) -> None:
    """Fire due reminders and deadlines, and deliver what outboxes hold. Every worker ticks;
    Redis makes each deadline fire once.

    The first tick after start-up, and the first after Redis answers again, recovers: it waits
    out the outbox locks of drains that died (see `GameService.deliver_pending`). While Redis does
    not answer, a probe asks it again every `PROBE_SECONDS`, so that recovery starts at once."""
    application = context.application
    service: GameService = application.bot_data["service"]
    data = application.bot_data
    try:
        recovering = data.get("recovering", False)
        if recovering:
            # Redis answers again, perhaps a replica promoted on another machine, with a clock of its own.
            await data["clock"].sync()
        began = service.clock()
        # Word of the groups that came while storage did not answer, before the deadlines: a lobby the bot
        # was removed from is closed before its time runs out.
        for update in data.pop("held_updates", []):
            await application.process_update(update)  # (held again if storage fails again)
        await service.fire_due(
            wait=False,
            wait_for_locks=RECOVERY_SECONDS if recovering else 0.0,
            unreachable_since=data.get("unreachable_since") if recovering else None,
        )
        data["recovering"] = False
        data["reached_at"] = began  # storage answered this tick: an outage can only begin after this
        data.pop("unreachable_since", None)
    except RedisError as error:
        log.warning("deadlines skipped: storage unavailable (%s)", type(error).__name__)
        service.outbox.receipts.storage_failed()  # what it took just before may be lost with a failover
        data["recovering"] = True
        # Deadlines that pass from the last tick that reached storage on were nobody's to meet.
        if data.get("unreachable_since") is None:
            data["unreachable_since"] = data.get("reached_at")
        if context.job_queue is not None and not context.job_queue.get_jobs_by_name("storage probe"):
            context.job_queue.run_repeating(_probe, interval=PROBE_SECONDS, first=PROBE_SECONDS, name="storage probe")


async def _wake(context) -> None:
    """Between the clock's ticks: a game whose clock is due now is fired at once, not up to
    `CLOCK_SECONDS` later. Computer players act a second or so after a decision opens
    (`moves.computers`), all of a vote's within 2 s of the last person's vote. One read of the clock's
    shards every `WAKE_SECONDS`; the firing runs in a task of its own, one at a time, so this job never
    outlasts its interval. A game found due again right after (its firing failed, or found nothing to
    do) is left to the tick, as is storage that does not answer (the tick reports it and recovers)."""
    data = context.application.bot_data
    waking = data.get("waking")
    if data.get("recovering") or (waking is not None and not waking.done()):
        return
    service: GameService = data["service"]
    try:
        due = set(await service.store.due(service.clock()))
    except ClockShardsUnreachable as unreachable:
        due = set(unreachable.found)
    except RedisError:
        return
    fresh, data["woken_for"] = due - data.get("woken_for", set()), due
    if fresh:

        async def fire() -> None:
            with contextlib.suppress(RedisError, ClockShardsUnreachable, TelegramError):
                await service.fire_due(wait=False)

        data["waking"] = context.application.create_task(fire(), name="wake")


async def _probe(context) -> None:
    """While Redis does not answer: ask it again; once it answers, recover at once."""
    try:
        await context.application.bot_data["store"].redis.ping()
    except RedisError:
        return
    context.job.schedule_removal()
    log.info("storage answers again: delivering what waits")
    await _tick(context)


def unattended(update: Update) -> bool:
    """Telegram's word of a change in a group that nobody waits for an answer to, nor sends again: the
    bot's own membership changed, someone left or joined, the group renamed or upgraded."""
    if update.my_chat_member is not None:
        return True
    message = update.message
    return message is not None and bool(
        message.left_chat_member
        or message.new_chat_members
        or message.new_chat_title
        or message.migrate_to_chat_id
        or message.migrate_from_chat_id
    )


async def _on_error(update: object, context) -> None:
    """Log what failed without the update's content (it may hold a player's choice)."""
    error = context.error
    if isinstance(error, RedisError):
        log.warning("storage unavailable: %s", type(error).__name__)
        service = context.application.bot_data.get("service")
        if service is not None:  # what the outbox delivered just before may be lost with a failover
            service.outbox.receipts.storage_failed()
        if isinstance(update, Update) and unattended(update):
            # Dropped, it would leave a lobby open in a group the bot was removed from, or someone who left
            # the group seated: it is processed again once storage answers (`_tick`). Nobody asked anything.
            data = context.application.bot_data
            tries = data.get("held_tries", {})
            tries[update.update_id] = tries.get(update.update_id, 0) + 1
            data["held_tries"] = dict(list(tries.items())[-HELD_UPDATES:])
            held = data.setdefault("held_updates", [])
            if len(held) < HELD_UPDATES and tries[update.update_id] <= HELD_TRIES:
                held.append(update)
        elif isinstance(update, Update):
            await _say_unavailable(update)
        return
    update_id = update.update_id if isinstance(update, Update) else None
    log.error("update %s failed: %s", update_id, type(error).__name__, exc_info=error)


async def _say_unavailable(update: Update) -> None:
    user = update.effective_user
    text = t(
        supported(user.language_code if user else None) or DEFAULT_LANGUAGE,
        "The game is temporarily unavailable. Try again in a moment.",
    )
    try:
        if update.callback_query is not None:
            await update.callback_query.answer(text, show_alert=True)
        elif update.effective_message is not None:
            await update.effective_message.reply_text(text)
    except Exception as failure:  # the apology itself must never raise out of the error handler
        log.info("could not say the game is unavailable: %s", type(failure).__name__)


class ButtonHandler(CallbackQueryHandler):
    """Routes a press to its kind's handler by the kind's pattern. PTB hands a query without data
    to every pattern handler; here it matches no kind, so `invalid_button` answers it."""

    def check_update(self, update: object) -> bool | object | None:
        if isinstance(update, Update) and update.callback_query and not update.callback_query.data:
            return False
        return super().check_update(update)


def build_application(
    settings: Settings,
    redis: Redis,
    *,
    request: BaseRequest | None = None,
    updates_request: BaseRequest | None = None,
    rate_limited: bool = True,
    clock_seconds: float = CLOCK_SECONDS,
    local_clock: Callable[[], float] = time.monotonic,
) -> Application:
    """`rate_limited=False` is for a local fake Bot API, which has no flood limits to respect;
    `clock_seconds=0` leaves firing deadlines to the caller (tests drive the clock themselves);
    `local_clock`: the worker's own clock, of which only intervals count (`tgbot.shared_clock`)."""
    builder = (
        ApplicationBuilder()
        .token(settings.token)
        .context_types(CONTEXT_TYPES)
        .concurrent_updates(True)
        .post_init(prepare)
    )
    if rate_limited:
        builder = builder.rate_limiter(RedisRateLimiter(redis))
    if settings.api_base_url:
        builder = builder.base_url(settings.api_base_url).base_file_url(settings.api_base_file_url)
    if request is not None:
        builder = builder.request(request).get_updates_request(updates_request or request)
    application = builder.build()
    application.bot_data["store"] = Store(redis)
    application.bot_data["clock_seconds"] = clock_seconds
    application.bot_data["local_clock"] = local_clock

    commands = {
        "start": handlers.start,
        "newgame": handlers.new_game,
        "join": handlers.join,
        "leave": handlers.leave,
        "startgame": handlers.start_game,
        "addbot": handlers.add_computer,
        "removebot": handlers.remove_computer,
        "extend": handlers.extend,
        "resume": handlers.resume,
        "mygames": handlers.my_games,
        "timezone": handlers.timezone,
        "cancel": handlers.cancel,
        "status": handlers.status,
        "record": handlers.record,
        "hints": handlers.hints,
        "settings": handlers.settings,
        "language": handlers.language,
        "rules": handlers.rules,
        "help": handlers.help_command,
    }
    commands |= memory_handlers.COMMANDS
    for name, callback in commands.items():
        application.add_handler(CommandHandler(name, callback))
    # The group became a supergroup (both service messages: Telegram sends one in each chat).
    application.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, handlers.chat_migrated))
    # The bot added to a group, first or again (after someone removed it mid-game).
    application.add_handler(MessageHandler(filters.StatusUpdate.NEW_CHAT_MEMBERS, handlers.bot_added))
    application.add_handler(MessageHandler(filters.StatusUpdate.CHAT_CREATED, handlers.group_created))
    application.add_handler(MessageHandler(filters.StatusUpdate.NEW_CHAT_TITLE, handlers.group_renamed))
    # Someone left the group, or was removed from it: a seat in its open lobby is given up.
    application.add_handler(MessageHandler(filters.StatusUpdate.LEFT_CHAT_MEMBER, handlers.member_left))
    # Any other command in private (the commands above took theirs): a typo gets an answer, not silence.
    application.add_handler(MessageHandler(filters.COMMAND & filters.ChatType.PRIVATE, handlers.unknown_command))
    application.add_handler(MessageHandler(filters.TEXT & filters.ChatType.PRIVATE, handlers.private_text))
    # The bot's own rights in a group changed (an admin let it post again).
    application.add_handler(ChatMemberHandler(handlers.bot_member_changed, ChatMemberHandler.MY_CHAT_MEMBER))
    for press, callback in (handlers.BUTTON_HANDLERS | memory_handlers.BUTTON_HANDLERS).items():
        application.add_handler(ButtonHandler(callback, pattern=kind_of(press).pattern))
    application.add_handler(CallbackQueryHandler(handlers.invalid_button))
    application.add_error_handler(_on_error)
    return application
