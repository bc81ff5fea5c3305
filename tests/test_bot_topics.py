"""Groups with forum topics: a game is played in the topic it was opened in."""

from __future__ import annotations

import json

import pytest

from engine import Side
from tests.bot_helpers import CleanTeams
from tgbot.offline.simulation import SimulatedGroup, plain_text

pytestmark = pytest.mark.usefixtures("no_handler_errors")


def bot_messages(telegram, group):
    return [m for m in telegram.messages(group.chat_id) if m.from_bot]


async def test_a_game_opened_in_a_topic_is_played_and_played_again_there(make_bot, telegram):
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=5, forum=True)
    await group.open_lobby_and_join()
    await group.start()
    table = await group.play(CleanTeams())
    assert table.game.winner is Side.RESISTANCE
    sent = bot_messages(telegram, group)
    # The lobby, every proposal's board, the end and the game's picture, each in the topic; nothing in General.
    assert len(sent) >= 5 and {m.topic for m in sent} == {group.topic}
    assert sent[-1].photo is not None
    sent = [m for m in sent if m.photo is None]
    assert "🏁" in plain_text(sent[-1].text)

    # Play again opens the next lobby in the same topic; /record sends the file there too.
    play_again = next(b["callback_data"] for b in sent[-1].buttons() if b["text"] == "🔁 Play again")
    await group.send(telegram.press(group.user_ids[1], group.chat_id, sent[-1].message_id, play_again))
    lobby = bot_messages(telegram, group)[-1]
    assert "Join" in json.dumps(lobby.buttons()) and lobby.topic == group.topic
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/record", group.topic))
    record = bot_messages(telegram, group)[-1]
    assert record.document is not None and record.topic == group.topic
    # A command's answer goes where the command was sent.
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/join", group.topic))
    answer = bot_messages(telegram, group)[-1]
    assert plain_text(answer.text) == "You are already in this game." and answer.topic == group.topic


async def test_a_game_opened_in_general_stays_in_general(make_bot, telegram):
    application = await make_bot(2)
    group = SimulatedGroup(telegram, application, players=5, forum=True)
    group.topic = None  # the players write in General
    await group.open_lobby_and_join()
    await group.start()
    await group.play(CleanTeams())
    assert {m.topic for m in bot_messages(telegram, group)} == {None}


async def test_a_game_whose_topic_is_deleted_goes_on_in_general(make_bot, telegram):
    application = await make_bot(3)
    group = SimulatedGroup(telegram, application, players=5, forum=True)
    await group.open_lobby_and_join()
    await group.start()
    topic = group.topic
    telegram.delete_topic(group.chat_id, topic)
    group.topic = None
    calls_before = len(telegram.calls)
    table = await group.play(CleanTeams())
    assert table.game.winner is Side.RESISTANCE
    # Refused once; the rest of the game's messages go straight to General.
    tried_in_topic = [
        p for m, p in telegram.calls[calls_before:] if m == "sendMessage" and p.get("message_thread_id") is not None
    ]
    assert len(tried_in_topic) == 1
    after = bot_messages(telegram, group)
    assert after and {m.topic for m in after} == {None}  # the topic's messages went with it
    assert after[-1].photo is not None  # the game's picture, after its end
    assert "🏁" in plain_text(after[-2].text)


async def test_status_sent_in_another_topic_says_where_the_board_went(make_bot, telegram):
    """/status sent in another topic (or in General) posted the board again in the game's topic and
    answered nothing where it was asked: whoever sent it saw nothing happen. It says where the board went."""
    application = await make_bot(4)
    group = SimulatedGroup(telegram, application, players=5, forum=True)
    await group.open_lobby_and_join()
    await group.start()
    elsewhere = telegram.open_topic(group.chat_id)
    for asked_in in (elsewhere, None):
        before = len(bot_messages(telegram, group))
        await group.send(telegram.command(group.user_ids[2], group.chat_id, "/status", asked_in))
        board, answer = bot_messages(telegram, group)[before:]
        assert board.topic == group.topic and "Mission 1" in plain_text(board.text)
        assert answer.topic == asked_in
        assert plain_text(answer.text) == (
            "The game is played in another topic of this group: its board is posted there again."
        )
    # Asked in the game's own topic, the board is the answer.
    before = len(bot_messages(telegram, group))
    await group.send(telegram.command(group.user_ids[2], group.chat_id, "/status", group.topic))
    (board,) = bot_messages(telegram, group)[before:]
    assert board.topic == group.topic and "Mission 1" in plain_text(board.text)
