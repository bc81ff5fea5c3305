"""The bot's use cases: load the game, apply a move, store it atomically, deliver its messages.

Handlers call these with plain values parsed from an update; nothing here touches an
`Update`. Each method returns the `Reply` for the person who acted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import replace

from redis.exceptions import RedisError
from telegram.error import TelegramError

from engine import Variants, export_record
from tgbot import keys, once, zones
from tgbot.buttons import (
    CancelPress,
    CardPress,
    ComputerPress,
    MissionPress,
    PlotPress,
    TeamPress,
    VotePress,
    WaitingPress,
)
from tgbot.changes import Change, Refused, Reply
from tgbot.chat_move import move_chat
from tgbot.dataset import Dataset
from tgbot.hints import hints_text
from tgbot.i18n import DEFAULT_LANGUAGE, N_, t
from tgbot.indexes import CLOCK_PATIENCE_SECONDS, ClockShardsUnreachable
from tgbot.memory_service import MemoryService
from tgbot.moves import absence, clock, computers, lobby, pace, play
from tgbot.moves import plot as plot_moves
from tgbot.moves.lobby import NOT_ALLOWED_TO_CONFIGURE, SETTINGS_BETWEEN_GAMES, settings_refusal
from tgbot.outbox import LOCK_SECONDS, Outbox, drain_quietly
from tgbot.outgoing import Document, Edit, Keyboard, Send
from tgbot.render import board, menus
from tgbot.render import hints as hints_render
from tgbot.render import mygames as mygames_render
from tgbot.settings import GroupSettings
from tgbot.store import FINISHED_GAME_SECONDS, ActiveGame, ChatBusy, DamagedGame, GameGone, Store
from tgbot.table import Player, Stage, Table

log = logging.getLogger(__name__)

# How long a recovering worker waits for the outbox locks of drains that died to lapse.
RECOVERY_SECONDS = LOCK_SECONDS + 1

NO_SUCH_GAME = N_("There is no such game here any more: ask the group for a new link.")
# A game Redis lost with the rest of its data (`tgbot.dataset`): never "over", which it was not.
LOST_GAME = N_("This game was lost: the bot's storage was emptied. Start a new one in the group with /newgame.")


def finished_record(table: Table) -> str | None:
    """The record kept for /record: only games that were played to their end."""
    if table.stage is not Stage.OVER or table.game is None:
        return None
    return json.dumps(export_record(table.game, table.id))


class GameService:
    def __init__(
        self,
        store: Store,
        outbox: Outbox,
        bot_username: str,
        clock: Callable[[], float],
        rng: random.Random | None = None,
        deliver_in_background: bool = False,
        dataset: Dataset | None = None,
    ) -> None:
        self.store = store
        self.outbox = outbox
        self.bot_username = bot_username
        # Seconds since the epoch by the clock every worker shares (`tgbot.shared_clock`): deadlines
        # are stamped by one worker and fired by another. Tests set their own.
        self.clock = clock
        # A game's end is stamped by the same clock (its place in the group's history).
        store.wall_clock = lambda: self.clock()
        self.memory = MemoryService(store, bot_username)
        self.rng = rng if rng is not None else random.SystemRandom()
        self._draining: dict[str, asyncio.Task] = {}  # games whose outbox a task of ours drains now
        # Webhook mode (`webhook.serve` sets it): a change's messages go out in a task of their own,
        # so that Telegram is answered as soon as the change is stored and the person answered.
        self.deliver_in_background = deliver_in_background
        self._deliveries: set[asyncio.Task] = set()
        self._waiting_answers: set[Hashable] = set()  # answers that must arrive, waiting for their turn
        # Whether Redis still holds what was stored (`tgbot.dataset`); read at start by `tgbot.app.prepare`.
        self.dataset = dataset if dataset is not None else Dataset(store.redis, lambda: self.clock())

    async def _apply(self, game_id: str, mutate: Callable[[Table], Change]) -> Reply:
        processing = once.current.get()

        def change_of(table: Table) -> Change:
            # The time as the move is worked out, right before its write: a step it opens has its whole
            # time however long the read before took (Redis busy or failing over, writers racing).
            return clock.settled(mutate(table), self.clock(), self.rng)

        try:
            change = await self.store.update(
                game_id,
                change_of if processing is None else processing.guard(game_id, change_of),
                record=finished_record,
            )
        except Refused as refused:
            return refused.reply
        except once.AlreadyApplied:
            # A worker stored this update's change and died before it could say so; Telegram delivered it again.
            log.info("game %s: update %s was applied already; not again", game_id, processing.update_id)
            answer = await processing.answered(self.store.redis, game_id)
            return replace(answer, deliver_for=game_id)
        log.info("game %s: stored (%d messages queued)", game_id, len(change.outgoing))
        if processing is not None:
            await processing.remember(self.store.redis, game_id, change.reply)
        return replace(change.reply or Reply(""), deliver_for=game_id if change.outgoing else None)

    async def deliver(self, reply: Reply | None) -> None:
        """Send what the change behind `reply` queued; call it after answering the person who acted."""
        if reply is not None and reply.deliver_for:
            await self._send_queued(reply.deliver_for)

    async def _send_queued(self, game_id: str) -> None:
        """Drain the game's outbox: at once, or in webhook mode in a task of its own (what it has not
        sent if the worker dies stays queued, and the clock of any worker sends it)."""
        if not self.deliver_in_background:
            await drain_quietly(self.outbox, game_id)
            return
        task = asyncio.create_task(drain_quietly(self.outbox, game_id), name=f"deliver {game_id}")
        self._deliveries.add(task)
        task.add_done_callback(self._delivered)

    async def answer_in_turn(self, key: Hashable, send: Callable[[], Awaitable[None]]) -> None:
        """Send an answer that must arrive (it carries buttons someone has to press), which may wait long
        for a busy group's flood limits: in webhook mode in a task of its own, like a change's messages, so
        that Telegram is answered meanwhile. An answer of the same `key` (the same text and buttons for the
        same chat) still waiting is not sent a second time: the one on its way says it already."""
        if key in self._waiting_answers:
            return
        self._waiting_answers.add(key)

        async def answer() -> None:
            try:
                await send()
            finally:
                self._waiting_answers.discard(key)

        if not self.deliver_in_background:
            await answer()
            return
        task = asyncio.create_task(answer(), name="answer")
        self._deliveries.add(task)
        task.add_done_callback(self._delivered)

    def _delivered(self, task: asyncio.Task) -> None:
        self._deliveries.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed", task.get_name(), exc_info=task.exception())

    async def finish_deliveries(self, timeout: float | None = None) -> int:
        """Wait for the messages being sent in the background (at shutdown). Deliveries still running
        after `timeout` seconds are stopped, their messages left queued for a clock (an answer still
        waiting for its turn is not sent); returns how many."""
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        while self._deliveries:
            remaining = None if deadline is None else max(0.0, deadline - asyncio.get_running_loop().time())
            _, running = await asyncio.wait(set(self._deliveries), timeout=remaining)
            if running and deadline is not None and asyncio.get_running_loop().time() >= deadline:
                for task in running:
                    task.cancel()
                await asyncio.gather(*running, return_exceptions=True)
                return len(running)
        return 0

    # ---------------------------------------------------------------- lobby

    async def open_lobby(
        self,
        chat_id: int,
        chat_title: str,
        host: Player,
        lang: str,
        variants: Variants | None = None,
        players: tuple[Player, ...] = (),
        rematch: bool = False,
        topic: int | None = None,
        first_language: str | None = None,
    ) -> Reply | None:
        """Open a lobby with the group's settings (the variants named with /newgame on top), in the
        group's forum `topic` if it was asked for in one.

        The group's language is set by whoever opens its first lobby: `first_language`, their own
        (English if the bot does not speak it: `lang`, the language they are answered in, may be that
        of a game they play in another group); `lang` if not given. Returns None when the lobby
        opened: its message says it all.
        """
        first = first_language or lang
        _, settings = await self.store.update_settings(
            chat_id, lambda current: current if current.language else replace(current, language=first)
        )
        game_id = Table.new_id()
        change = lobby.open_lobby(
            game_id, chat_id, chat_title, host, settings, self.bot_username, players, rematch, topic, variants
        )
        try:
            await self.store.create(clock.settled(change, self.clock(), self.rng))
        except ChatBusy:
            # The group's pointer may name a game that is over, or that was never written (its
            # lookups were left behind: `game_of_chat` lets them go), or one whose stored state is
            # damaged (ending it frees the group).
            current = await self._table_of_chat(chat_id)
            if current is not None:
                return _busy_answer(current, host.user_id, lang, variants)
            try:
                await self.store.create(clock.settled(change, self.clock(), self.rng))
            except ChatBusy:
                return _busy_answer(None, host.user_id, lang)
        log.info("game %s: lobby opened", game_id)
        await self._send_queued(game_id)
        seated = {player.user_id for player in players}
        if await self.memory.lobby_opened(game_id, chat_id, chat_title, seated, settings.language or lang):
            await self._send_queued(game_id)
        return None

    async def rematch(
        self,
        game_id: str,
        user_id: int,
        chat_id: int | None,
        lang: str,
        can_still_play: Callable[[int, int], Awaitable[bool]] | None = None,
        chat_title: str | None = None,
    ) -> Reply:
        """Play again: a new lobby in the same group with the same players already seated, but for
        those who left the group or blocked the bot since (`can_still_play(group, user)` asks
        Telegram): they could not see the boards they would vote on, or get their role and cards.
        `chat_title`: the group's title as the press shows it now (it may have been renamed since
        the game ended)."""
        finished = await self._load(game_id)
        if finished is None:
            # Its Play again button outlives it: a finished game is kept `tgbot.store.FINISHED_GAME_SECONDS`.
            return Reply(t(lang, "This game is no longer kept: start a new one with /newgame."))
        if not finished.in_group(chat_id):
            return Reply(t(lang, "This button is not valid here."))
        if finished.stage is Stage.CANCELLED:
            return Reply(t(lang, "This button is not valid."))  # a cancelled game never shows Play again
        if finished.stage is not Stage.OVER:
            return Reply(t(lang, "This game is not over yet."))
        if finished.seat_of(user_id) is None:
            return Reply(t(lang, "Only the players of that game can start a rematch."))
        host = finished.players[finished.seat_of(user_id)]
        # A game that ended in a basic group since upgraded to a supergroup: the new lobby is the supergroup's.
        chat_id = await self.chat_now(finished.chat_id)
        title, players = chat_title or finished.chat_title, finished.players
        if can_still_play is not None:
            people = [p for p in players if not p.computer and p.user_id != user_id]
            stayed = await asyncio.gather(*(can_still_play(chat_id, p.user_id) for p in people))
            gone = {p.user_id for p, member in zip(people, stayed, strict=True) if not member}
            players = tuple(p for p in players if p.user_id not in gone)
        # In the topic the last game was played in (a basic group since upgraded had none).
        topic = finished.topic if chat_id == finished.chat_id else None
        # The variants its players chose with /newgame stay chosen; the group's settings are followed as they are now.
        refusal = await self.open_lobby(
            chat_id, title, host, lang, finished.named_variants, players=players, rematch=True, topic=topic
        )
        if refusal is not None:
            return refusal
        if len(players) < len(finished.players):
            return Reply(
                t(
                    lang,
                    "A new game is open with the same players, but for those who left the group or whom I "
                    "can no longer write to in private.",
                )
            )
        return Reply(t(lang, "A new game is open with the same players."))

    async def join(
        self,
        game_id: str,
        player: Player,
        lang: str,
        is_member_of: Callable[[int], Awaitable[bool]] | None = None,
    ) -> Reply:
        """Take a seat from a Join link, or with /join (`is_member_of` None: sent in the group, by one
        of its members). `is_member_of(chat_id)` asks Telegram whether the player is in the game's
        group: only its members see the boards they vote on. A link to a game that is not stored
        (never was, or was forgotten) gets a way forward, not "This game is over"."""
        member = True
        if is_member_of is not None:
            table = await self._load(game_id)
            member = table is None or await is_member_of(table.chat_id)
        return await self._in_game(
            game_id,
            lang,
            lambda table: lobby.join(table, player, lang, self.bot_username, member, by_link=is_member_of is not None),
            gone=NO_SUCH_GAME,
        )

    async def leave(self, chat_id: int, user_id: int, lang: str) -> Reply:
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return Reply(t(lang, "No game is open here."))
        return await self._in_game(
            game_id, lang, lambda table: lobby.leave(table, user_id, lang, self.bot_username), chat_id=chat_id
        )

    async def seated_in_lobby(self, chat_id: int, user_id: int) -> bool:
        """Whether the user holds a seat in the group's open lobby (what `left_group` gives up)."""
        table = await self._table_of_chat(chat_id)
        return table is not None and table.stage is Stage.LOBBY and table.seat_of(user_id) is not None

    async def left_group(self, chat_id: int, user_id: int) -> Reply | None:
        """The user left the group (or was removed from it): their seat in its open lobby is given up."""
        return await self._on_membership(chat_id, lambda table: lobby.left_group(table, user_id, self.bot_username))

    async def bot_removed(self, chat_id: int) -> Reply | None:
        """The bot is no longer in the group (removed from it, or the group deleted): its open lobby is
        closed, and whoever sat in it told in private. A running game goes on by its deadlines."""
        # (A damaged game is ended without a word to the group: the bot is not in it.)
        return await self._on_membership(chat_id, lambda table: lobby.bot_removed(table, chat_id), tell_group=False)

    async def _on_membership(self, chat_id: int, mutate, tell_group: bool = True) -> Reply | None:
        """A change of who is in the group, applied to its game if it has one (None when there is none).
        `tell_group`: whether the group is told if the game's stored state is damaged."""
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return None
        return await self._in_game(game_id, DEFAULT_LANGUAGE, mutate, chat_id=chat_id if tell_group else None)

    async def start_game(self, chat_id: int, user_id: int, is_admin: bool, lang: str) -> Reply:
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return Reply(t(lang, "No game is open here. Start one with /newgame."))
        # One draw of randomness per attempt, outside the retried transaction.
        seed = self.rng.getrandbits(64)
        return await self._in_game(
            game_id,
            lang,
            lambda table: lobby.start_game(table, user_id, is_admin, lang, random.Random(seed), self.bot_username),
            chat_id=chat_id,
        )

    async def seat_computer(self, chat_id: int, user_id: int, is_admin: bool, lang: str, add: bool) -> Reply:
        """/addbot, /removebot: a computer player takes a seat in the group's lobby, or the one seated last leaves."""
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return Reply(t(lang, "No game is open here. Start one with /newgame."))
        move = computers.add if add else computers.remove
        return await self._in_game(
            game_id, lang, lambda table: move(table, user_id, is_admin, lang, self.bot_username), chat_id=chat_id
        )

    async def ask_cancel(self, chat_id: int, user_id: int, is_admin: bool, lang: str) -> Reply:
        table = await self._table_of_chat(chat_id)
        if table is None:
            return Reply(t(lang, "There is no game to cancel."))
        try:
            return lobby.ask_cancel(table, user_id, is_admin, lang)
        except Refused as refused:
            return refused.reply

    # ---------------------------------------------------------------- presses

    async def vote(self, press: VotePress, user_id: int, chat_id: int | None, lang: str) -> Reply:
        return await self._turn(
            press, chat_id, user_id, lang, lambda table: play.vote(table, user_id, press, lang, self.bot_username)
        )

    async def play_card(self, press: CardPress, user_id: int, chat_id: int | None, lang: str) -> Reply:
        return await self._turn(
            press, chat_id, user_id, lang, lambda table: play.play_card(table, user_id, press, lang, self.bot_username)
        )

    async def pick_team_member(self, press: TeamPress, user_id: int, chat_id: int | None, lang: str) -> Reply:
        return await self._turn(
            press,
            chat_id,
            user_id,
            lang,
            lambda table: play.pick_team_member(table, user_id, press, lang, self.bot_username),
        )

    async def pick_mission(self, press: MissionPress, user_id: int, chat_id: int | None, lang: str) -> Reply:
        return await self._turn(
            press,
            chat_id,
            user_id,
            lang,
            lambda table: play.pick_mission(table, user_id, press, lang, self.bot_username),
        )

    async def plot_choice(self, press: PlotPress, user_id: int, chat_id: int | None, lang: str) -> Reply:
        return await self._turn(
            press,
            chat_id,
            user_id,
            lang,
            lambda table: plot_moves.press(table, user_id, press, lang, self.bot_username),
        )

    async def _turn(
        self, press, chat_id: int | None, user_id: int, lang: str, move: Callable[[Table], Change]
    ) -> Reply:
        """A press for one of the presser's own turns: a vote, a card, the leader's choice, a Plot
        card. What comes next to them privately comes in the language they pressed in."""
        return await self._press(
            press,
            chat_id,
            user_id,
            lang,
            lambda table: pace.pressed(
                table.speaking(user_id, lang), user_id, lambda current: absence.taken_back(current, user_id, lang, move)
            ),
        )

    async def cancel(
        self,
        press: CancelPress,
        user_id: int,
        chat_id: int | None,
        lang: str,
        is_admin_in: Callable[[int], Awaitable[bool]],
    ) -> Reply:
        return await self._host_press(
            press,
            user_id,
            chat_id,
            lang,
            is_admin_in,
            lambda table, admin: lobby.cancel(table, user_id, admin, press, lang, self.bot_username),
        )

    async def computer_button(
        self,
        press: ComputerPress,
        user_id: int,
        chat_id: int | None,
        lang: str,
        is_admin_in: Callable[[int], Awaitable[bool]],
    ) -> Reply:
        move = computers.add if press.add else computers.remove
        return await self._host_press(
            press,
            user_id,
            chat_id,
            lang,
            is_admin_in,
            lambda table, admin: move(table, user_id, admin, lang, self.bot_username),
        )

    async def _host_press(
        self,
        press,
        user_id: int,
        chat_id: int | None,
        lang: str,
        is_admin_in: Callable[[int], Awaitable[bool]],
        move: Callable[[Table, bool], Change],
    ) -> Reply:
        """A press only whoever opened the game or an admin of its group may make. `is_admin_in(chat_id)`
        asks Telegram, and only for the game's own group."""
        table = await self._load(press.game_id)
        # Pressed anywhere but the game's group, the press is refused below: no need to ask Telegram.
        is_admin = table is not None and table.in_group(chat_id) and await is_admin_in(table.chat_id)
        return await self._press(press, chat_id, user_id, lang, lambda table: move(table, is_admin))

    async def waiting(self, press: WaitingPress, user_id: int, chat_id: int | None, lang: str) -> Reply:
        """Who the game waits for, answered to the presser alone: nothing is stored or sent."""
        table = await self._load(press.game_id, chat_id)
        if table is None:
            return Reply(t(lang, await self._gone(press.game_id, N_("This button belongs to a game that is over."))))
        try:
            play.require_pressed_in_place(table, press, chat_id, user_id, lang)
        except Refused as refused:
            return refused.reply
        if table.is_paused and pace.is_seated_person(table, user_id):
            # A press of a seated person starts a paused game again, this one too.
            await self.deliver(
                await self._press(press, chat_id, user_id, lang, lambda current: pace.pressed(current, user_id, Change))
            )
            table = await self._load(press.game_id, chat_id) or table
        return play.waiting(table, press, lang)

    async def _press(
        self, press, chat_id: int | None, user_id: int, lang: str, move: Callable[[Table], Change]
    ) -> Reply:
        """Apply a button press made on a message in `chat_id`, once it is checked to belong there."""

        def mutate(table: Table) -> Change:
            play.require_pressed_in_place(table, press, chat_id, user_id, lang)
            return move(table)

        return await self._in_game(
            press.game_id, lang, mutate, gone=N_("This button belongs to a game that is over."), chat_id=chat_id
        )

    async def _in_game(
        self, game_id: str, lang: str, mutate, gone: str = N_("This game is over."), chat_id: int | None = None
    ) -> Reply:
        """Apply `mutate` to the game; `chat_id` is where the request came from, if known (a game
        whose stored state is damaged is ended, and that chat told if it is the game's group)."""
        try:
            return await self._apply(game_id, mutate)
        except GameGone:
            return Reply(t(lang, await self._gone(game_id, gone)))
        except DamagedGame as damage:
            await self._end_damaged(damage, chat_id)
            return Reply(t(lang, gone))

    # ---------------------------------------------------------------- pace

    async def extend(self, chat_id: int, user_id: int, lang: str) -> Reply:
        """/extend in the group: more time for the step the group's game is in (`moves.clock.extend`)."""
        return await self._group_game(chat_id, lang, lambda table: clock.extend(table, user_id, lang, self.clock()))

    async def resume(self, chat_id: int, user_id: int, lang: str) -> Reply:
        """/resume in the group: a paused game goes on (`moves.pace.resume`)."""
        return await self._group_game(chat_id, lang, lambda table: pace.resume(table, user_id, lang))

    async def _group_game(self, chat_id: int, lang: str, mutate: Callable[[Table], Change]) -> Reply:
        table = await self._table_of_chat(chat_id)
        if table is None or table.stage is not Stage.PLAYING:
            return Reply(t(lang, "No game is running in this group."))
        return await self._in_game(table.id, lang, mutate, chat_id=chat_id)

    # ---------------------------------------------------------------- the clock

    async def fire_due(
        self,
        now: float | None = None,
        *,
        wait: bool = True,
        wait_for_locks: float = 0.0,
        unreachable_since: float | None = None,
    ) -> int:
        """Run every reminder and deadline that is due, then deliver every outbox that holds
        messages; safe to call from several workers at once. `wait=False` returns without waiting
        for the deliveries (the clock's tick must not wait for a group's flood limit);
        `wait_for_locks`: see `deliver_pending`. `now`: fire as of that time; by default the clock's,
        read again for each game (`_fire`). `unreachable_since`: Redis answers again after an outage
        that began then; a deadline that passed since gives its step back the time it had left
        (`moves.clock.resumed`)."""
        fired = 0
        # A shard of the clock that does not answer holds up only its own games (`tgbot.indexes`): the
        # others' deadlines fire, and the outage is reported once they have.
        silent: ClockShardsUnreachable | None = None
        with contextlib.suppress(RedisError, TimeoutError):  # the marker's master down: looked at next tick
            async with asyncio.timeout(CLOCK_PATIENCE_SECONDS):
                await self.notice_lost_storage()
        await self.store.settle_owed()
        if self.outbox.receipts.doubted:
            await self.outbox.receipts.audit()
        try:
            due = await self.store.due(self.clock() if now is None else now)
        except ClockShardsUnreachable as unreachable:
            due, silent = unreachable.found, unreachable
        for game_id in due:
            seed = self.rng.getrandbits(64)
            try:
                fired += await self._fire(game_id, now, seed, unreachable_since)
            except (RedisError, TelegramError):
                raise
            except Exception:
                # One broken game must not hold up every other game's deadlines.
                log.exception("game %s: the clock failed on it", game_id)
        # What the deadlines just queued, and what a crashed worker or an unreachable Telegram left behind.
        try:
            deliveries = await self.deliver_pending(wait_for_locks=wait_for_locks)
        except ClockShardsUnreachable as unreachable:
            deliveries, silent = unreachable.found, silent or unreachable
        if wait:
            await asyncio.gather(*deliveries)
        if silent is not None:
            raise silent
        return fired

    async def deliver_pending(self, *, wait_for_locks: float = 0.0) -> list[asyncio.Task]:
        """Drain every outbox that holds messages, each game in a task of its own (one group's
        flood limit holds up no other group), unless a task of ours drains it already.

        `wait_for_locks` > 0 (at start-up, and when Redis answers again after an outage; the clock
        passes `RECOVERY_SECONDS`): a game whose outbox lock another drain holds is tried again as
        soon as that lock lapses, for up to that many seconds, so a lock left by a drain that died
        (a killed worker's, one an outage cut off) holds nothing up for longer than it lives
        (`LOCK_SECONDS`); a live drain keeps renewing its lock and delivers it all."""
        try:
            pending, silent = await self.store.pending_outboxes(), None
        except ClockShardsUnreachable as unreachable:
            pending, silent = unreachable.found, unreachable
        tasks = []
        for game_id in pending:
            task = self._draining.get(game_id)
            if task is None:
                task = asyncio.create_task(self._drain_when_free(game_id, wait_for_locks))
                self._draining[game_id] = task
                task.add_done_callback(lambda _, game_id=game_id: self._draining.pop(game_id, None))
            tasks.append(task)
        if silent is not None:
            raise ClockShardsUnreachable(silent.shards, tasks)
        return tasks

    async def _drain_when_free(self, game_id: str, wait_for_locks: float) -> None:
        give_up = time.monotonic() + wait_for_locks
        try:
            while not await drain_quietly(self.outbox, game_id):
                left = give_up - time.monotonic()
                if left <= 0:
                    return  # the drain holding the lock delivers what is queued
                lapses_in = await self.outbox.pending_lock_ms(game_id) / 1000
                await asyncio.sleep(min(left, lapses_in + 0.01))
        except RedisError as error:
            log.warning("game %s: outbox not drained: storage unavailable (%s)", game_id, type(error).__name__)
        except Exception:
            log.exception("game %s: draining its outbox failed", game_id)

    async def _fire(self, game_id: str, now: float | None, seed: int, unreachable_since: float | None = None) -> int:
        """Run one game's due reminder or deadline; 1 if it did something (its messages are
        delivered with every other pending outbox). `now`: the time to fire at; None for the clock's
        as the move is worked out, so that a step a deadline opens has its whole time however long
        the tick took to get to it (the games before it, Redis busy or failing over)."""

        def fired(table: Table) -> Change:
            at = self.clock() if now is None else now
            return clock.settled(
                clock.on_clock(table, at, random.Random(seed), self.bot_username, unreachable_since),
                at,
                random.Random(seed + 1),
            )

        try:
            change = await self.store.update(
                game_id,
                fired,
                record=finished_record,
                settle_deadline=True,
            )
        except GameGone:
            await self.store.forget_deadline(game_id)
            return 0
        except DamagedGame as damage:
            return int(await self._end_damaged(damage))
        if not change.outgoing:
            return 0
        log.info("game %s: clock fired", game_id)
        return 1

    # ---------------------------------------------------------------- Redis that lost its data

    async def notice_lost_storage(self) -> int:
        """If Redis lost what it held since the last look (`tgbot.dataset`), tell each group whose game
        this worker saw open or running, once however many workers saw it; returns how many it told."""
        if not await self.dataset.check():
            return 0
        log.warning("storage came back without its data: the games, lobbies and records it held are gone")
        told = 0
        for game_id, seen in self.store.forget_active().items():
            told += await self._tell_lost(game_id, seen)
        return told

    async def _gone(self, game_id: str, gone: str) -> str:
        """What to answer about a game that is not stored: `gone` (it ended and was forgotten, or never
        was), unless Redis lost it. A game this worker saw open or running and that nothing ended (a
        damaged game is set aside) was lost with Redis's data, on one master of a cluster too: its group
        is told, once."""
        seen = self.store.remembered_active(game_id)
        if seen is not None and not await self.store.was_damaged(game_id):
            self.store.forget_active_game(game_id)
            await self._tell_lost(game_id, seen)
            return LOST_GAME
        if self.dataset.lost_within(FINISHED_GAME_SECONDS) or await self.store.was_lost(game_id):
            return LOST_GAME
        return gone

    async def _tell_lost(self, game_id: str, seen: ActiveGame) -> bool:
        if not await self.store.lost_mark(game_id):
            return False  # another worker told the group
        log.info("game %s: lost with the storage's data; its group is told", game_id)
        notice = Send(seen.chat_id, board.storage_lost(seen.language, seen.lobby), topic=seen.topic)
        await self.store.enqueue(game_id, [notice])
        await self._send_queued(game_id)
        return True

    # ---------------------------------------------------------------- damaged games

    async def _end_damaged(self, damage: DamagedGame, chat_id: int | None = None) -> bool:
        """End a game whose stored state cannot be read back, and tell its group once.

        Only this game stops: the group may open a new one at once, and every other game goes
        on. The log names the game and the kind of damage, never the document (it holds the
        roles). True if this call ended it (another worker may have got there first).
        """
        ended = await self.store.end_damaged(damage.game_id, _damaged_notice, chat_id)
        if ended is None:
            return False
        log.error(
            "game %s: its stored state cannot be read back (%s); the game was ended and its document set aside as %s",
            damage.game_id,
            damage.kind,
            keys.damaged(damage.game_id),
        )
        if ended.told_chat_id is not None:
            await self._send_queued(damage.game_id)
        return True

    async def _load(self, game_id: str, chat_id: int | None = None) -> Table | None:
        """The stored table; None if there is none, or if it was damaged (and has now been ended)."""
        try:
            return await self.store.load(game_id)
        except DamagedGame as damage:
            await self._end_damaged(damage, chat_id)
            return None

    async def _tables_of_user(self, user_id: int) -> list[Table]:
        """The open or running tables the user sits in; a damaged one is ended (and left out)."""
        tables = []
        for game_id, table in await self.store.tables_of_user(user_id):
            if table is None:
                table = await self._load(game_id)  # ends it
            if table is not None:
                tables.append(table)
        return tables

    async def _table_of_chat(self, chat_id: int) -> Table | None:
        """The group's open or running table; None if there is none, or if it was damaged (and has
        now been ended)."""
        try:
            return await self.store.table_of_chat(chat_id)
        except DamagedGame as damage:
            await self._end_damaged(damage, chat_id)
            return None

    # ---------------------------------------------------------------- group settings

    async def may_close_settings(self, chat_id: int, user_id: int, is_admin: bool) -> bool:
        """Whether `user_id` may close a /settings keyboard: whoever may change the settings, and whoever
        opened the game running now (they were shown the keyboard in its lobby)."""
        table = await self._table_of_chat(chat_id)
        return settings_refusal(table, user_id, is_admin) != NOT_ALLOWED_TO_CONFIGURE

    async def configure_refusal(self, chat_id: int, user_id: int, is_admin: bool, lang: str) -> str | None:
        """Why `/settings` or `/language` offers no keyboard (`lobby.settings_refusal`), translated; None:
        it may."""
        refusal = settings_refusal(await self._table_of_chat(chat_id), user_id, is_admin)
        return None if refusal is None else t(lang, refusal)

    async def settings_of(self, chat_id: int, is_admin: bool) -> GroupSettings:
        """The settings `/settings` shows: the group's to an admin; to whoever opened the open lobby,
        who changes that lobby's alone (`change_settings`), the lobby's (and once it has started, its
        game's)."""
        if not is_admin:
            table = await self._table_of_chat(chat_id)
            if table is not None and table.stage in (Stage.LOBBY, Stage.PLAYING):
                return table.settings
        return await self.store.settings(chat_id)

    async def change_settings(
        self,
        chat_id: int,
        user_id: int,
        is_admin: bool,
        lang: str,
        change: Callable[[GroupSettings], GroupSettings],
        setting: str,
    ) -> tuple[GroupSettings | None, Reply]:
        """Change the group's settings between games; an open lobby follows them in the `setting` an
        admin's press names (what whoever opened it chose for its game in the others stays). Whoever
        opened the open lobby, not an admin, changes that lobby's settings alone: the group's outlive
        the lobby."""
        table = await self._table_of_chat(chat_id)
        refusal = settings_refusal(table, user_id, is_admin)
        if refusal is not None:
            return None, Reply(t(lang, refusal))
        if not is_admin:
            answer = await self._in_game(
                table.id, lang, lambda current: lobby.host_settings(current, user_id, change, lang, self.bot_username)
            )
            await self.deliver(answer)
            changed = await self._load(table.id)
            if answer.text or changed is None or changed.stage is not Stage.LOBBY:
                return None, Reply(answer.text or t(lang, SETTINGS_BETWEEN_GAMES))
            kept = lobby.named_kept_on(changed, changed.settings, change(changed.settings))
            return changed.settings, Reply(board.kept_on_note(kept, lang))
        before, settings = await self.store.update_settings(chat_id, change)
        if table is None:
            return settings, Reply("")
        await self._lobby_follows(table.id, chat_id, frozenset({setting}))
        return settings, Reply(board.kept_on_note(lobby.named_kept_on(table, before, settings), lang))

    async def set_timezone(self, chat_id: int, user_id: int, is_admin: bool, lang: str, typed: list[str]) -> str:
        """/timezone NAME: the group's time zone (`tgbot.zones`); the answer says what it is now."""
        name = zones.normalized(" ".join(typed))
        if name is None:
            return t(
                lang, "I do not know that time zone. Try a city's zone, like Europe/Madrid, or an offset, like UTC+3."
            )
        settings, answer = await self.change_settings(
            chat_id, user_id, is_admin, lang, lambda current: replace(current, timezone=name), "timezone"
        )
        if settings is None:
            return answer.text
        return "\n".join(filter(None, [menus.timezone_text(settings, lang), answer.text]))

    async def _lobby_follows(self, game_id: str, chat_id: int, changed: frozenset[str]) -> None:
        """Bring the open lobby to the group's stored settings in those an admin just `changed` (what
        whoever opened the lobby chose for its game in the others stays). Two quick changes may apply
        in either order; whichever finishes last looks again, so the lobby ends on the latest."""
        for _ in range(5):
            settings = await self.store.settings(chat_id)
            await self.deliver(
                await self._apply(
                    game_id,
                    lambda current, settings=settings: lobby.follow_settings(
                        current, settings, self.bot_username, changed
                    ),
                )
            )
            if await self.store.settings(chat_id) == settings:
                return

    async def chat_moved(self, old_chat_id: int, new_chat_id: int) -> None:
        """Telegram upgraded the group `old_chat_id` to the supergroup `new_chat_id`: its settings and
        its game go on there (`tgbot.chat_move`). Told as often as Telegram says it, in any order."""
        await move_chat(self.store, old_chat_id, new_chat_id)

    async def chat_now(self, chat_id: int) -> int:
        """A basic group's chat id now: the supergroup's, if Telegram upgraded it (`tgbot.chat_move`)."""
        return await self.store.indexes.chat_now(chat_id)

    # ---------------------------------------------------------------- hints

    async def hints(self, user_id: int, lang: str, game_id: str | None = None) -> tuple[str, Keyboard]:
        """Hints for one of the player's running games (a choice of game when there are several)."""
        text, buttons, _ = await self._hints(user_id, lang, game_id)
        return text, buttons

    async def _hints(self, user_id: int, lang: str, game_id: str | None = None) -> tuple[str, Keyboard, bool]:
        """`hints`, and whether the answer is about a game the user plays (only they may see it): the
        answer that they play none may be told where they asked."""
        if game_id is not None:
            named = await self._load(game_id)
            if named is None:
                return t(lang, await self._gone(game_id, N_("This game is over."))), (), False
            if not named.is_active:
                # A Hints button outlives its game; its player may well be in another one now.
                return t(lang, "This game is over."), (), False
            tables = [named]
        else:
            tables = await self._tables_of_user(user_id)
        playing = [
            t_ for t_ in tables if t_ is not None and t_.stage is Stage.PLAYING and t_.seat_of(user_id) is not None
        ]
        if not playing:
            return t(lang, "You are not in a running game. Hints come once a game has started."), (), False
        if len(playing) > 1:
            return *hints_render.choose_game(playing, user_id, lang), True
        table = playing[0]
        if not table.settings.hints:
            return hints_render.hints_off(table, lang), (), True
        return hints_text(table, table.seat_of(user_id)), (), True

    async def hints_asked_in(self, chat_id: int, user_id: int, lang: str) -> tuple[str, Keyboard, bool]:
        """Hints asked for in a group: for its running game, if the user plays it; else as in private.
        The last item says whether the answer is the user's alone (it goes to private): whether they
        play was decided as the hints were worked out, so that a game ending or cancelled meanwhile
        cannot turn them into an answer for the group."""
        table = await self._table_of_chat(chat_id)
        if table is not None and table.stage is Stage.PLAYING and table.seat_of(user_id) is not None:
            return await self._hints(user_id, lang, table.id)
        return await self._hints(user_id, lang)

    # ---------------------------------------------------------------- looking

    async def fallback_language(self, group_id: int | None, game_id: str | None, user_id: int | None) -> str:
        """The language for someone whose own the bot does not speak: their game's, their
        group's (its open or running game's, which the group is spoken to in: whoever opened a lobby
        may have chosen another for its game), or that of a game they play in."""
        if game_id is not None:
            table = await self._load(game_id)
            if table is not None:
                return table.language
        if group_id is not None:
            current = await self._table_of_chat(group_id)
            if current is not None:
                return current.language
            language = (await self.store.settings(group_id)).language
            if language:
                return language
        if user_id is not None:
            tables = await self._tables_of_user(user_id)
            if tables:
                return tables[0].language
        return DEFAULT_LANGUAGE

    async def joinable(self, chat_id: int, user_id: int, lang: str) -> tuple[str | None, Reply | None]:
        """The group's open lobby, or why the user cannot join it (there is none, or they play already)."""
        table = await self._table_of_chat(chat_id)
        if table is None:
            return None, Reply(t(lang, "No game is open here. Start one with /newgame."))
        try:
            lobby.require_joinable(table, user_id, lang)
        except Refused as refused:
            return None, refused.reply
        return table.id, None

    async def status(self, chat_id: int, lang: str, topic: int | None = None) -> str | None:
        """Post the group's board again (with its buttons); a text to reply when there is no game, or
        when the board goes to another forum topic than the one `/status` was sent in (`topic`; None:
        General), where whoever asked would otherwise see nothing happen."""
        table = await self._table_of_chat(chat_id)
        if not await self.board_again(chat_id):
            return t(lang, "No game is running here. Start one with /newgame.")
        if table is not None and table.topic != topic:
            return t(lang, "The game is played in another topic of this group: its board is posted there again.")
        return None

    async def retitled(self, chat_id: int, title: str) -> None:
        """The group was renamed: its open or running game calls it by the new name from now on (in
        private messages, which name the group a game is played in)."""
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return
        # A game gone has nothing to rename; a damaged one is ended by the next move that reads it.
        with contextlib.suppress(GameGone, DamagedGame):
            await self.store.update(game_id, lambda table: Change(replace(table, chat_title=title)), claim=False)

    async def board_again(self, chat_id: int) -> bool:
        """Post the group's lobby or board again as a new message, with its buttons; False when the
        group has no game (nor a damaged one, which this ends, telling the group)."""
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return False
        try:
            await self.store.update(game_id, lambda table: play.repost_board(table, self.bot_username))
        except GameGone:
            return False
        except DamagedGame as damage:
            return await self._end_damaged(damage, chat_id)  # True: the group was just told
        await self._send_queued(game_id)
        return True

    async def result_again(self, chat_id: int) -> bool:
        """Post the end of the group's last game (who won, the spies named, Play again) as a new message,
        if the game ended while the bot could not post in the group (removed from it, or kept from
        posting by an admin): the outbox remembers no delivery of the edit that told it. True when it
        was owed, and is on its way: told twice of the bot's return (by two of Telegram's signals, on
        two workers), the group still gets it once (`announcements.result_again`).

        False when the group saw it, or has no finished game kept: a game is forgotten with what its
        outbox delivered (`FINISHED_GAME_SECONDS`), so whether the group saw the end of one that is
        gone cannot be told, and its Play again would no longer work."""
        raw = await self.store.last_record(chat_id)
        if raw is None:
            return False
        game_id = json.loads(raw)["id"]
        if await self.store.message_of(game_id, board.RESULT_KEY) is not None:
            return False
        table = await self._load(game_id)
        if table is None or table.stage is not Stage.OVER:
            return False
        try:
            await self.store.update(game_id, play.result_again)
        except (GameGone, DamagedGame):
            return False  # forgotten meanwhile; a damaged one is ended by whoever reads it next
        log.info("game %s: its end never reached its group; posted again", game_id)
        await self._send_queued(game_id)
        return True

    async def record_document(self, chat_id: int, lang: str) -> Document | None:
        raw = await self.store.last_record(chat_id)
        if raw is None:
            return None
        record_id = json.loads(raw)["id"]
        return Document(
            chat_id,
            f"resistance-{record_id}.json",
            raw,
            t(lang, "The record of game %(id)s (resistance-record/1).", id=record_id),
            refused_text=t(lang, "Telegram did not take the record file. Try /record again later."),
        )

    async def send_record(self, chat_id: int, lang: str, topic: int | None = None) -> str | None:
        """/record: the group's last finished game as a file, sent through that game's outbox
        (retried like any message, and by the clock if Telegram cannot be reached) to the forum
        `topic` it was asked in. A text to reply instead when no game has finished in the group."""
        document = await self.record_document(chat_id, lang)
        if document is None:
            return t(lang, "No game has finished in this group yet.")
        document = replace(document, topic=topic)
        game_id = json.loads(document.content)["id"]
        await self.store.enqueue(game_id, [document])
        await drain_quietly(self.outbox, game_id)
        return None

    async def seated(self, user_id: int) -> bool:
        """Whether the user sits at an open or running table."""
        return bool(await self._tables_of_user(user_id))

    async def my_games(self, user_id: int, lang: str) -> str:
        """/mygames: the open and running tables the user sits at, and what each waits for from them."""
        tables = [(table, table.seat_of(user_id)) for table in await self._tables_of_user(user_id)]
        return mygames_render.my_games([(table, seat) for table, seat in tables if seat is not None], lang)

    async def groups_of(self, user_id: int) -> list[str]:
        """The titles of the groups whose open or running games the user sits at, in order."""
        return sorted({table.chat_title for table in await self._tables_of_user(user_id)})

    async def resend_private(self, user_id: int) -> int:
        """Send a player who just opened the private chat what their games expect of them (their
        role, a card to play, the leader's keyboard, what a card showed them): what never reached
        them, once, however often they press Start; and what reached them but is gone (they deleted
        it, or cleared the chat), posted again. They go through the game's outbox, behind whatever
        the game queued before: the outbox sends a private message of a key at most once (one on its
        way when they pressed is not doubled), and what did arrive is queued as an edit of itself,
        which changes nothing where it still is and posts it again where it is not. Returns how many
        were queued."""
        queued = 0
        for table in await self._tables_of_user(user_id):
            game_id = table.id
            wanted = play.pending_private(table, user_id, self.bot_username)
            if not wanted:
                continue
            delivered = await self.store.delivered_keys(game_id, [item.key for item in wanted])

            def owed(current: Table, delivered: set[str] = delivered) -> Change:
                items = play.pending_private(current, user_id, self.bot_username)
                return Change(current, [_put_back(item) if item.key in delivered else item for item in items])

            try:
                change = await self.store.update(game_id, owed)
            except (GameGone, DamagedGame):
                continue
            if change.outgoing:
                queued += len(change.outgoing)
                await drain_quietly(self.outbox, game_id)
        return queued


def _put_back(item: Send) -> Edit:
    """A private message that reached its player, as an edit of itself: where it still is, Telegram
    finds nothing to change; where they deleted it, the outbox posts it again (`Outbox._edit`)."""
    return Edit(item.chat_id, item.key, item.text, item.buttons, protected=item.protected)


def _busy_answer(current: Table | None, user_id: int, lang: str, variants: Variants | None = None) -> Reply:
    """Why no new lobby opened: say what the group can do with the game it has (someone seated in its
    open lobby, as Play again pressed twice seats every player, has nothing to join). Variants named
    for the new game that the open lobby does not have are not added to it: its rules are said."""
    if current is not None and current.stage is Stage.LOBBY:
        if current.seat_of(user_id) is not None:
            text = t(lang, "You are already in this game.")
        else:
            text = t(lang, "A game is already open in this group: /join it, or see /status.")
        wanted = variants if variants is not None else Variants()
        if current.settings.with_variants(wanted) != current.settings:
            text += "\n" + board.variants_line(current.settings, lang)
        return Reply(text)
    return Reply(t(lang, "A game is already running in this group: see /status, or /cancel it first."))


def _damaged_notice(chat_id: int, language: str | None) -> list[Send]:
    return [Send(chat_id, board.damaged_game(language or DEFAULT_LANGUAGE))]
