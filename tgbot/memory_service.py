"""The group's memory as its commands use it: /stats, /top, /history (and its record buttons),
/nextgame and /forgetme. What is counted and how lives in `memory` and `tgbot.memory_store`."""

from __future__ import annotations

import json
import logging

from tgbot.i18n import t
from tgbot.outgoing import Document, Keyboard, Send
from tgbot.render import memory as memory_render
from tgbot.store import Store

log = logging.getLogger(__name__)


class MemoryService:
    def __init__(self, store: Store, bot_username: str) -> None:
        self.store = store
        self.memory = store.memory
        self.bot_username = bot_username

    async def _settled(self, chat_id: int) -> None:
        """A game whose end was stored but not yet counted (its worker died in between) is counted
        now: the group's pointer still names it, and reading the pointer settles it."""
        await self.store.game_of_chat(chat_id)

    async def stats_in_group(self, chat_id: int, group_title: str, user_id: int, name: str, lang: str) -> str:
        await self._settled(chat_id)
        stats = await self.memory.stats_in_group(chat_id, user_id)
        rating = await self.memory.rating_in_group(chat_id, user_id)
        return memory_render.stats_text(name, stats, lang, group_title=group_title, rating=rating)

    async def stats_everywhere(self, user_id: int, name: str, lang: str) -> str:
        return memory_render.stats_text(name, await self.memory.stats_everywhere(user_id), lang)

    async def top(self, chat_id: int, group_title: str, lang: str) -> str:
        await self._settled(chat_id)
        return memory_render.top_text(await self.memory.standings(chat_id), group_title, lang)

    async def history(self, chat_id: int, group_title: str, lang: str) -> tuple[str, Keyboard]:
        await self._settled(chat_id)
        games = await self.memory.recent_games(chat_id, memory_render.HISTORY_ROWS)
        settings = await self.store.settings(chat_id)
        return memory_render.history(games, group_title, settings, lang)

    async def record_of(self, chat_id: int, game_id: str, lang: str) -> Document | str:
        """A /history button's record, or why there is none: the id must name a game this group
        remembers (button data can be forged, and a record of another group's game is not theirs)."""
        game = await self.memory.game(chat_id, game_id)
        if game is None:
            return t(lang, "This group remembers no such game.")
        return Document(
            chat_id,
            f"resistance-{game_id}.json",
            json.dumps(game.record),
            t(lang, "The record of game %(id)s (resistance-record/1).", id=game_id),
        )

    async def want_next_game(self, chat_id: int, user_id: int, name: str, lang: str, can_write: bool):
        if not await self.memory.want_next_game(chat_id, user_id):
            return memory_render.next_game_already(name, lang), ()
        return memory_render.next_game_noted(name, lang, self.bot_username, can_write)

    async def lobby_opened(self, game_id: str, chat_id: int, group_title: str, seated: set[int], lang: str) -> bool:
        """Tell those who asked with /nextgame that the group's lobby is open: queued in the new game's
        outbox (retried like any message), once per person and game (the key), then off the list.
        Whether anything was queued."""
        asked = await self.memory.waiting_for_next_game(chat_id)
        waiting = [user for user in asked if user not in seated]
        if waiting:
            text, buttons = memory_render.next_game_open(group_title, game_id, self.bot_username, lang)
            await self.store.enqueue(game_id, [Send(user, text, buttons, key=f"next-game:{user}") for user in waiting])
        await self.memory.told_of_next_game(chat_id, asked)
        return bool(waiting)

    async def forget(self, user_id: int, lang: str) -> str:
        return memory_render.forgotten(await self.memory.forget(user_id), lang)
