"""A group upgraded to a supergroup: Telegram gives it a new chat id and refuses the old one. Its lobby
or running game, its settings, its language and its last record go on in the supergroup as if nothing
happened, whichever of Telegram's signals (the two service messages, the ChatMigrated error) comes first,
however often, and in whichever worker."""

from __future__ import annotations

import asyncio
import json

import pytest
from telegram import Update

from engine import Phase
from tests.bot_helpers import (
    CleanTeams,
    RejectEverything,
    button_data,
    command,
    command_text,
    last_text,
    lobby_message,
    press,
    propose,
    texts,
    vote_all,
)
from tgbot import keys
from tgbot.moves import play
from tgbot.offline.simulation import SimulatedGroup, plain_text
from tgbot.render import menus
from tgbot.settings import GroupSettings
from tgbot.store import FINISHED_GAME_SECONDS
from tgbot.table import Stage, Table, TableFormatError

pytestmark = pytest.mark.usefixtures("no_handler_errors")

OLD, NEW = -100, -1001234500100


def bot_messages(telegram, chat_id: int) -> list[tuple]:
    """The bot's messages in a chat as they read now, with how often each was edited."""
    return [(m.message_id, m.text, m.reply_markup, m.edits) for m in telegram.messages(chat_id) if m.from_bot]


async def started_in_basic_group(make_bot, telegram, players: int = 5) -> SimulatedGroup:
    """A game of `players` started in a basic group (only a basic group can become a supergroup)."""
    group = SimulatedGroup(telegram, await make_bot(1), chat_id=OLD, players=players, basic=True)
    await group.open_lobby_and_join()
    await group.start()
    return group


def calls_to(telegram, chat_id: int, start: int) -> list[str]:
    """The Bot API methods the bot called for the chat from its call number `start` on."""
    return [method for method, params in telegram.calls[start:] if str(params.get("chat_id")) == str(chat_id)]


async def upgrade(group: SimulatedGroup, *, deliver=("to", "from")) -> tuple[dict, dict]:
    """The group becomes the supergroup NEW; the service messages named in `deliver` reach the bot."""
    to_old, from_new = group.upgrade_to_supergroup(NEW)
    for which in deliver:
        await group.send(to_old if which == "to" else from_new)
    return to_old, from_new


async def test_a_lobby_goes_on_in_the_supergroup(make_bot, telegram):
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, chat_id=OLD, players=5, basic=True)
    await group.open_lobby_and_join(joining=group.user_ids[:3])
    link = next(b["url"] for b in lobby_message(telegram, OLD).buttons() if "url" in b)
    left_behind, calls = bot_messages(telegram, OLD), len(telegram.calls)

    await upgrade(group)
    assert await group.store.game_of_chat(NEW) == group.game_id
    assert await group.store.game_of_chat(OLD) is None
    assert (await group.table()).chat_id == NEW

    # One joins by the lobby's link (its message stayed in the old chat), one with /join in the new group.
    fourth, fifth = group.user_ids[3:]
    await group.send(telegram.open_link(fourth, link))
    await group.send(telegram.command(fifth, fifth, "/start"))
    assert "joined" in (await command_text(group, fifth, "/join")).lower()
    # The lobby's message cannot be edited in the old chat: it is posted again in the new one.
    lobby = plain_text(lobby_message(telegram, NEW).text)
    assert all(name in lobby for name in ("Ann", "Bob", "Cy", "Dan", "Eve"))
    await command(group, group.user_ids[0], "/status")

    await group.start()
    table = await group.play(CleanTeams())
    assert table.game.is_over and table.chat_id == NEW
    assert "The Resistance wins" in last_text(telegram, NEW)
    assert bot_messages(telegram, OLD) == left_behind
    assert calls_to(telegram, OLD, calls) == []  # nothing was even tried there


async def test_a_lobby_that_moved_to_the_supergroup_stays_open_when_the_bot_leaves_the_old_group(make_bot, telegram):
    """Deleting a supergroup, Telegram tells the bot it left the basic group it came from as well, and
    may in time tell it so on the upgrade itself: the old chat's id is not the group of a lobby that
    moved on to the supergroup, which stays open. Only leaving the supergroup closes it."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, chat_id=OLD, players=5, basic=True)
    await group.open_lobby_and_join()
    await upgrade(group)
    before = {user: texts(telegram, user) for user in group.user_ids}

    await group.send(telegram.remove_bot(OLD))
    table = await group.table()
    assert table.stage is Stage.LOBBY and table.chat_id == NEW
    assert await group.store.game_of_chat(NEW) == group.game_id
    assert {user: texts(telegram, user) for user in group.user_ids} == before

    await group.send(telegram.remove_bot(NEW))
    assert (await group.table()).stage is Stage.CANCELLED
    for user in group.user_ids:
        assert texts(telegram, user)[len(before[user]) :] == [
            "I was removed from the group «Demo group», so the game that was being gathered there will not start."
        ]


async def test_a_command_sent_just_before_the_upgrade_counts_in_the_supergroup(make_bot, telegram):
    """A /join sent in the basic group reaches the bot only after the group and its lobby moved: it
    joins the moved lobby, and its answer goes to the supergroup."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, chat_id=OLD, players=4, basic=True)
    await group.open_lobby_and_join(joining=group.user_ids[:3])
    late = group.user_ids[3]
    await group.send(telegram.command(late, late, "/start"))
    join = telegram.command(late, OLD, "/join")

    await upgrade(group)
    calls = len(telegram.calls)
    await group.send(join)
    table = await group.table()
    assert table.seat_of(late) is not None and table.chat_id == NEW
    assert calls_to(telegram, OLD, calls) == ["sendMessage"]  # the answer, refused there, went to the supergroup
    assert texts(telegram, NEW)[-2] == (
        "You joined the game in «Demo group».\nWhen the game starts, your role comes in our private chat."
    )


async def test_a_late_command_is_answered_in_the_groups_language(make_bot, telegram):
    """Someone whose own language the bot does not speak is answered in the group's; a command sent in
    the basic group that reaches the bot after the move finds the group's language in the supergroup."""
    application = await make_bot(1)
    group = SimulatedGroup(telegram, application, chat_id=OLD, players=4, basic=True)
    admin = group.user_ids[0]
    languages = await command(group, admin, "/language")
    await press(group, admin, languages, button_data(languages, ":ru"))
    visitor = 4242
    telegram.add_user(visitor, "Kurt", language_code="de")
    late = telegram.command(visitor, OLD, "/status")

    await upgrade(group)
    await group.send(late)
    late_answer = texts(telegram, NEW)[-1]
    assert late_answer == await command_text(group, visitor, "/status", chat_id=NEW)  # in Russian


async def test_a_running_game_goes_on_in_the_supergroup(make_bot, telegram):
    group = await started_in_basic_group(make_bot, telegram)
    await propose(group, (0, 1))
    on_old_board = group.latest_with_button(OLD, f"v:{group.game_id}:")
    left_behind, calls = bot_messages(telegram, OLD), len(telegram.calls)

    await upgrade(group)
    ann, bob = group.user_ids[:2]
    # A vote on the proposal's message, which stayed in the old chat, still counts.
    assert "You voted 👍 Approve" in await press(group, ann, on_old_board, button_data(on_old_board, ":a"))
    # /status posts the board in the new group, with its buttons; the rest vote there.
    board = await command(group, bob, "/status")
    assert board.chat_id == NEW and "Ann" in plain_text(board.text)
    assert "You voted 👍 Approve" in await press(group, bob, board, button_data(board, ":a"))
    await vote_all(group, True)
    assert (await group.table()).game.phase is Phase.MISSION

    table = await group.play(CleanTeams())
    assert table.game.is_over
    assert "The Resistance wins" in last_text(telegram, NEW)
    # The mission's result, which edits the proposal's message, went to the new group as a new message.
    assert any("Mission 1" in text and "succeeded" in text.lower() for text in texts(telegram, NEW))
    assert bot_messages(telegram, OLD) == left_behind
    assert calls_to(telegram, OLD, calls) == []
    assert "No game is running here" in await command_text(group, bob, "/status")


async def test_the_error_may_come_before_the_service_messages(make_bot, telegram):
    """A message for the old chat meets ChatMigrated before any worker saw a service message: it moves
    the group and goes to the new chat; the service messages that arrive later change nothing."""
    group = await started_in_basic_group(make_bot, telegram)
    await command(group, group.user_ids[0], "/language")  # the group's settings exist (its language)
    settings = await group.store.settings(OLD)
    to_old, from_new = await upgrade(group, deliver=())
    calls = len(telegram.calls)

    await propose(group, (0, 1))  # the leader's presses are private; the proposal goes to the group
    assert calls_to(telegram, OLD, calls) == ["sendMessage"]  # refused, then sent to the new chat
    table = await group.table()
    assert (table.chat_id, table.moved_from) == (NEW, OLD)
    assert group.latest_with_button(NEW, f"v:{group.game_id}:")
    assert await group.store.game_of_chat(NEW) == group.game_id
    assert await group.store.game_of_chat(OLD) is None
    assert await group.store.settings(NEW) == settings

    document = await group.store.redis.get(keys.game(group.game_id))
    calls = len(telegram.calls)
    for update in (to_old, from_new, to_old):
        await group.send(update)
    assert await group.store.redis.get(keys.game(group.game_id)) == document
    assert len(telegram.calls) == calls

    await vote_all(group, True)
    assert (await group.play(CleanTeams())).game.is_over


async def test_messages_queued_for_the_old_chat_are_delivered_to_the_new(make_bot, telegram):
    group = await started_in_basic_group(make_bot, telegram)
    service = group.application.bot_data["service"]
    # The board queued for the group and not yet sent (as if its worker died before it could).
    await group.store.update(group.game_id, lambda table: play.repost_board(table, service.bot_username))
    assert await group.store.redis.llen(keys.outbox(group.game_id)) == 2
    left_behind = bot_messages(telegram, OLD)

    await upgrade(group)
    calls = len(telegram.calls)
    await service.fire_due()  # every worker's clock delivers what waits
    assert await group.store.redis.llen(keys.outbox(group.game_id)) == 0
    board = telegram.messages(NEW)[-1]
    assert board.from_bot and "Mission 1" in plain_text(board.text)
    assert bot_messages(telegram, OLD) == left_behind
    # The old copy's buttons could not be taken away (refused, and no new copy needed for that);
    # the new copy went straight to the new chat.
    assert calls_to(telegram, OLD, calls) == ["editMessageText"]
    assert calls_to(telegram, NEW, calls) == ["sendMessage"]


async def test_a_migration_told_twice_to_two_workers_changes_things_once(make_bot, telegram):
    first = await make_bot(1)
    second = await make_bot(2)
    group = await started_in_basic_group(make_bot, telegram)
    revision = (await group.table()).revision
    calls = len(telegram.calls)

    to_old, from_new = group.upgrade_to_supergroup(NEW)
    both = [
        app.process_update(Update.de_json(update, app.bot))
        for app in (first, second)
        for update in (to_old, from_new, to_old)
    ]
    await asyncio.gather(*both)

    table = await group.table()
    assert (table.chat_id, table.moved_from, table.revision) == (NEW, OLD, revision + 1)
    assert len(telegram.calls) == calls  # moving sends nothing: the next message goes to the new group
    for application in (first, second):
        store = application.bot_data["store"]
        assert await store.game_of_chat(NEW) == group.game_id
        assert await store.game_of_chat(OLD) is None
    await propose(group, (0, 1))
    await vote_all(group, True)
    assert (await group.play(CleanTeams())).game.is_over


async def test_settings_language_and_the_last_record_follow_the_group(make_bot, telegram):
    group = await started_in_basic_group(make_bot, telegram)
    await group.play(RejectEverything())
    admin = group.user_ids[0]
    menu = await command(group, admin, "/settings")
    await press(group, admin, menu, next(b["callback_data"] for b in menu.buttons() if ":vt:" in b["callback_data"]))
    languages = await command(group, admin, "/language")
    await press(group, admin, languages, button_data(languages, ":es"))
    chosen = await group.store.settings(OLD)
    assert chosen.language == "es" and chosen.vote_seconds != GroupSettings().vote_seconds
    record = await group.store.last_record(OLD)

    await upgrade(group, deliver=("from",))  # only the one in the new group reached the bot
    assert await group.store.settings(NEW) == chosen
    assert await group.store.redis.get(keys.chat_settings(OLD)) is None
    assert await group.store.last_record(NEW) == record

    shown = await command(group, admin, "/settings")
    assert (shown.chat_id, shown.text) == (NEW, menus.settings_menu(NEW, chosen, "es")[0])
    await group.send(telegram.command(admin, NEW, "/record"))
    document = telegram.messages(NEW)[-1].document
    assert document is not None and json.loads(document.data)["id"] == json.loads(record)["id"]
    # The /settings keyboard left in the old chat changes the supergroup's settings; that message
    # cannot be edited any more, so the keyboard as it now reads is posted in the supergroup.
    left_behind = bot_messages(telegram, OLD)
    await press(group, admin, menu, next(b["callback_data"] for b in menu.buttons() if ":hi:" in b["callback_data"]))
    chosen = await group.store.settings(NEW)
    assert chosen.hints is False and await group.store.redis.get(keys.chat_settings(OLD)) is None
    reposted = telegram.messages(NEW)[-1]
    assert (reposted.text, reposted.from_bot) == (menus.settings_menu(NEW, chosen, "es")[0], True)
    assert bot_messages(telegram, OLD) == left_behind
    await press(group, admin, reposted, button_data(reposted, ":ok:0"))
    assert telegram.messages(NEW)[-1].message_id == reposted.message_id  # the new one edits itself
    assert not telegram.messages(NEW)[-1].buttons()
    await group.open_lobby_and_join()
    table = await group.table()
    assert table.chat_id == NEW and table.settings == chosen


async def test_a_move_cut_short_is_finished_by_whoever_reads_the_new_group(make_bot, telegram):
    """A worker claimed the new chat for the game and died before the game followed: the next command
    in the new group finds the game and moves it."""
    group = await started_in_basic_group(make_bot, telegram)
    group.upgrade_to_supergroup(NEW)  # neither service message arrives yet
    assert await group.store.indexes.claim_chat(NEW, group.game_id) is None

    board = await command(group, group.user_ids[0], "/status")
    assert board.chat_id == NEW and "Ann" in plain_text(board.text)
    table = await group.table()
    assert (table.chat_id, table.moved_from) == (NEW, OLD)
    assert await group.store.game_of_chat(OLD) is None


def test_the_chat_a_game_moved_from_is_part_of_its_document():
    table = Table(id="0123456789", chat_id=-1, chat_title="G", creator_id=1)
    moved = table.moved_to(-1, -1001)
    assert (moved.chat_id, moved.moved_from) == (-1001, -1)
    assert moved.moved_to(-1, -1001) == moved  # moved once, however often told
    assert moved.in_group(-1001) and moved.in_group(-1) and not moved.in_group(-2)
    assert Table.from_json(moved.to_json()) == moved
    # A document stored before groups could move reads as never moved.
    data = json.loads(table.to_json())
    del data["moved_from"]
    assert Table.from_json(json.dumps(data)).moved_from is None
    for broken in ("-1", True, -1001):
        data = json.loads(moved.to_json()) | {"moved_from": broken}
        with pytest.raises(TableFormatError):
            Table.from_json(json.dumps(data))


async def test_a_game_over_whose_last_messages_follow_the_group_is_still_forgotten_in_time(
    make_bot, telegram, short_timings
):
    """A game ends while Telegram cannot be reached; its last message, for the old chat, moves the game
    to the supergroup. Like any finished game it is kept a week, not for good."""
    group = await started_in_basic_group(make_bot, telegram)
    service = group.application.bot_data["service"]
    host = group.user_ids[0]
    question = await command(group, host, "/cancel")
    telegram.fail_next("editMessageText", status=0, description="Timed out", times=3)
    await press(group, host, question, f"x:{group.game_id}:y")
    # The board saying so waits, and the leader's keyboard closed behind it.
    assert await group.store.redis.llen(keys.outbox(group.game_id)) == 2
    redis = group.store.redis
    assert 0 < await redis.ttl(keys.game(group.game_id)) <= FINISHED_GAME_SECONDS

    await upgrade(group, deliver=())
    await service.fire_due()
    assert await redis.llen(keys.outbox(group.game_id)) == 0
    table = await group.store.load(group.game_id)
    assert table.chat_id == NEW and not table.is_active
    assert 0 < await redis.ttl(keys.game(group.game_id)) <= FINISHED_GAME_SECONDS


async def test_play_again_left_in_the_old_chat_opens_the_lobby_in_the_supergroup(make_bot, telegram):
    """A game ended in the basic group; after the upgrade a player presses its Play again, which stayed
    in the old chat: the new lobby is the supergroup's, with the group's settings."""
    group = await started_in_basic_group(make_bot, telegram)
    finished = await group.play(RejectEverything())
    assert finished.game.is_over
    over = group.latest_with_button(OLD, f"r:{finished.id}")
    admin = group.user_ids[0]
    menu = await command(group, admin, "/settings")
    await press(group, admin, menu, next(b["callback_data"] for b in menu.buttons() if ":hi:" in b["callback_data"]))
    chosen = await group.store.settings(OLD)
    assert chosen.hints is False

    await upgrade(group)
    assert await press(group, admin, over, f"r:{finished.id}") == "A new game is open with the same players."
    rematch_id = await group.store.game_of_chat(NEW)
    assert rematch_id is not None and rematch_id != finished.id
    rematch = await group.store.load(rematch_id)
    assert rematch.chat_id == NEW and rematch.settings == chosen
    assert await group.store.settings(NEW) == chosen
    assert await group.store.redis.get(keys.chat_settings(OLD)) is None
    assert await group.store.redis.get(keys.chat_game(OLD)) is None


async def test_an_edit_queued_for_the_old_chat_edits_the_copy_another_worker_posted_in_the_new(
    make_bot, telegram, short_timings
):
    """A lobby's message and an edit of it were both queued for the basic group. One worker met the
    upgrade and posted the message in the supergroup, then could not reach Telegram for the edit; the
    worker that delivers the edit later edits that copy rather than posting the lobby a second time."""
    first = await make_bot(1)
    second = await make_bot(2)
    group = SimulatedGroup(telegram, first, chat_id=OLD, players=3, basic=True)
    ann, bob = group.user_ids[:2]
    for user in (ann, bob):
        await group.send(telegram.command(user, user, "/start"))
    telegram.fail_next("sendMessage", status=0, description="Timed out", times=3)
    await group.send(telegram.command(ann, OLD, "/newgame"))  # the lobby's message waits in the outbox
    game_id = await group.store.game_of_chat(OLD)
    join = telegram.command(bob, OLD, "/join")

    group.upgrade_to_supergroup(NEW)  # no service message has reached a worker yet
    telegram.fail_next("editMessageText", status=0, description="Timed out", times=3)
    await group.send(join)  # sent before the upgrade: Bob sits down, and the lobby's message is to say so
    assert [m.text for m in telegram.messages(NEW) if m.from_bot and "Bob" in (m.text or "")] == []
    assert await group.store.redis.llen(keys.outbox(game_id)) == 1  # the edit waits

    await second.bot_data["service"].fire_due()
    assert await group.store.redis.llen(keys.outbox(game_id)) == 0
    lobbies = [m for m in telegram.messages(NEW) if m.from_bot and any("url" in b for b in m.buttons())]
    assert len(lobbies) == 1
    assert "Bob" in plain_text(lobbies[0].text) and lobbies[0].edits == 1
