"""Faults a player can hit with what Telegram lets any client do: long names, forged presses,
commands in the wrong place."""

from __future__ import annotations

import pytest

from tests.bot_helpers import lobby_message, press, propose, team_size
from tgbot.offline.simulation import SimulatedGroup

pytestmark = pytest.mark.usefixtures("no_handler_errors")

# Telegram shows at most 200 characters in a press's answer and refuses a longer one outright.
ANSWER_LIMIT = 200
# Ten plausible full names, each short of Telegram's 64 + 64 characters.
FULL_NAMES = (
    "Alexandra Konstantinopolskaya",
    "Bartholomew Featherstonehaugh",
    "Cassiopeia Vanderbilt-Montgomery",
    "Dmitri Aleksandrovich Ivanov",
    "Evangelina Maximiliana Rossi",
    "Friedrich Wilhelm Schwarzenegger",
    "Guinevere Pendragon-Whitmore",
    "Hieronymus Bartholomaeus Bosch",
    "Isadora Esmeralda Castellanos",
    "Jonathan Christopher Abernathy",
)


async def test_waiting_for_ten_long_names_is_still_answered(make_bot, telegram):
    """"⏳ Waiting for…" at the vote of a table of ten: the answer names everyone, cut to fit."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=10)
    for user, name in zip(group.user_ids, FULL_NAMES, strict=True):
        telegram.add_user(user, name, language_code="en")
    await group.open_lobby_and_join()
    await group.start()
    await propose(group, range(team_size(await group.table())))
    board = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    answer = await press(group, group.user_ids[3], board, f"w:{group.game_id}")
    assert answer is not None and answer.startswith("Waiting for: ") and len(answer) <= ANSWER_LIMIT
    # Every player is still named, by the first part of their name at least.
    shown = answer.removeprefix("Waiting for: ").split(", ")
    assert len(shown) == 10
    for name, part in zip(FULL_NAMES, shown, strict=True):
        assert name.startswith(part.removesuffix("…")) and len(part.removesuffix("…")) >= 10


async def test_a_refusal_naming_a_long_named_host_is_still_answered(make_bot, telegram):
    """A host with Telegram's longest name: a refusal that names them, in a language whose sentence is
    long, would be over Telegram's limit and the presser told nothing. It is cut to fit instead."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=2)
    telegram.add_user(group.user_ids[0], "A" * 64 + " " + "B" * 64, language_code="en")
    telegram.add_user(group.user_ids[1], "Bea", language_code="es")
    await group.open_lobby_and_join()
    lobby = lobby_message(telegram, group.chat_id)
    seated = len((await group.table()).players)
    answer = await press(group, group.user_ids[1], lobby, f"b:{group.game_id}:a")
    assert answer is not None and answer.startswith("Solo AAAA") and answer.endswith("…")
    assert len(answer) <= ANSWER_LIMIT
    assert len((await group.table()).players) == seated  # refused: no computer player seated
