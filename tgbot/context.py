"""The handlers' context, typed: `context.service` instead of a lookup in `bot_data`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from telegram.ext import CallbackContext, ContextTypes, ExtBot

if TYPE_CHECKING:
    from tgbot.service import GameService


class BotContext(CallbackContext[ExtBot, dict, dict, dict]):
    @property
    def service(self) -> GameService:
        return self.application.bot_data["service"]


CONTEXT_TYPES = ContextTypes(context=BotContext)
