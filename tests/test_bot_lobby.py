"""Opening, joining, starting, cancelling and looking at games: the commands around the play."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from telegram import Chat, InaccessibleMessage, InlineKeyboardButton, InlineKeyboardMarkup, Message

from engine import EndReason, Phase, Side, parse_record, public_view
from engine import rules as game_rules
from tests.bot_helpers import (
    AlwaysApprove,
    CleanTeams,
    button_data,
    command,
    command_text,
    current_mission,
    forged,
    last_message,
    last_text,
    lobby_message,
    press,
    propose,
    start_message,
    started,
    team_size,
    texts,
    vote_all,
)
from tgbot import keys
from tgbot.app import COMMANDS
from tgbot.handlers import carries
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.table import Stage

pytestmark = pytest.mark.usefixtures("no_handler_errors")

BOT_LINK = "https://t.me/resistance_test_bot?start="


# ---------------------------------------------------------------- opening and joining


async def test_newgame_in_private_explains_groups(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    reply = await command_text(group, user, "/newgame", chat_id=user)
    assert reply == "Add me to a group and send this command there: games are played in groups."
    assert await group.store.game_of_chat(user) is None


async def test_a_group_command_a_player_sends_in_private_names_the_group_of_their_game(make_bot, telegram):
    """A seated player who sent /status (or /cancel, /leave, …) to the bot in private was told to add
    the bot to a group and send it there, as if they had no game: they are told where their game is."""
    application = await make_bot()
    night = SimulatedGroup(telegram, application, chat_id=-100, title="Night <&>", players=5)
    day = SimulatedGroup(telegram, application, chat_id=-200, title="Day", players=5)
    player = night.user_ids[1]
    day.user_ids[1] = player
    await night.open_lobby_and_join()
    await night.start()
    for command_sent in ("/status", "/cancel", "/leave", "/startgame", "/record", "/newgame", "/join"):
        reply = await command_text(night, player, command_sent, chat_id=player)
        assert reply == "Send this command in a group: your game is played in «Night <&>».", command_sent
    await day.open_lobby_and_join()
    reply = await command_text(night, player, "/status", chat_id=player)
    assert reply == "Send this command in a group: your games are played in «Day», «Night <&>»."
    # Someone who plays nowhere is told to add the bot to a group.
    stranger = day.user_ids[0]
    await day.send(telegram.command(stranger, day.chat_id, "/leave"))
    reply = await command_text(night, stranger, "/status", chat_id=stranger)
    assert reply == "Add me to a group and send this command there: games are played in groups."


async def test_newgame_twice_says_a_game_is_open(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/newgame"))
    game_id = await group.store.game_of_chat(group.chat_id)
    assert game_id is not None
    reply = await command_text(group, group.user_ids[1], "/newgame")
    assert reply == "A game is already open in this group: /join it, or see /status."
    assert await group.store.game_of_chat(group.chat_id) == game_id
    assert sum("a new game is open" in text for text in texts(telegram, group.chat_id)) == 1


async def test_newgame_with_variants_the_open_lobby_lacks_says_its_rules(make_bot, telegram):
    """'/newgame plot' sent while a plain lobby is open adds nothing to it: the answer says the lobby's
    rules, so nobody believes it now has Plot cards."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=3)
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/newgame targeting"))
    reply = await command_text(group, group.user_ids[1], "/newgame plot")
    assert reply == "A game is already open in this group: /join it, or see /status.\nVariants: Targeting."
    lobby = await group.store.load(await group.store.game_of_chat(group.chat_id))
    assert lobby.settings.targeting and not lobby.settings.plot_cards
    # Naming what the lobby has already, or nothing, needs no word on its rules.
    assert await command_text(group, group.user_ids[2], "/newgame targeting") == (
        "A game is already open in this group: /join it, or see /status."
    )


async def test_newgame_seats_its_sender_at_once_when_their_private_chat_is_open(make_bot, telegram):
    application = await make_bot()
    north = SimulatedGroup(telegram, application, chat_id=-100, title="North", players=2)
    host = north.user_ids[0]
    await north.send(telegram.command(host, host, "/start"))  # the private chat is open
    await north.send(telegram.command(host, north.chat_id, "/newgame"))
    north.game_id = await north.store.game_of_chat(north.chat_id)
    shown = plain_text(lobby_message(telegram, north.chat_id).text)
    assert "1 player of 10: Ann" in shown and "4 more players needed." in shown
    assert [p.user_id for p in (await north.table()).players] == [host]
    assert await north.store.games_of_user(host) == [north.game_id]
    # Seated already: /join says so, and Leave frees the seat as for anyone.
    assert await command_text(north, host, "/join") == "You are already in this game."
    assert await command_text(north, host, "/leave") == "You left the game."
    assert (await north.table()).players == ()


@pytest.mark.parametrize("closed", ["never opened", "blocked"])
async def test_newgame_does_not_seat_its_sender_whose_private_chat_is_closed(make_bot, telegram, closed):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    host = group.user_ids[0]
    if closed == "blocked":
        await group.send(telegram.command(host, host, "/start"))
        telegram.block(host)
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    shown = plain_text(lobby_message(telegram, group.chat_id).text)
    assert "0 players of 10: —" in shown and "5 more players needed." in shown
    assert (await group.table()).players == ()
    assert await group.store.games_of_user(host) == []
    # The lobby is open all the same; the host joins with the link like everyone else.
    await group.send(telegram.open_link(host, lobby_message(telegram, group.chat_id).buttons()[0]["url"]))
    assert [p.user_id for p in (await group.table()).players] == [host]


async def test_newgame_while_a_game_runs_says_it_runs(make_bot, telegram):
    group = await started(make_bot, telegram, players=5)
    before = (await group.table()).to_json()
    reply = await command_text(group, group.user_ids[2], "/newgame")
    assert reply == "A game is already running in this group: see /status, or /cancel it first."
    assert "/join" not in reply
    assert await group.store.game_of_chat(group.chat_id) == group.game_id
    assert (await group.table()).to_json() == before
    lobbies = [p for method, p in telegram.calls if method == "sendMessage" and "a new game is open" in p["text"]]
    assert len(lobbies) == 1


async def test_a_join_link_to_a_game_that_never_existed(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    await group.send(telegram.open_link(user, f"{BOT_LINK}join_0123456789"))
    answer = texts(telegram, user)[-1]
    assert answer == "There is no such game here any more: ask the group for a new link."
    assert "This game is over." not in answer
    assert await group.store.games_of_user(user) == []
    assert await group.store.load("0123456789") is None


async def test_a_join_link_to_a_game_that_is_over_says_where_a_new_one_comes_from(make_bot, telegram):
    """Someone who opened an old Join link (of a lobby cancelled since, or of a game played to its end)
    read only "This game is over.", with nothing to do next, though the group may well have opened a
    new game meanwhile: they are told to ask the group for a new link, as for a game no longer kept."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=2)
    host, late = group.user_ids
    await group.open_lobby_and_join(joining=[host])
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    question = await command(group, host, "/cancel")
    await press(group, host, question, button_data(question, ":y"))
    await group.send(telegram.open_link(late, link))
    assert texts(telegram, late)[-1] == "This game is over: ask the group for a new link."
    assert await group.store.games_of_user(late) == []


async def test_a_join_link_taken_out_of_the_group_seats_no_outsider(make_bot, telegram):
    """The lobby's Join button can be forwarded anywhere (its link names the game). Someone who is not
    in the group could take a seat, get a role and hold up every vote, but never see the board."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=3)
    await group.open_lobby_and_join(joining=group.user_ids[:1])
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    outsider = 999
    telegram.add_user(outsider, "Mallory")
    telegram.leave_group(group.chat_id, outsider)
    lobby_before = lobby_message(telegram, group.chat_id).text
    await group.send(telegram.open_link(outsider, link))
    assert texts(telegram, outsider)[-1] == "This game is played in the group «Demo group»: join the group first."
    assert [p.user_id for p in (await group.table()).players] == group.user_ids[:1]
    assert await group.store.games_of_user(outsider) == []
    assert lobby_message(telegram, group.chat_id).text == lobby_before
    # A member joins by the same link; when Telegram cannot say who is a member, nobody is turned away.
    await group.send(telegram.open_link(group.user_ids[1], link))
    telegram.fail_next("getChatMember", status=0, description="timed out")
    await group.send(telegram.open_link(group.user_ids[2], link))
    assert [p.user_id for p in (await group.table()).players] == group.user_ids


async def test_join_needs_the_private_chat_then_join_and_leave_edit_the_lobby(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=3)
    host, late, other = group.user_ids
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    lobby = lobby_message(telegram, group.chat_id)
    assert "0 players of 10" in plain_text(lobby.text)

    # Never opened the private chat: refused, with a deep link to the bot instead.
    await group.send(telegram.command(late, group.chat_id, "/join"))
    refusal = telegram.messages(group.chat_id)[-1]
    assert "Bob, I cannot write to you in private yet" in plain_text(refusal.text)
    [button] = refusal.buttons()
    assert button["url"] == f"{BOT_LINK}join_{group.game_id}"
    assert (await group.table()).players == ()
    assert not telegram.private_chat_open(late)

    # The link opens the private chat and seats them; the lobby is edited in place.
    await group.send(telegram.open_link(late, button["url"]))
    assert [p.user_id for p in (await group.table()).players] == [late]
    assert texts(telegram, late)[-1] == (
        "You joined the game in «Demo group».\nWhen the game starts, your role comes in our private chat."
    )
    edited = telegram.message(group.chat_id, lobby.message_id)
    assert edited.edits == 1 and "1 player of 10: Bob" in plain_text(edited.text)
    assert lobby_message(telegram, group.chat_id).message_id == lobby.message_id

    # With the private chat open, /join in the group works directly; twice is refused.
    await group.send(telegram.command(other, other, "/start"))
    assert await command_text(group, other, "/join") == (
        "You joined the game in «Demo group».\nWhen the game starts, your role comes in our private chat."
    )
    assert await command_text(group, other, "/join") == "You are already in this game."
    edited = telegram.message(group.chat_id, lobby.message_id)
    assert edited.edits == 2 and "2 players of 10: Bob, Cy" in plain_text(edited.text)

    # /leave takes the seat away and edits the same message again.
    assert await command_text(group, late, "/leave") == "You left the game."
    assert [p.user_id for p in (await group.table()).players] == [other]
    edited = telegram.message(group.chat_id, lobby.message_id)
    assert edited.edits == 3 and "1 player of 10: Cy" in plain_text(edited.text)
    assert await command_text(group, late, "/leave") == "You are not in this game."
    assert await group.store.games_of_user(late) == []
    assert await group.store.games_of_user(other) == [group.game_id]
    # Only one lobby message was ever sent.
    assert sum("a new game is open" in text for text in texts(telegram, group.chat_id)) == 1


async def test_startgame_needs_five_players_and_the_host_or_an_admin(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    admin, host, *others = group.user_ids
    # Ann owns the group; Cy is made an administrator; Bob (no admin) opens the game.
    telegram.add_group(group.chat_id, "Demo group", admins=[admin, others[0]])
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    for user in group.user_ids[1:5]:
        await group.send(telegram.open_link(user, link))

    reply = await command_text(group, host, "/startgame")
    assert reply == "A game needs 5 to 10 players; 4 have joined."
    assert (await group.table()).stage is Stage.LOBBY

    await group.send(telegram.open_link(group.user_ids[5], link))
    reply = await command_text(group, others[1], "/startgame")  # Dan: neither host nor admin
    assert reply == "Only Bob, who opened the game, or a group admin can start it."
    table = await group.table()
    assert table.stage is Stage.LOBBY and table.game is None

    await group.send(telegram.command(others[0], group.chat_id, "/startgame"))  # Cy, an administrator
    table = await group.table()
    assert table.stage is Stage.PLAYING and table.game.players == 5
    assert "the game has started with Bob, Cy, Dan, Eve, Fay" in " ".join(texts(telegram, group.chat_id))
    # Everyone seated got their role in private; Ann, not seated, got nothing.
    for user in group.user_ids[1:]:
        assert any(text.startswith("Your game in «Demo group»") for text in texts(telegram, user))
    assert telegram.messages(admin) == []
    assert await command_text(group, host, "/startgame") == "This game has already started."
    await group.send(telegram.command(admin, admin, "/start"))
    assert await command_text(group, admin, "/join") == (
        "This game has already started: join the next one when the group opens it."
    )
    assert (await group.table()).seat_of(admin) is None


async def test_group_owner_who_did_not_open_the_game_may_start_it(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    owner = group.user_ids[0]
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    for user in group.user_ids[1:]:
        await group.send(telegram.open_link(user, link))
    await group.send(telegram.command(owner, group.chat_id, "/startgame"))
    assert (await group.table()).stage is Stage.PLAYING


CHANNEL_BOT = 136817688  # Telegram's stand-in sender of every message sent on behalf of a channel


def as_channel(update: dict, channel_id: int, title: str) -> dict:
    """A member's message sent on behalf of one of their channels, as Telegram delivers it."""
    update["message"]["sender_chat"] = {"id": channel_id, "type": "channel", "title": title}
    return update


async def test_commands_sent_on_behalf_of_a_channel_speak_for_nobody(make_bot, telegram):
    """Whoever writes as a channel is the same stand-in user to the bot, so one member's channel
    could start, fill or cancel a lobby that another member's channel opened."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    telegram.add_user(CHANNEL_BOT, "Channel", username="Channel_Bot")
    refusal = "Send this command as yourself, not on behalf of a channel."
    for text in ("/newgame", "/startgame", "/addbot", "/removebot", "/cancel", "/settings", "/language"):
        await group.send(as_channel(telegram.command(CHANNEL_BOT, group.chat_id, text), -1001, "Alice's news"))
        assert last_text(telegram, group.chat_id) == refusal, text
    assert await group.store.game_of_chat(group.chat_id) is None


ANONYMOUS_ADMIN = 1087968824  # GroupAnonymousBot: Telegram's stand-in sender of an anonymous admin's messages


def as_the_group(update: dict, chat_id: int, title: str) -> dict:
    """An admin's message sent anonymously, on behalf of the group itself, as Telegram delivers it."""
    update["message"]["sender_chat"] = {"id": chat_id, "type": "supergroup", "title": title}
    return update


async def test_an_admin_who_writes_anonymously_is_an_admin(make_bot, telegram):
    """Only the group's admins can write as the group; Telegram then names GroupAnonymousBot as the
    sender, which it does not call an admin when asked. Such an admin may do what any admin may."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    telegram.add_user(ANONYMOUS_ADMIN, "Group", username="GroupAnonymousBot")
    await group.open_lobby_and_join(joining=group.user_ids[:5])

    async def anonymously(text: str) -> str:
        await group.send(as_the_group(telegram.command(ANONYMOUS_ADMIN, group.chat_id, text), group.chat_id, "Demo"))
        return last_text(telegram, group.chat_id)

    assert await anonymously("/addbot") == "🤖 Ada takes a seat."
    assert await anonymously("/removebot") == "🤖 Ada left the table."
    assert (await anonymously("/settings")).startswith("⚙️ Settings")
    assert await anonymously("/language") == "Which language should I speak in this group?"
    await anonymously("/startgame")
    assert (await group.table()).stage is Stage.PLAYING
    assert await anonymously("/cancel") == "Cancel this game for everyone?"
    assert (await group.table()).stage is Stage.PLAYING


async def test_seat_and_hints_commands_sent_as_a_channel_or_anonymously_name_nobody(make_bot, telegram):
    """/join, /leave and /hints are about the sender's own seat: sent anonymously or on behalf of a
    channel, they name only Telegram's stand-in. Ann, seated, is not told she is not in the game."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    telegram.add_user(ANONYMOUS_ADMIN, "Group", username="GroupAnonymousBot")
    telegram.add_user(CHANNEL_BOT, "Channel", username="Channel_Bot")
    await group.open_lobby_and_join(joining=group.user_ids[:2])
    before = (await group.table()).to_json()
    anonymous = "Send this command as yourself, not anonymously: I cannot tell who sent it."
    channel = "Send this command as yourself, not on behalf of a channel."
    for text in ("/leave", "/join", "/hints"):
        update = as_the_group(telegram.command(ANONYMOUS_ADMIN, group.chat_id, text), group.chat_id, "Demo group")
        await group.send(update)
        assert last_text(telegram, group.chat_id) == anonymous, text
        await group.send(as_channel(telegram.command(CHANNEL_BOT, group.chat_id, text), -1001, "Ann's news"))
        assert last_text(telegram, group.chat_id) == channel, text
    assert (await group.table()).to_json() == before
    assert telegram.messages(ANONYMOUS_ADMIN) == telegram.messages(CHANNEL_BOT) == []


async def test_cancel_asks_first_and_only_the_host_or_an_admin_may(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    host = group.user_ids[0]
    bystander = group.user_ids[3]
    await group.open_lobby_and_join(joining=group.user_ids[:5])
    await group.start()
    game_id = group.game_id
    # A team is up for the vote: its message in the group carries the vote buttons.
    await propose(group, range(team_size(await group.table())))
    proposal = group.latest_with_button(group.chat_id, f"v:{game_id}:")

    reply = await command_text(group, bystander, "/cancel")
    assert reply == "Only Ann, who opened the game, or a group admin can cancel it."

    reply = await command_text(group, host, "/cancel")
    assert reply == "Cancel this game for everyone?"
    prompt = telegram.messages(group.chat_id)[-1]
    labels = {b["text"]: b["callback_data"] for b in prompt.buttons()}
    assert labels == {"Yes, cancel it": f"x:{game_id}:y", "No, keep playing": f"x:{game_id}:n"}

    async def press(user, label):
        update = telegram.press(user, group.chat_id, prompt.message_id, text=label)
        await group.send(update)
        return telegram.callback_answers[update["callback_query"]["id"]]["text"]

    before = (await group.table()).to_json()
    only_the_host = "Only Ann, who opened the game, or a group admin can cancel it."
    assert await press(bystander, "No, keep playing") == only_the_host
    assert await press(host, "No, keep playing") == "The game goes on."
    assert (await group.table()).to_json() == before
    # Answered, the question keeps no buttons: the host asks again.
    assert await command_text(group, host, "/cancel") == "Cancel this game for everyone?"
    prompt = telegram.messages(group.chat_id)[-1]
    assert await press(bystander, "Yes, cancel it") == "Only Ann, who opened the game, or a group admin can cancel it."
    assert (await group.table()).to_json() == before
    assert (await group.table()).stage is Stage.PLAYING
    # A group member outside the game who is no admin is refused too.
    assert await press(group.user_ids[5], "Yes, cancel it") == (
        "Only Ann, who opened the game, or a group admin can cancel it."
    )

    assert await press(host, "Yes, cancel it") == "Cancelled."
    table = await group.store.load(game_id)
    assert table.stage is Stage.CANCELLED
    # The proposal's message says so, in place, and lost its buttons: nobody can keep playing.
    cancelled = telegram.message(group.chat_id, proposal.message_id)
    assert plain_text(cancelled.text).endswith("\n\n🛑 The game was cancelled.")
    assert cancelled.buttons() == []
    assert not any(
        b.get("callback_data", "").startswith(("v:", "w:", "t:", "m:"))
        for m in telegram.messages(group.chat_id)
        for b in m.buttons()
    )
    # The vote, forged onto that message, is closed; nothing changes.
    vote = f"v:{game_id}:{public_view(table.game).ballot}:a"
    assert (await forged(group, host, group.chat_id, proposal.message_id, vote))["text"] == "This vote is closed."
    assert (await group.store.load(game_id)).to_json() == table.to_json()
    assert await group.store.games_of_user(host) == []
    assert await group.store.game_of_chat(group.chat_id) is None
    assert await command_text(group, host, "/cancel") == "There is no game to cancel."

    # The group can open a new game at once.
    await group.send(telegram.command(bystander, group.chat_id, "/newgame"))
    new_id = await group.store.game_of_chat(group.chat_id)
    assert new_id is not None and new_id != game_id
    assert "a new game is open" in last_text(telegram, group.chat_id)
    # A cancelled game leaves no record.
    assert await command_text(group, host, "/record") == "No game has finished in this group yet."


async def test_a_cancel_question_once_answered_keeps_no_buttons(make_bot, telegram):
    """/cancel's question kept its Yes and No after either was pressed: a question answered "No" in
    the lobby still read as open, and "Yes" on it cancelled the game an hour into play. Answered, it
    says what was chosen and keeps no buttons; an older question pressed after the game ended too."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    host = group.user_ids[0]
    await group.open_lobby_and_join()

    question = await command(group, host, "/cancel")
    assert await press(group, host, question, f"x:{group.game_id}:n") == "The game goes on."
    kept = telegram.message(group.chat_id, question.message_id)
    assert plain_text(kept.text) == "Cancel this game for everyone?\n\nThe game goes on."
    assert kept.buttons() == []
    assert (await group.table()).stage is Stage.LOBBY

    await group.start()
    first, second = await command(group, host, "/cancel"), await command(group, host, "/cancel")
    assert await press(group, host, first, f"x:{group.game_id}:y") == "Cancelled."
    cancelled = telegram.message(group.chat_id, first.message_id)
    assert plain_text(cancelled.text) == "Cancel this game for everyone?\n\nCancelled."
    assert cancelled.buttons() == []
    # The question asked twice: its other copy, pressed now, says the game is over and closes too.
    assert await press(group, host, second, f"x:{group.game_id}:y") == "This game is already over."
    stale = telegram.message(group.chat_id, second.message_id)
    assert plain_text(stale.text) == "Cancel this game for everyone?\n\nThis game is already over."
    assert stale.buttons() == []


def test_a_question_too_old_for_telegram_to_show_is_not_taken_for_the_one_pressed():
    """A press on a message older than Telegram shows bots arrives with an `InaccessibleMessage`, which
    has no keyboard: the settled question is then left as it is, instead of the press failing."""
    chat = Chat(-1001, Chat.SUPERGROUP)
    old = InaccessibleMessage(chat, 7)
    assert not carries(old, "x:abc:n")
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("No", callback_data="x:abc:n")]])
    shown = Message(7, datetime.now(UTC), chat, reply_markup=keyboard)
    assert carries(shown, "x:abc:n") and not carries(shown, "x:abc:y")


async def test_cancel_before_the_first_proposal_ends_the_start_message_and_closes_the_leaders_keyboard(
    make_bot, telegram
):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    host = group.user_ids[0]
    await group.open_lobby_and_join()
    await group.start()
    start = start_message(telegram, group.chat_id)
    table = await group.table()
    leader = table.players[table.game.leader].user_id
    keyboard = group.latest_with_button(leader, f"t:{group.game_id}:")
    choices = [button_data(keyboard, ":0"), button_data(keyboard, ":ok")]

    prompt = await command(group, host, "/cancel")
    assert await press(group, host, prompt, f"x:{group.game_id}:y") == "Cancelled."
    shown = plain_text(telegram.message(group.chat_id, start.message_id).text)
    assert shown.startswith("🕵️ The Resistance: the game has started with Ann, Bob, Cy, Dan, Eve.")
    assert shown.endswith("\n\n🛑 The game was cancelled.")
    cancelled = await group.table()
    assert cancelled.stage is Stage.CANCELLED
    # The leader's private keyboard of the cancelled game loses its buttons and says why; a press
    # on them sent anyway (a client that kept them) chooses nothing.
    closed = telegram.message(leader, keyboard.message_id)
    assert closed.buttons() == [] and plain_text(closed.text).endswith("\n\n🛑 The game was cancelled.")
    for data in choices:
        assert (await forged(group, leader, leader, keyboard.message_id, data))["text"] == "This choice is closed."
    assert (await group.table()).to_json() == cancelled.to_json()


async def test_cancel_a_lobby(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=3)
    await group.open_lobby_and_join()
    lobby = lobby_message(telegram, group.chat_id)
    await command_text(group, group.user_ids[0], "/cancel")
    prompt = telegram.messages(group.chat_id)[-1]
    await group.send(telegram.press(group.user_ids[0], group.chat_id, prompt.message_id, text="Yes, cancel it"))
    assert (await group.table()).stage is Stage.CANCELLED
    assert plain_text(telegram.message(group.chat_id, lobby.message_id).text) == "🕵️ This lobby was cancelled."
    assert telegram.message(group.chat_id, lobby.message_id).buttons() == []
    assert await group.store.games_of_user(group.user_ids[1]) == []


# ---------------------------------------------------------------- looking


async def test_status_shows_the_track_and_the_leader(make_bot, telegram):
    application = await make_bot(4)
    group = SimulatedGroup(telegram, application, players=5)
    assert (
        await command_text(group, group.user_ids[0], "/status") == "No game is running here. Start one with /newgame."
    )
    await group.open_lobby_and_join(joining=group.user_ids[:2])
    lobby_again = await command_text(group, group.user_ids[0], "/status")
    assert "2 players of 10: Ann, Bob" in lobby_again
    assert telegram.messages(group.chat_id)[-1].buttons()[0]["url"].startswith(BOT_LINK)
    # Only the new copy of the lobby keeps the Join button.
    assert sum(any("url" in b for b in m.buttons()) for m in telegram.messages(group.chat_id)) == 1
    for user in group.user_ids[2:]:
        await group.send(telegram.open_link(user, lobby_message(telegram, group.chat_id).buttons()[0]["url"]))
    await group.start()

    # Before the first proposal, /status is the start message again: who leads, choosing in private.
    table = await group.table()
    leader = table.name(table.game.leader)
    status = await command_text(group, group.user_ids[2], "/status")
    assert status.startswith("🕵️ The Resistance: the game has started with Ann, Bob, Cy, Dan, Eve.")
    assert status.endswith(f"➡️ Mission 1: {leader} leads, choosing a team of 2 in private.")
    assert "Next mission" not in status
    # The leader's buttons are in the leader's private chat, never in the group.
    assert not any(
        b.get("callback_data", "").startswith("t:") for m in telegram.messages(group.chat_id) for b in m.buttons()
    )

    # While the team is voted on, /status posts the proposal again with the vote buttons, and
    # the votes, with the mission's result, are edited into that new copy.
    await propose(group, [0, 1])
    status = await command_text(group, group.user_ids[2], "/status")
    assert status.splitlines()[:3] == [
        "Missions: ⬜⬜⬜⬜⬜   Rejected teams: 0/5",
        f"Mission 1 · proposal 1 · leader {leader}",
        "Team: Ann, Bob",
    ]
    reposted = telegram.messages(group.chat_id)[-1]
    assert [b["text"] for b in reposted.buttons()] == ["👍 Approve", "👎 Reject", "⏳ Waiting for…"]
    await vote_all(group, True)
    for seat in (0, 1):
        await group.press(group.user_ids[seat], group.user_ids[seat], "c:", ":s")
    closed = plain_text(telegram.message(group.chat_id, reposted.message_id).text)
    assert "Approved 5–0." in closed and "Mission 1 succeeded ✅" in closed

    policy = CleanTeams()
    while (await group.table()).game.successes < 1:
        await group.step(policy)
    table = await group.table()
    status = await command_text(group, group.user_ids[2], "/status")
    assert status.startswith("Missions: ✅⬜⬜⬜⬜")
    assert "Mission 1 succeeded ✅ with 0 Fail cards." in status
    assert status.endswith(f"➡️ Mission 2: {table.name(table.game.leader)} leads, choosing a team of 3 in private.")

    # A failed mission shows ❌.
    class SpyTeam(AlwaysApprove):
        def choose_team(self, table, seat, size):
            spy = table.game.spies[0]
            return sorted([spy, *[s for s in range(5) if s != spy][: size - 1]])

        def fail(self, table, seat):
            return seat in table.game.spies

    while len((await group.table()).game.played_rounds) < 2:
        await group.step(SpyTeam())
    status = await command_text(group, group.user_ids[2], "/status")
    assert status.startswith("Missions: ✅❌⬜⬜⬜")
    assert "Mission 2 failed ❌ with 1 Fail card." in status


async def test_after_status_only_one_group_message_carries_the_vote_buttons(make_bot, telegram):
    group = await started(make_bot, telegram, players=5, seed=3)
    chat = group.chat_id
    await propose(group, range(team_size(await group.table())))
    first = group.latest_with_button(chat, "v:")

    def with_vote_buttons():
        return [
            m for m in telegram.messages(chat) if any(b.get("callback_data", "").startswith("v:") for b in m.buttons())
        ]

    for _ in range(2):
        await command(group, group.user_ids[1], "/status")
    [live] = with_vote_buttons()
    assert live.message_id == telegram.messages(chat)[-1].message_id != first.message_id
    # The older copies keep their text, without buttons.
    first = telegram.message(chat, first.message_id)
    assert first.buttons() == [] and plain_text(first.text) == plain_text(live.text)
    # The team is approved: the vote closes on the live copy, its votes kept for the result, and no
    # group message has vote buttons now.
    await vote_all(group, True)
    assert with_vote_buttons() == []
    assert "The mission is under way" in plain_text(telegram.message(chat, live.message_id).text)
    # The votes are revealed on the live copy with the result.
    for seat in range(team_size(await group.table())):
        await group.press(group.user_ids[seat], group.user_ids[seat], "c:", ":s")
    assert with_vote_buttons() == []
    assert "Approved 5–0." in plain_text(telegram.message(chat, live.message_id).text)
    assert "Approved" not in plain_text(telegram.message(chat, first.message_id).text)


@pytest.mark.parametrize(
    ("players", "setup"),
    [
        (5, "2 spies · teams 2-3-2-3-3"),
        (7, "3 spies · teams 2-3-3-4*-4 (* needs two Fails)"),
        (10, "4 spies · teams 3-4-4-5*-5 (* needs two Fails)"),
    ],
)
async def test_start_message_and_status_show_the_public_setup(make_bot, telegram, players, setup):
    """How many spies and each mission's team size are public, as the rulebook's chart is; who is a spy is not."""
    group = await started(make_bot, telegram, players=players)
    message = start_message(telegram, group.chat_id)
    start = plain_text(message.text)
    table = await group.table()
    leader, size = table.name(table.game.leader), team_size(table)
    names = ", ".join(p.name for p in table.players)
    assert start == (
        f"🕵️ The Resistance: the game has started with {names}. Roles were sent in private.\n"
        f"{setup}\n\n➡️ Mission 1: {leader} leads, choosing a team of {size} in private."
    )
    # Its header names no "next mission" or proposal (none was made yet), and no spy.
    assert "Next mission" not in start and "proposal" not in start
    assert message.buttons() == []
    status = await command_text(group, group.user_ids[1], "/status")
    assert status == start
    assert setup in status.splitlines()


async def test_startgame_posts_the_start_as_a_new_message_and_closes_the_lobby(make_bot, telegram):
    """An edit notifies nobody: the start is a new group message, which does. The lobby's message
    is closed in one line without buttons (its Join link would seat nobody now); nothing else is
    posted in the group."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    lobby = lobby_message(telegram, group.chat_id)
    calls = len(telegram.calls)
    await group.start()
    in_group = [
        (method, plain_text(str(params.get("text", ""))))
        for method, params in telegram.calls[calls:]
        if method in ("sendMessage", "editMessageText") and int(params.get("chat_id", 0)) == group.chat_id
    ]
    table = await group.table()
    leader, size = table.name(table.game.leader), team_size(table)
    start = (
        "🕵️ The Resistance: the game has started with Ann, Bob, Cy, Dan, Eve. Roles were sent in private.\n"
        f"2 spies · teams 2-3-2-3-3\n\n➡️ Mission 1: {leader} leads, choosing a team of {size} in private."
    )
    assert in_group == [
        ("editMessageText", "🕵️ This lobby is closed: the game has started."),
        ("sendMessage", start),
    ]
    closed = telegram.message(group.chat_id, lobby.message_id)
    assert plain_text(closed.text) == "🕵️ This lobby is closed: the game has started." and closed.buttons() == []
    posted = telegram.messages(group.chat_id)[-1]
    assert posted.from_bot and posted.message_id > lobby.message_id and plain_text(posted.text) == start
    # Later edits of the board before the first proposal go to the new message, not the lobby's.
    assert await group.store.redis.hget(keys.messages(group.game_id), "board:0") == (
        f"{group.chat_id}:{posted.message_id}"
    )


async def test_rules_help_and_command_menu(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    rules = await command_text(group, user, "/rules")
    assert rules.startswith("The Resistance in short") and "Three successful missions win" in rules
    help_text = await command_text(group, user, "/help")
    assert "\n\nThe Resistance: commands\n" in help_text
    for name, _ in COMMANDS:
        assert f"/{name}" in help_text or name == "help"
    # In private too.
    assert "\n\nThe Resistance: commands\n" in await command_text(group, user, "/help", chat_id=user)
    assert (await command_text(group, user, "/start", chat_id=user)).startswith("Hello! Add me to a group")

    menu = telegram.commands[None]
    assert [c["command"] for c in menu] == [name for name, _ in COMMANDS]
    assert {"newgame", "join", "startgame", "cancel", "status", "record", "rules", "help"} <= {
        c["command"] for c in menu
    }
    assert all(c["description"] for c in menu)


async def test_rules_say_which_lobbies_start_by_themselves(make_bot, telegram):
    """/rules said that a lobby of five players starts by itself at its time: one of fewer than two
    people closes, and so does one Play again opened, unless it is started with /startgame."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    rules = await command_text(group, group.user_ids[0], "/rules")
    assert (
        "A lobby that has not reached 5 players, 2 of them people, in time closes; one that has starts by "
        "itself, unless Play again opened it: whoever pressed Play again, or an admin, starts that one with "
        "/startgame."
    ) in rules


async def test_an_unknown_command_in_private_is_answered_and_in_a_group_left_alone(make_bot, telegram):
    """A newcomer's typo in private (/newgmae, /play) got no answer at all; in a group a command the
    bot does not know may be another bot's, so it stays quiet there."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    for text in ("/newgmae", "/play now", "/HELPME"):
        assert await command_text(group, user, text, chat_id=user) == (
            "I do not know this command. /help lists the ones I know."
        )
    await group.send(telegram.command(user, group.chat_id, "/play"))
    assert [m for m in telegram.messages(group.chat_id) if m.from_bot] == []
    # The bot's own commands are unchanged.
    assert "\n\nThe Resistance: commands\n" in await command_text(group, user, "/help", chat_id=user)


async def test_words_written_to_the_bot_in_private_get_a_pointer_and_in_a_group_nothing(make_bot, telegram):
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=1)
    user = group.user_ids[0]
    await group.send(telegram.text(user, user, "hi, how do I play?"))
    assert plain_text(telegram.messages(user)[-1].text) == "I read only commands and buttons. /help lists the commands."
    await group.send(telegram.text(user, group.chat_id, "who is the spy?"))
    assert [m for m in telegram.messages(group.chat_id) if m.from_bot] == []


async def test_record_before_and_after_a_finished_game(make_bot, telegram):
    application = await make_bot(2)
    group = SimulatedGroup(telegram, application, players=5)
    assert await command_text(group, group.user_ids[0], "/record") == "No game has finished in this group yet."
    await group.open_lobby_and_join()
    await group.start()
    table = await group.play(CleanTeams())
    assert table.game.winner is Side.RESISTANCE

    await group.send(telegram.command(group.user_ids[3], group.chat_id, "/record"))
    message = telegram.messages(group.chat_id)[-1]
    assert message.document is not None
    assert message.document.filename == f"resistance-{group.game_id}.json"
    assert message.text == f"The record of game {group.game_id} (resistance-record/1)."
    record = parse_record(json.loads(message.document.data))
    assert record.id == group.game_id and record.players == 5
    assert record.outcome is not None
    assert record.outcome.winner is Side.RESISTANCE
    assert record.outcome.reason is EndReason.THREE_SUCCESSFUL_MISSIONS
    assert record.outcome.spies == table.game.spies
    assert len(record.played_missions) == 3


# ---------------------------------------------------------------- private messages


def private_texts(telegram, user_id: int) -> list[str]:
    return [plain_text(m.text or "") for m in telegram.messages(user_id) if m.from_bot]


async def test_start_sends_what_never_arrived_once_however_often_it_is_pressed(make_bot, telegram):
    application = await make_bot(6)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    # Everyone blocks the bot before the game starts: no role and no leader keyboard arrive.
    for user in group.user_ids:
        telegram.block(user)
    await group.start()
    table = await group.table()
    game = table.game
    messages = await group.store.redis.hgetall(keys.messages(group.game_id))
    assert not any(key.startswith(("role:", "lead:", "card:")) for key in messages)
    leader_seat = game.leader
    leader = table.players[leader_seat].user_id
    # The group is told who cannot be reached, and that the game waits for the leader alone.
    group_texts = "\n".join(texts(telegram, group.chat_id))
    for seat, player in enumerate(table.players):
        assert f"{player.name}, I cannot write to you in private, where I send what only you may see." in group_texts
        waited = f"{player.name}, I cannot write to you in private, so the game is waiting for you." in group_texts
        assert waited == (seat == leader_seat)

    def roles(user):
        return [text for text in private_texts(telegram, user) if text.startswith("Your game in «Demo group»")]

    def keyboards(user):
        return [
            m for m in telegram.messages(user) if any(b.get("callback_data", "").startswith("t:") for b in m.buttons())
        ]

    # The leader presses Start four times: the role and the keyboard come once.
    for _ in range(4):
        await group.send(telegram.command(leader, leader, "/start"))
    assert len(roles(leader)) == 1 and len(keyboards(leader)) == 1
    hello = "Hello! While you play, your role, your cards and your /hints come to this chat."
    assert private_texts(telegram, leader).count(hello) == 4
    assert f"role:{leader_seat}" in await group.store.redis.hgetall(keys.messages(group.game_id))

    # Another player: the role only, once.
    member_seat = next(s for s in range(5) if s != leader_seat)
    member = table.players[member_seat].user_id
    for _ in range(4):
        await group.send(telegram.command(member, member, "/start"))
    assert len(roles(member)) == 1 and keyboards(member) == []

    # The keyboard that came late works: the team is proposed with it, and voted through.
    await propose(group, sorted({member_seat, leader_seat}))
    telegram.block(member)  # again
    await vote_all(group, True)
    table = await group.table()
    assert table.game.phase is Phase.MISSION
    ballot = public_view(table.game).ballot
    # The member's card prompt did not arrive, and comes once with Start.
    assert f"card:{ballot}:{member_seat}" not in await group.store.redis.hgetall(keys.messages(group.game_id))
    for _ in range(4):
        await group.send(telegram.command(member, member, "/start"))
    prompts = [text for text in private_texts(telegram, member) if "Play your card." in text]
    assert prompts == ["«Demo group», mission 1: you are on the team. Play your card.\n👍 Ann, Bob, Cy, Dan, Eve\n👎 —"]
    assert len(roles(member)) == 1
    await group.press(member, member, "c:", ":s")
    assert member_seat in (await group.table()).game.played_seats


async def test_a_player_sent_to_the_private_chat_by_the_group_is_not_told_to_start_a_game(make_bot, telegram):
    """The group says a player's role did not reach them, with a button to open the private chat;
    there the player pressing Start was greeted "Add me to a group and send /newgame there"."""
    application = await make_bot(6)
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    player = group.user_ids[3]
    telegram.block(player)
    await group.start()
    notices = [m for m in telegram.messages(group.chat_id) if "Dan, I cannot write" in plain_text(m.text or "")]
    notice = notices[0]  # his role did not reach him (nor his leader's keyboard: a second notice)
    await group.send(telegram.open_link(player, notice.buttons()[0]["url"]))
    joined, greeting, role, *_ = private_texts(telegram, player)
    assert joined == "You joined the game in «Demo group».\nWhen the game starts, your role comes in our private chat."
    assert greeting == "Hello! While you play, your role, your cards and your /hints come to this chat."
    assert role.startswith("Your game in «Demo group»")
    # Someone who plays nowhere is still told how to start.
    stranger = group.user_ids[4]
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/cancel"))
    await group.press(group.user_ids[0], group.chat_id, "x:", ":y")
    assert await command_text(group, stranger, "/start", chat_id=stranger) == (
        "Hello! Add me to a group and send /newgame there to play The Resistance."
    )


async def test_roles_cards_the_leaders_keyboard_reminders_and_hints_cannot_be_forwarded(make_bot, telegram):
    application = await make_bot(11)
    service = application.bot_data["service"]
    now = [1_000_000.0]
    service.clock = lambda: now[0]
    group = SimulatedGroup(telegram, application, players=5)
    await group.open_lobby_and_join()
    await group.start()
    table = await group.table()
    # Half the leader's time: the leader is reminded, in private.
    now[0] = table.reminder_at
    assert await service.fire_due() == 1
    await propose(group, range(team_size(table)))
    await vote_all(group, True)
    user = table.players[0].user_id
    await command(group, user, "/hints", chat_id=user)
    await command(group, user, "/hints")  # asked in the group, sent in private
    role = next(m for m in telegram.messages(user) if plain_text(m.text or "").startswith("Your game in"))
    await press(group, user, role, f"h:{group.game_id}")

    sent = [
        (int(p["chat_id"]), plain_text(p["text"]), p.get("protect_content"))
        for m, p in telegram.calls
        if m == "sendMessage"
    ]
    players = {p.user_id for p in table.players}
    private = [(text, protected) for chat, text, protected in sent if chat in players]

    def protected(kind: str, test) -> None:
        found = [p for text, p in private if test(text)]
        assert found, f"no {kind} was sent"
        assert all(p is True for p in found), kind

    protected("role", lambda text: text.startswith("Your game in «Demo group»"))
    protected("leader's keyboard", lambda text: "you are the leader" in text)
    protected("card prompt", lambda text: "Play your card." in text)
    protected("reminder", lambda text: text.startswith("⏰ «Demo group» waits for"))
    protected("hints", lambda text: text.startswith("🔎 «Demo group»"))
    assert len([text for text, _ in private if text.startswith("🔎 «Demo group»")]) == 3
    # What the whole group may see is not protected.
    assert all(not protected for chat, _, protected in sent if chat == group.chat_id)


# ---------------------------------------------------------------- one player, two groups


async def test_a_player_in_two_groups(make_bot, telegram):
    application = await make_bot(7)
    north = SimulatedGroup(telegram, application, chat_id=-100, title="North", players=5)
    south = SimulatedGroup(telegram, application, chat_id=-200, title="South", players=4)
    shared = north.user_ids[1]  # Bob sits at both tables

    await north.open_lobby_and_join()
    await south.open_lobby_and_join()
    await south.send(telegram.open_link(shared, lobby_message(telegram, south.chat_id).buttons()[0]["url"]))
    assert texts(telegram, shared)[-1] == (
        "You joined the game in «South».\nWhen the game starts, your role comes in our private chat."
    )
    await north.start()
    await south.start()
    assert await north.store.games_of_user(shared) == sorted([north.game_id, south.game_id])

    north_table, south_table = await north.table(), await south.table()
    assert south_table.players[-1].user_id == shared and south_table.players[-1].name == "Bob (2)"
    roles = [text for text in texts(telegram, shared) if text.startswith("Your game in")]
    assert len(roles) == 2
    assert roles[0].startswith("Your game in «North»") and roles[1].startswith("Your game in «South»")
    for text, table in ((roles[0], north_table), (roles[1], south_table)):
        seat = table.seat_of(shared)
        assert ("you are a spy" in text) == (seat in table.game.spies)

    # Every team includes the shared player, so both card prompts wait in the same private chat.
    class WithShared(AlwaysApprove):
        def choose_team(self, table, seat, size):
            mine = table.seat_of(shared)
            return sorted([mine, *[s for s in range(len(table.players)) if s != mine][: size - 1]])

        def fail(self, table, seat):
            return False

    policy = WithShared()
    while True:
        moved = [await north.step(policy), await south.step(policy)]
        if not any(moved):
            break
    north_table, south_table = await north.table(), await south.table()
    assert north_table.game.winner is Side.RESISTANCE and south_table.game.winner is Side.RESISTANCE
    assert north_table.id != south_table.id

    # Each group's card prompts and leader keyboards came to the same private chat, each naming its
    # group, and each was edited to what was played or proposed there.
    private = texts(telegram, shared)
    for table in (north_table, south_table):
        mine = [text for text in private if text.startswith(f"«{table.chat_title}»")]
        cards = [text for text in mine if "you played" in text]
        assert cards == [
            f"«{table.chat_title}», mission {r.mission}: you played ✅ Success." for r in table.game.played_rounds
        ]
        led = [p for r in table.game.rounds for p in r.proposals if p.leader == table.seat_of(shared)]
        proposed = [text for text in mine if "you proposed" in text]
        assert len(proposed) == len(led)
        assert not any("Play your card." in text or "you are the leader" in text for text in mine)
    for group, table in ((north, north_table), (south, south_table)):
        record = parse_record(json.loads(await group.store.last_record(group.chat_id)))
        assert record.id == table.id and record.outcome.winner is table.game.winner
        final = last_message(telegram, group.chat_id)
        assert "\n🏁 The Resistance wins: three missions succeeded." in plain_text(final.text)
        assert [b["text"] for b in final.buttons()] == ["🔁 Play again"]
    assert await north.store.games_of_user(shared) == []


# ---------------------------------------------------------------- the two-fail fourth mission


class Planned(AlwaysApprove):
    """Missions 1 and 3 clean, mission 2 failed by one spy, mission 4 with two spies failing `fails` times."""

    def __init__(self, fails_on_four: int) -> None:
        super().__init__()
        self.fails_on_four = fails_on_four

    @staticmethod
    def mission(table) -> int:
        return current_mission(table)

    def choose_team(self, table, seat, size):
        spies = list(table.game.spies)
        honest = [s for s in range(len(table.players)) if s not in spies]
        spies_on_team = {1: 0, 2: 1, 3: 0, 4: 2, 5: 0}[self.mission(table)]
        return sorted(spies[:spies_on_team] + honest[: size - spies_on_team])

    def fail(self, table, seat):
        if seat not in table.game.spies:
            return False
        mission = self.mission(table)
        on_team = [s for s in table.game.current_round.team if s in table.game.spies]
        if mission == 2:
            return True
        if mission == 4:
            return seat in on_team[: self.fails_on_four]
        return False


@pytest.mark.parametrize("fails", [1, 2])
async def test_fourth_mission_with_seven_players_needs_two_fails(make_bot, telegram, fails):
    group = await started(make_bot, telegram, players=7, seed=5)
    policy = Planned(fails)
    while len((await group.table()).game.played_rounds) < 4:
        assert await group.step(policy)

    game = (await group.table()).game
    fourth = game.played_rounds[3]
    assert (fourth.mission, fourth.team_size, fourth.fails_required, fourth.fails) == (4, 4, 2, fails)
    assert game.mission_track()[:3] == (True, False, True)
    shown = "\n".join(texts(telegram, group.chat_id))
    if fails == 1:
        assert "Mission 4 succeeded ✅ with 1 Fail card." in shown
        assert "Mission 4 failed" not in shown
        assert game.is_over and game.winner is Side.RESISTANCE
        # The game's end is told on the last proposal's own message, not in a message of its own.
        final = last_text(telegram, group.chat_id)
        assert final.startswith("Missions: ✅❌✅✅⬜   Rejected teams: 0/5\nMission 4 · proposal 1")
        assert "\n\n🏁 The Resistance wins: three missions succeeded.\nMissions: ✅❌✅✅⬜\n" in final
    else:
        assert "Mission 4 failed ❌ with 2 Fail cards." in shown
        assert "Mission 4 succeeded" not in shown
        assert not game.is_over and game.phase is Phase.PROPOSING
        assert game.mission_track() == (True, False, True, False, None)
        assert "Missions: ✅❌✅❌⬜" in await command_text(group, group.user_ids[0], "/status")
    # One Fail card on mission 2 sank it, as any mission but the 7-player fourth.
    assert "Mission 2 failed ❌ with 1 Fail card." in shown
    assert game_rules.fails_required(7, 2) == 1


async def test_names_with_html_characters_are_escaped_in_html_replies(make_bot, telegram):
    """Telegram refuses HTML it cannot parse: a host called "Tom & <Jerry>" must not break a refusal."""
    application = await make_bot(3)
    group = SimulatedGroup(telegram, application, players=6)
    telegram.add_user(group.user_ids[0], "Tom & <Jerry>")
    await group.open_lobby_and_join()
    await group.send(telegram.command(group.user_ids[1], group.chat_id, "/startgame"))
    method, params = next((m, p) for m, p in reversed(telegram.calls) if m == "sendMessage")
    assert params["parse_mode"] == "HTML"
    assert params["text"] == "Only Tom &amp; &lt;Jerry&gt;, who opened the game, or a group admin can start it."
    # The same refusal as a callback answer is plain text.
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/cancel"))
    confirm = telegram.messages(group.chat_id)[-1]
    update = telegram.press(group.user_ids[1], group.chat_id, confirm.message_id, text="Yes, cancel it")
    await group.send(update)
    answer = telegram.callback_answers[update["callback_query"]["id"]]["text"]
    assert answer == "Only Tom & <Jerry>, who opened the game, or a group admin can cancel it."


async def test_a_player_who_leaves_the_group_gives_up_their_seat_in_its_lobby(make_bot, telegram):
    """A player who left the group, or whom an admin removed from it, stayed seated in its open lobby:
    the game started with them (by /startgame, or by itself when the lobby's time ran out), dealt them
    a role, and waited at every vote for someone who could not see the board. Their seat is given up,
    as with /leave; once the roles are dealt, a seat stays taken."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=8)
    admin, *_, troll, leaver = group.user_ids
    await group.open_lobby_and_join(joining=group.user_ids[:7] + [leaver])
    lobby = lobby_message(telegram, group.chat_id)
    await group.send(telegram.leave_group(group.chat_id, leaver))
    await group.send(telegram.leave_group(group.chat_id, troll, by_user_id=admin))
    assert [p.user_id for p in (await group.table()).players] == group.user_ids[:6]
    assert "6 players of 10: Ann, Bob, Cy, Dan, Eve, Fay" in plain_text(lobby_message(telegram, group.chat_id).text)
    assert lobby_message(telegram, group.chat_id).message_id == lobby.message_id
    assert await group.store.games_of_user(leaver) == await group.store.games_of_user(troll) == []
    await group.start()
    assert (await group.table()).stage is Stage.PLAYING
    assert len((await group.table()).game.spies) == 2  # a game of six
    # Once the game runs, a player who leaves keeps their seat (the deadlines play it).
    before = (await group.table()).to_json()
    await group.send(telegram.leave_group(group.chat_id, group.user_ids[5]))
    assert (await group.table()).to_json() == before


async def test_word_that_a_player_left_the_group_arriving_after_they_came_back_keeps_their_seat(
    make_bot, telegram
):
    """Telegram's word that a player left the group reaches the bot late: after they came back to it
    (webhook workers take updates in parallel, and Telegram sends one again whose worker died). They
    are in the group: their seat in its lobby stays. Word of a leave that is still true gives it up."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=6)
    await group.open_lobby_and_join()
    player = group.user_ids[4]
    left = telegram.leave_group(group.chat_id, player)
    await group.send(telegram.join_group(group.chat_id, player))
    before = (await group.table()).players
    await group.send(left)
    assert (await group.table()).players == before and player in [p.user_id for p in before]
    await group.send(telegram.leave_group(group.chat_id, player))
    assert player not in [p.user_id for p in (await group.table()).players]
    # Nobody seated: Telegram is not asked (an admin removing many spammers spends no flood limit on it).
    telegram.add_user(77, "Spam")
    asked = sum(method == "getChatMember" for method, _ in telegram.calls)
    await group.send(telegram.leave_group(group.chat_id, 77))
    assert sum(method == "getChatMember" for method, _ in telegram.calls) == asked


async def test_leave_during_a_game_says_what_a_player_can_do(make_bot, telegram):
    """A player who wants out of a running game is told the truth: the seat stays, the deadlines play
    it, and who may end the game; nothing changes."""
    group = SimulatedGroup(telegram, await make_bot(1), players=5)
    await group.open_lobby_and_join()
    await group.start()
    before = await group.table()
    answer = await command_text(group, group.user_ids[3], "/leave")
    assert answer == (
        "The game has started, and a seat cannot be left empty now. If you stop playing, the deadlines play "
        "your turns; whoever opened the game or a group admin can end it with /cancel."
    )
    after = await group.table()
    assert (after.players, after.game) == (before.players, before.game)


async def test_cancel_during_a_mission_closes_the_card_prompts_still_open(make_bot, telegram):
    """Cancelled while a team plays its cards: whoever has not played sees their prompt closed and
    why; whoever has keeps what they played."""
    group = SimulatedGroup(telegram, await make_bot(2), players=5)
    await group.open_lobby_and_join()
    await group.start()
    team = [0, 1]
    await propose(group, team)
    await vote_all(group, approve=True)
    first, second = (group.user_ids[seat] for seat in team)
    await group.press(first, first, "c:", ":s")
    played = group.latest_with_button(second, "c:")  # the one still open
    first_prompt = [m for m in telegram.messages(first) if m.from_bot and "you played" in (m.text or "")]

    prompt = await command(group, group.user_ids[0], "/cancel")
    assert await press(group, group.user_ids[0], prompt, f"x:{group.game_id}:y") == "Cancelled."
    still_open = telegram.message(second, played.message_id)
    assert still_open.buttons() == [] and plain_text(still_open.text).endswith("\n\n🛑 The game was cancelled.")
    [kept] = first_prompt
    assert plain_text(telegram.message(first, kept.message_id).text).endswith("you played ✅ Success.")


async def test_a_lobby_whose_host_left_says_who_can_start_it_in_a_sentence(make_bot, telegram):
    """The host left their lobby: it read "the host or a group admin can start with /startgame.",
    a sentence starting in lower case (and naming a "host" no other message speaks of)."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, players=6)
    await group.open_lobby_and_join()
    await group.send(telegram.command(group.user_ids[0], group.chat_id, "/leave"))
    lobby = plain_text(lobby_message(telegram, group.chat_id).text)
    assert "\nWhoever opened the game or a group admin can start with /startgame.\n" in lobby
    assert "the host" not in lobby


async def test_whoever_opened_a_game_they_do_not_play_in_cannot_cancel_it_once_it_has_started(make_bot, telegram):
    """A game is its players': whoever opened the lobby but never sat down in it, or left it before
    the game started (no admin), would otherwise end the others' game whenever they liked. A group
    admin still may."""
    application = await make_bot()
    group = SimulatedGroup(telegram, application, players=7)
    admin, host, *others = group.user_ids
    telegram.add_group(group.chat_id, "Demo group", admins=[admin])
    await group.send(telegram.command(host, group.chat_id, "/newgame"))
    group.game_id = await group.store.game_of_chat(group.chat_id)
    link = lobby_message(telegram, group.chat_id).buttons()[0]["url"]
    for user in others:
        await group.send(telegram.open_link(user, link))
    assert (await group.table()).seat_of(host) is None  # they never sat down (or left: the same)
    await group.send(telegram.command(host, group.chat_id, "/startgame"))
    assert (await group.table()).stage is Stage.PLAYING

    refused = "You do not play in this game: only a group admin can cancel it."
    assert await command_text(group, host, "/cancel") == refused
    assert await command_text(group, admin, "/cancel") == "Cancel this game for everyone?"
    question = telegram.messages(group.chat_id)[-1]
    before = (await group.table()).to_json()
    update = telegram.press(host, group.chat_id, question.message_id, text="Yes, cancel it")
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == refused
    assert (await group.table()).to_json() == before
    update = telegram.press(admin, group.chat_id, question.message_id, text="Yes, cancel it")
    await group.send(update)
    assert telegram.callback_answers[update["callback_query"]["id"]]["text"] == "Cancelled."
    assert (await group.table()).stage is Stage.CANCELLED
