"""What someone new to the game and to the bot reads on their first steps."""

from __future__ import annotations

import pytest

from tests.bot_helpers import started, texts

pytestmark = pytest.mark.usefixtures("no_handler_errors")


async def test_the_first_role_message_says_how_to_win_and_what_hints_are(make_bot, telegram):
    """A newcomer's role message said only "Make three missions succeed/fail": not that the votes are
    in the group, which card to play, nor what the 🔎 Hints button under it shows."""
    group = await started(make_bot, telegram, players=5)
    table = await group.table()
    roles = {}
    for seat, player in enumerate(table.players):
        roles[seat] = next(text for text in texts(telegram, player.user_id) if text.startswith("Your game in"))
    member = next(roles[s] for s in roles if s not in table.game.spies)
    spy = next(roles[s] for s in roles if s in table.game.spies)
    assert "you are in the Resistance." in member
    assert "vote on each team in the group, and on a mission always play ✅ Success." in member
    assert "🔎 Hints: who could be a spy, from the votes and missions so far." in member
    assert "you are a spy. The other spies:" in spy
    assert "on a mission you may play ❌ Fail. Keep your role secret." in spy
    assert "🔎 Hints: how the Resistance sees each player, you included." in spy
