"""A Redis that comes back empty (restarted without its files): every game, lobby and record it held is
gone. Five running games and two lobbies were lost so without a word, and presses on them read "This
button belongs to a game that is over". Now the loss is found (`tgbot.dataset`), each group whose game
a worker saw is told once, in its language, and a press on a lost game says it was lost."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from tests.bot_helpers import AlwaysApprove, press, propose, started_on, team_size, texts
from tgbot import keys
from tgbot.i18n import t
from tgbot.offline.simulation import SimulatedGroup
from tgbot.render import board
from tgbot.service import LOST_GAME

pytestmark = pytest.mark.usefixtures("no_handler_errors")

OVER = "This button belongs to a game that is over."


def told_lost(telegram, chat_id: int, lang: str = "en", lobby: bool = False) -> int:
    notice = board.storage_lost(lang, lobby)
    return sum(text == notice.replace("<b>", "").replace("</b>", "") for text in texts(telegram, chat_id))


async def test_a_redis_that_comes_back_empty_is_told_to_each_group_once_in_its_language(make_bot, telegram, redis):
    first, second = await make_bot(1), await make_bot(2)  # two workers
    playing = await started_on(first, telegram, chat_id=-100)
    await second.bot_data["service"].store.update_settings(-200, lambda current: replace(current, language="ru"))
    gathering = SimulatedGroup(telegram, second, chat_id=-200, title="Группа")
    await gathering.open_lobby_and_join(joining=gathering.user_ids[:2])
    await propose(playing, range(team_size(await playing.table())))
    ballot = playing.latest_with_button(playing.chat_id, f"v:{playing.game_id}:")

    await redis.flushdb()  # Redis restarted without its files
    for worker in (first, second, first):
        await worker.bot_data["service"].fire_due()

    assert told_lost(telegram, -100) == 1
    assert told_lost(telegram, -200, "ru", lobby=True) == 1
    # A press on the lost game's board says what happened, in the presser's language.
    answer = await press(playing, playing.user_ids[1], ballot, ballot.buttons()[0]["callback_data"])
    assert answer == t("en", LOST_GAME)
    assert answer != OVER
    # The group goes on with a new game.
    await playing.open_lobby_and_join()
    await playing.start()
    assert (await playing.play(AlwaysApprove(rng=random.Random(2)))).game.is_over


async def test_a_game_one_master_lost_is_found_by_the_press_on_it(make_bot, telegram, redis):
    """On a Redis Cluster the marker lives on one master: a master that comes back empty without it loses
    the games of its slots alone. A press on a game the worker saw running and that nothing ended finds it."""
    application = await make_bot(1)
    group = await started_on(application, telegram)
    await propose(group, range(team_size(await group.table())))
    ballot = group.latest_with_button(group.chat_id, f"v:{group.game_id}:")
    for key in [key async for key in redis.scan_iter(match=keys.game(group.game_id) + "*")]:
        await redis.delete(key)  # the game's slot came back empty; the marker's did not

    answer = await press(group, group.user_ids[2], ballot, ballot.buttons()[0]["callback_data"])
    assert answer == t("en", LOST_GAME)
    await press(group, group.user_ids[3], ballot, ballot.buttons()[0]["callback_data"])
    assert told_lost(telegram, group.chat_id) == 1  # once, however many presses find it


async def test_a_game_that_ended_and_was_forgotten_is_still_over(make_bot, telegram, redis):
    """Nothing was lost: a press on a game that ended and whose keys expired reads as before."""
    application = await make_bot(1)
    group = await started_on(application, telegram)
    await group.play(AlwaysApprove(rng=random.Random(1)))
    board_message = next(m for m in telegram.messages(group.chat_id) if any("callback_data" in b for b in m.buttons()))
    for key in [key async for key in redis.scan_iter(match=keys.game(group.game_id) + "*")]:
        await redis.delete(key)  # forgotten a week after it ended
    answer = await press(group, group.user_ids[1], board_message, board_message.buttons()[0]["callback_data"])
    assert answer != t("en", LOST_GAME)
    assert told_lost(telegram, group.chat_id) == 0
