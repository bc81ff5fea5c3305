"""Time and stalling, seen as an adversary: what the clock does when people change the lobby's time,
stall on purpose, or press just as a deadline fires.

The clock is driven by the test, through `GameService.clock` and `fire_due`, as in
tests/test_bot_deadlines.py.
"""

from __future__ import annotations

import pytest

from tests.bot_helpers import command, lobby_message, press
from tests.bot_helpers import texts as chat_texts
from tests.test_bot_deadlines import LOBBY, T0, clocked_group
from tests.test_bot_settings_hints import setting
from tgbot import keys
from tgbot.offline.simulation import plain_text
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")


# ---------------------------------------------------------------- the lobby's own time


async def test_a_lobby_whose_time_is_changed_gets_the_new_time_from_the_change(make_bot, telegram):
    """The host of an open lobby sets a longer lobby time to wait for friends: the lobby stays open
    that long from the change, instead of closing at the time it was opened with."""
    group, service, now = await clocked_group(make_bot, telegram, players=6, joined=3)
    chat, host = group.chat_id, group.user_ids[0]
    lobby = lobby_message(telegram, chat)
    assert (await group.table()).deadline == T0 + LOBBY  # 15 minutes

    now[0] = T0 + 600
    menu = await command(group, host, "/settings")
    await press(group, host, menu, setting(menu, "lt"))  # 15 -> 30 minutes
    table = await group.table()
    assert table.settings.lobby_seconds == 1800
    assert table.deadline == now[0] + 1800 and table.reminder_at == now[0] + 900
    assert await group.store.redis.zscore(keys.DEADLINES, group.game_id) == table.reminder_at

    # The time the lobby opened with passes: it stays open, and nobody is told anything.
    texts_before = chat_texts(telegram, chat)
    assert await service.fire_due(T0 + LOBBY) == 0
    assert (await group.table()).stage is Stage.LOBBY
    assert chat_texts(telegram, chat) == texts_before

    # Half the new time: the group is reminded once; at its end the lobby closes.
    now[0] = T0 + 600 + 900
    assert await service.fire_due() == 1
    assert chat_texts(telegram, chat)[-1] == "⏰ Half the lobby time is gone: 2 more players needed."
    now[0] = T0 + 600 + 1800
    assert await service.fire_due() == 1
    assert (await group.table()).stage is Stage.CANCELLED
    closed = telegram.message(chat, lobby.message_id)
    assert plain_text(closed.text) == "🕵️ This lobby closed: fewer than 5 players joined in time."


async def test_a_lobby_whose_other_settings_change_keeps_its_time(make_bot, telegram):
    """Changing anything but the lobby time (the variants, a game's deadlines) leaves the lobby's clock alone."""
    group, service, now = await clocked_group(make_bot, telegram, players=6, joined=3)
    host = group.user_ids[0]
    now[0] = T0 + 600
    menu = await command(group, host, "/settings")
    for code in ("tg", "vt"):
        await press(group, host, menu, setting(menu, code))
    table = await group.table()
    assert table.settings.targeting and table.settings.vote_seconds == 180
    assert (table.deadline, table.reminder_at) == (T0 + LOBBY, T0 + LOBBY / 2)
