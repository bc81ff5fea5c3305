"""The bot's use cases: load the game, apply a move, store it atomically, deliver its messages.

Handlers call these with plain values parsed from an update; nothing here touches an
`Update`. Each method returns the `Reply` for the person who acted.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Awaitable, Callable

from engine import Variants, export_record
from tgbot import moves
from tgbot.callbacks import CancelPress, CardPress, MissionPress, Press, TeamPress, VotePress
from tgbot.i18n import t
from tgbot.moves import Change, Refused, Reply
from tgbot.outbox import Outbox, drain_quietly
from tgbot.outgoing import Document
from tgbot.store import ChatBusy, GameGone, Store
from tgbot.table import Player, Stage, Table

log = logging.getLogger(__name__)


def finished_record(table: Table) -> str | None:
    """The record kept for /record: only games that were played to their end."""
    if table.stage is not Stage.OVER or table.game is None:
        return None
    return json.dumps(export_record(table.game, table.id))


class GameService:
    def __init__(self, store: Store, outbox: Outbox, bot_username: str, rng: random.Random | None = None) -> None:
        self.store = store
        self.outbox = outbox
        self.bot_username = bot_username
        self.rng = rng if rng is not None else random.SystemRandom()

    async def _apply(self, game_id: str, mutate) -> Reply:
        try:
            change: Change = await self.store.update(game_id, mutate, record=finished_record)
        except Refused as refused:
            return refused.reply
        log.info("game %s: stored (%d messages queued)", game_id, len(change.outgoing))
        await drain_quietly(self.outbox, game_id)
        return change.reply or Reply("")

    # ---------------------------------------------------------------- lobby

    async def open_lobby(
        self, chat_id: int, chat_title: str, host: Player, lang: str, variants: Variants | None = None
    ) -> Reply | None:
        """Open a lobby in the group; None when it was opened (the lobby message says it all)."""
        game_id = Table.new_id()
        change = moves.open_lobby(game_id, chat_id, chat_title, host, lang, self.bot_username, variants)
        try:
            await self.store.create(change)
        except ChatBusy:
            return Reply(t(lang, "A game is already open in this group: /join it, or see /status."))
        log.info("game %s: lobby opened", game_id)
        await drain_quietly(self.outbox, game_id)
        return None

    async def join(self, game_id: str, player: Player, lang: str) -> Reply:
        return await self._in_game(game_id, lang, lambda table: moves.join(table, player, lang, self.bot_username))

    async def join_chat(self, chat_id: int, player: Player, lang: str) -> Reply:
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return Reply(t(lang, "No game is open here. Start one with /newgame."))
        return await self.join(game_id, player, lang)

    async def leave(self, chat_id: int, user_id: int, lang: str) -> Reply:
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return Reply(t(lang, "No game is open here."))
        return await self._in_game(game_id, lang, lambda table: moves.leave(table, user_id, lang, self.bot_username))

    async def start_game(self, chat_id: int, user_id: int, is_admin: bool, lang: str) -> Reply:
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return Reply(t(lang, "No game is open here. Start one with /newgame."))
        # One draw of randomness per attempt, outside the retried transaction.
        seed = self.rng.getrandbits(64)
        return await self._in_game(
            game_id,
            lang,
            lambda table: moves.start_game(table, user_id, is_admin, lang, random.Random(seed), self.bot_username),
        )

    async def ask_cancel(self, chat_id: int, user_id: int, is_admin: bool, lang: str) -> Reply:
        table = await self.store.table_of_chat(chat_id)
        if table is None:
            return Reply(t(lang, "There is no game to cancel."))
        try:
            return moves.ask_cancel(table, user_id, is_admin, lang)
        except Refused as refused:
            return refused.reply

    # ---------------------------------------------------------------- presses

    async def press(
        self,
        press: Press,
        user_id: int,
        chat_id: int | None,
        lang: str,
        is_admin_in: Callable[[int], Awaitable[bool]],
    ) -> Reply:
        """Apply a button press made on a message in `chat_id`.

        `is_admin_in(chat_id)` asks Telegram, and only for the game's own group.
        """
        is_admin = False
        if isinstance(press, CancelPress):
            table = await self.store.load(press.game_id)
            is_admin = table is not None and await is_admin_in(table.chat_id)

        def mutate(table: Table) -> Change:
            moves.require_pressed_in_place(table, press, chat_id, user_id, lang)
            if isinstance(press, VotePress):
                return moves.vote(table, user_id, press, lang, self.bot_username)
            if isinstance(press, CardPress):
                return moves.play_card(table, user_id, press, lang, self.bot_username)
            if isinstance(press, TeamPress):
                return moves.pick_team_member(table, user_id, press, lang, self.bot_username)
            if isinstance(press, MissionPress):
                return moves.pick_mission(table, user_id, press, lang)
            if isinstance(press, CancelPress):
                return moves.cancel(table, user_id, is_admin, press, lang)
            raise TypeError(type(press).__name__)

        return await self._in_game(press.game_id, lang, mutate, gone="This button belongs to a game that is over.")

    async def _in_game(self, game_id: str, lang: str, mutate, gone: str = "This game is over.") -> Reply:
        try:
            return await self._apply(game_id, mutate)
        except GameGone:
            return Reply(t(lang, gone))

    # ---------------------------------------------------------------- looking

    async def joinable(self, chat_id: int, lang: str) -> tuple[str | None, Reply | None]:
        """The group's open lobby, or why there is none to join."""
        table = await self.store.table_of_chat(chat_id)
        if table is None:
            return None, Reply(t(lang, "No game is open here. Start one with /newgame."))
        try:
            moves.require_lobby(table, lang)
        except Refused as refused:
            return None, refused.reply
        return table.id, None

    async def status(self, chat_id: int, lang: str) -> str | None:
        """Post the group's board again (with its buttons); a text to reply when there is no game."""
        game_id = await self.store.game_of_chat(chat_id)
        if game_id is None:
            return t(lang, "No game is running here. Start one with /newgame.")
        try:
            await self.store.update(game_id, lambda table: moves.repost_board(table, self.bot_username))
        except GameGone:
            return t(lang, "No game is running here. Start one with /newgame.")
        await drain_quietly(self.outbox, game_id)
        return None

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
        )

    async def resend_private(self, user_id: int) -> int:
        """Send a player who just opened the private chat what their games expect of them."""
        sent = 0
        for game_id in await self.store.games_of_user(user_id):
            table = await self.store.load(game_id)
            if table is None:
                continue
            items = moves.pending_private(table, user_id, self.bot_username)
            for item in items:
                await self.outbox.deliver_now(game_id, item)
            sent += len(items)
        return sent
