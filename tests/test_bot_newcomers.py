"""What someone new to the game and to the bot reads on their first steps."""

from __future__ import annotations

import pytest

from tests.bot_helpers import CleanTeams, last_message, lobby_message, started, texts
from tgbot.offline.simulation import SimulatedGroup, plain_text

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
    assert "you are a spy. The other spy:" in spy  # two spies at five players
    assert "or get five teams in a row rejected" in spy
    assert "on a mission you may play ❌ Fail. Keep your role secret." in spy
    assert "🔎 Hints: each player as the public record alone shows them, you included." in spy


async def test_a_lobby_its_opener_is_not_seated_at_says_so(make_bot, telegram):
    """Whoever sent /newgame before ever opening the bot's private chat was not seated, and nothing
    said so: the lobby read "0 players" under a Join they took for everyone else's. Now it says that
    nobody is seated, its opener included, until the first Join."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    host = group.user_ids[0]
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    shown = plain_text(lobby_message(telegram, group.chat_id).text)
    assert (
        "0 players of 10: —\n5 more players needed.\nNobody is seated yet, not even whoever opened the game.\n"
        "Press Join: it opens a private chat with me"
    ) in shown
    await group.send(telegram.open_link(host, lobby_message(telegram, group.chat_id).buttons()[0]["url"]))
    shown = plain_text(lobby_message(telegram, group.chat_id).text)
    assert "1 player of 10: Ann" in shown and "Nobody is seated" not in shown


async def test_the_bot_added_to_a_group_says_how_to_start_a_game(make_bot, telegram):
    """Added to a group, the bot posted its whole list of commands, and in a group created with it
    (Telegram then says "group created", nobody "added") it said nothing at all. It greets the group
    with what it does and the three steps to a game, both ways."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    await group.send(telegram.add_bot(group.chat_id))
    greeting = plain_text(telegram.messages(group.chat_id)[-1].text)
    assert greeting.startswith("👋 Hello! I run games of The Resistance here")
    assert "send /newgame, and everyone who plays presses Join" in greeting and "/startgame" in greeting
    assert "The Resistance: commands" not in greeting

    created = SimulatedGroup(telegram, application, chat_id=-300, players=1)
    await created.send(telegram.create_group_with_bot(created.chat_id))
    assert plain_text(telegram.messages(created.chat_id)[-1].text) == greeting

    user = group.user_ids[0]
    await group.send(telegram.command(user, user, "/help"))
    assert plain_text(telegram.messages(user)[-1].text).startswith("▶️ To play: send /newgame in a group")


async def test_joining_says_where_the_role_will_come(make_bot, telegram):
    """Joining by the lobby's link answered only "You joined the game in «…»." and then nothing
    happened: a newcomer did not know to wait, nor that the role would come to that chat."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    await group.open_lobby_and_join()
    for user in group.user_ids:
        assert texts(telegram, user)[-1] == (
            "You joined the game in «Demo group».\nWhen the game starts, your role comes in our private chat."
        )


async def test_hints_before_the_first_vote_say_why_every_number_is_the_same(make_bot, telegram):
    """/hints before anything happened showed the same percentage beside every name and nothing
    else: a newcomer could not tell whether the hints worked. Now a line says that nothing has told
    the players apart yet, and that the numbers change with each vote and mission."""
    group = await started(make_bot, telegram, players=5)
    table = await group.table()
    member = next(p.user_id for s, p in enumerate(table.players) if s not in table.game.spies)
    await group.send(telegram.command(member, member, "/hints"))
    shown = texts(telegram, member)[-1]
    assert shown.count(" 50% ") == 4
    assert shown.endswith(
        "Nothing has told the players apart yet: these numbers change with each vote and mission.\n\n"
        "6 ways to seat the spies are still possible."
    )


async def test_a_join_too_late_says_what_to_do_next(make_bot, telegram):
    """Someone who pressed Join once the table was full, or once the game had started, read only
    "The table is full: 10 players." or "This game has already started.": nothing on what to do
    next. Both now say to join the next game when the group opens it."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=10)
    await group.open_lobby_and_join()
    late = 10099
    telegram.add_user(late, "Kim")
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    await group.send(telegram.open_link(late, link))
    assert texts(telegram, late)[-1] == "The table is full: 10 players. Join the next game when the group opens it."
    await group.start()
    await group.send(telegram.open_link(late, link))
    assert texts(telegram, late)[-1] == "This game has already started: join the next one when the group opens it."
    assert (await group.table()).seat_of(late) is None


async def test_a_player_who_joins_their_running_game_again_is_told_they_play_in_it(make_bot, telegram):
    """A player who opened the Join link again once the game had started (to find the bot's chat), or
    sent /join there, read "This game has already started: join the next one when the group opens it.",
    as if they had no seat in the game they were playing."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    await group.start()
    player = group.user_ids[2]
    await group.send(telegram.open_link(player, link))
    told = texts(telegram, player)
    assert "You are already in this game." in told
    assert not any("join the next one" in text for text in told)
    await group.send(telegram.command(player, group.chat_id, "/join"))
    assert plain_text(telegram.messages(group.chat_id)[-1].text) == "You are already in this game."
    assert (await group.table()).seat_of(player) == 2


async def test_the_end_of_a_game_says_what_comes_next(make_bot, telegram):
    """The first game's end said who won and that /record sends its record, with a Play again
    button: nothing on what that button does, nor that /settings changes the next game (variants,
    deadlines). Now one line says both."""
    group = await started(make_bot, telegram, players=5)
    await group.play(CleanTeams())
    final = texts(telegram, group.chat_id)[-1]
    assert final.endswith(
        "/record sends this game's record as a file.\n"
        "🔁 Play again seats the same players in a new lobby; /settings changes the next game's rules."
    )
    assert [b["text"] for b in last_message(telegram, group.chat_id).buttons()] == ["🔁 Play again"]


async def test_the_rules_say_where_roles_cards_and_votes_happen(make_bot, telegram):
    """/rules told the game, not where a newcomer plays it: nothing said that roles, the leader's
    choice and cards come in the private chat with the bot while the votes are buttons in the group."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    for chat in (group.chat_id, user):
        await group.send(telegram.command(user, chat, "/rules"))
        rules = plain_text(telegram.messages(chat)[-1].text)
        assert (
            "\nHere: roles, the leader's team choice and mission cards come in your private chat with me; "
            "everyone votes with 👍 Approve or 👎 Reject under the team in the group.\n"
        ) in rules
